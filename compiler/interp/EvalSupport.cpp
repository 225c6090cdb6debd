//===- EvalSupport.cpp - shared machinery of the interpreter's op families -===//
#include "compiler/interp/EvalSupport.h"

#include "compiler/dialect/FusecDialect.h"
#include "compiler/support/Float16.h"

#include <atomic>
#include <thread>

namespace fusec::interp {

int64_t numElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Shape rowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = s;
    s *= shape[d];
  }
  return strides;
}

Shape broadcastStrides(llvm::ArrayRef<int64_t> in, size_t outRank) {
  Shape own = rowMajorStrides(in);
  Shape strides(outRank, 0);
  size_t shift = outRank - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    strides[shift + d] = in[d] == 1 ? 0 : own[d];
  return strides;
}

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

/// Set on threads running a parallelFor body: nested loops then run serially
/// instead of multiplying the thread count.
static thread_local bool insideParallelFor = false;

void parallelFor(int64_t n, int64_t grain, llvm::function_ref<void(int64_t, int64_t)> fn) {
  if (n <= 0)
    return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t chunks = (n + grain - 1) / grain;
  const int64_t hw = std::max(1u, std::thread::hardware_concurrency());
  const int64_t workers = std::min(chunks, hw);
  if (workers <= 1 || insideParallelFor) {
    fn(0, n);
    return;
  }
  // Chunks are handed out one at a time, so uneven chunks balance themselves.
  std::atomic<int64_t> next{0};
  auto work = [&] {
    insideParallelFor = true;
    for (int64_t c; (c = next.fetch_add(1)) < chunks;)
      fn(c * grain, std::min(n, (c + 1) * grain));
    insideParallelFor = false;
  };
  std::vector<std::thread> threads;
  threads.reserve(workers - 1);
  for (int64_t w = 1; w < workers; ++w)
    threads.emplace_back(work);
  work();
  for (std::thread &t : threads)
    t.join();
}

//===----------------------------------------------------------------------===//
// Loading and storing
//===----------------------------------------------------------------------===//

namespace {

template <typename S> S loadRaw(const uint8_t *base, int64_t i) {
  S v;
  std::memcpy(&v, base + i * static_cast<int64_t>(sizeof(S)), sizeof v);
  return v;
}

template <typename S> void storeRaw(uint8_t *base, int64_t i, S v) {
  std::memcpy(base + i * static_cast<int64_t>(sizeof(S)), &v, sizeof v);
}

template <typename T> T loadOne(const HostTensor &t, int64_t i) {
  const uint8_t *p = t.data();
  switch (t.dtype()) {
  case DType::F32:
    if constexpr (std::is_integral_v<T>)
      return t.getInt(i);
    else
      return static_cast<T>(loadRaw<float>(p, i));
  case DType::F16:
    if constexpr (std::is_integral_v<T>)
      return t.getInt(i);
    else
      return static_cast<T>(halfToFloat(loadRaw<uint16_t>(p, i)));
  case DType::BF16:
    if constexpr (std::is_integral_v<T>)
      return t.getInt(i);
    else
      return static_cast<T>(bf16ToFloat(loadRaw<uint16_t>(p, i)));
  case DType::I32: return static_cast<T>(loadRaw<int32_t>(p, i));
  case DType::I64: return static_cast<T>(loadRaw<int64_t>(p, i));
  case DType::Bool: return static_cast<T>(p[i] != 0);
  }
  return T();
}

} // namespace

template <typename T> std::vector<T> loadAs(const HostTensor &t) {
  std::vector<T> out(static_cast<size_t>(t.numel()));
  // loadOne switches on a loop-invariant dtype: a perfectly predicted branch.
  parallelFor(t.numel(), kElementGrain * 4, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      out[i] = loadOne<T>(t, i);
  });
  return out;
}

template <typename T> void storeAll(HostTensor &t, const T *values) {
  uint8_t *p = t.data();
  DType dtype = t.dtype();
  parallelFor(t.numel(), kElementGrain * 4, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if constexpr (std::is_integral_v<T>) {
        t.setInt(i, values[i]);
      } else {
        // float -> double is exact, so each narrowing below rounds once.
        double v = values[i];
        switch (dtype) {
        case DType::F32: storeRaw(p, i, static_cast<float>(v)); break;
        case DType::F16: storeRaw(p, i, doubleToHalf(v)); break;
        case DType::BF16: storeRaw(p, i, doubleToBF16(v)); break;
        default: t.set(i, v); break;
        }
      }
    }
  });
}

template std::vector<float> loadAs<float>(const HostTensor &);
template std::vector<double> loadAs<double>(const HostTensor &);
template std::vector<int64_t> loadAs<int64_t>(const HostTensor &);
template void storeAll<float>(HostTensor &, const float *);
template void storeAll<double>(HostTensor &, const double *);
template void storeAll<int64_t>(HostTensor &, const int64_t *);

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

llvm::Error opError(mlir::Operation *op, const llvm::Twine &message) {
  return llvm::make_error<llvm::StringError>(op->getName().getStringRef() + ": " + message,
                                             llvm::inconvertibleErrorCode());
}

llvm::Expected<HostTensor> makeResult(mlir::Operation *op, unsigned index) {
  auto type = mlir::dyn_cast<mlir::RankedTensorType>(op->getResult(index).getType());
  if (!type || !type.hasStaticShape())
    return opError(op, "result is not a statically shaped tensor");
  std::optional<DType> dtype = toDType(type.getElementType());
  if (!dtype)
    return opError(op, "result element type is not one of f32, f16, bf16, i32, i64, i1");
  return HostTensor(*dtype, Shape(type.getShape().begin(), type.getShape().end()));
}

} // namespace fusec::interp
