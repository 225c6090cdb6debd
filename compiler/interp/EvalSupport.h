//===- EvalSupport.h - shared machinery of the interpreter's op families --===//
//
// Internal to compiler/interp. One strided walk serves every op that maps an
// output index to input offsets (broadcasting, transpose, slice, reductions,
// iota): each operand gets one stride per output dimension, 0 where it is
// broadcast, and the walk keeps a running offset per operand while a
// multi-index counts up, so no element pays for a division.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/interp/Interpreter.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>
#include <vector>

namespace fusec::interp {

using Shape = std::vector<int64_t>;
/// The input tensors of one op, in operand order (optional operands left out
/// are simply absent, as in the op's operand list).
using Operands = llvm::ArrayRef<const HostTensor *>;

//===----------------------------------------------------------------------===//
// Shapes and strides
//===----------------------------------------------------------------------===//

int64_t numElements(llvm::ArrayRef<int64_t> shape);
/// Row-major strides of `shape`, in elements.
Shape rowMajorStrides(llvm::ArrayRef<int64_t> shape);
/// Strides that read a tensor of shape `in` broadcast (NumPy, right-aligned)
/// to a result of rank `outRank`: 0 for added and size-1 dims.
Shape broadcastStrides(llvm::ArrayRef<int64_t> in, size_t outRank);

/// Calls `fn(i, offsets)` for each row-major index i in [begin, end) of
/// `shape`, where offsets[k] = base[k] + sum_d index_d * strides[k][d].
template <size_t N, typename Fn>
void forEachStrided(llvm::ArrayRef<int64_t> shape,
                    const std::array<const int64_t *, N> &strides,
                    std::array<int64_t, N> offsets, int64_t begin, int64_t end, Fn &&fn) {
  if (begin >= end)
    return;
  const size_t rank = shape.size();
  if (rank == 0) {
    fn(begin, offsets);
    return;
  }
  // The one division per call: the multi-index of `begin`.
  llvm::SmallVector<int64_t, 8> index(rank);
  int64_t rest = begin;
  for (size_t d = rank; d-- > 0;) {
    index[d] = rest % shape[d];
    rest /= shape[d];
    for (size_t k = 0; k < N; ++k)
      offsets[k] += index[d] * strides[k][d];
  }
  const size_t last = rank - 1;
  std::array<int64_t, N> innerStride;
  for (size_t k = 0; k < N; ++k)
    innerStride[k] = strides[k][last];
  for (int64_t i = begin;;) {
    int64_t run = std::min(shape[last] - index[last], end - i);
    std::array<int64_t, N> o = offsets;
    for (int64_t r = 0; r < run; ++r) {
      fn(i + r, o);
      for (size_t k = 0; k < N; ++k)
        o[k] += innerStride[k];
    }
    i += run;
    if (i >= end)
      return;
    // The row is done: rewind the last dim and carry into the ones before it.
    for (size_t k = 0; k < N; ++k)
      offsets[k] -= index[last] * innerStride[k];
    index[last] = 0;
    for (size_t d = last; d-- > 0;) {
      for (size_t k = 0; k < N; ++k)
        offsets[k] += strides[k][d];
      if (++index[d] < shape[d])
        break;
      for (size_t k = 0; k < N; ++k)
        offsets[k] -= index[d] * strides[k][d];
      index[d] = 0;
    }
  }
}

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

/// Runs fn(begin, end) over [0, n) in chunks of about `grain` items on up to
/// hardware_concurrency threads; small ranges run on the calling thread.
void parallelFor(int64_t n, int64_t grain, llvm::function_ref<void(int64_t, int64_t)> fn);

/// Items per task for elementwise-sized work.
inline constexpr int64_t kElementGrain = 1 << 16;

//===----------------------------------------------------------------------===//
// Loading and storing in a compute type (float, double or int64_t)
//===----------------------------------------------------------------------===//

/// Every element of `t` converted to T (floats exactly; bool as 0/1).
template <typename T> std::vector<T> loadAs(const HostTensor &t);
/// Stores values[i] into element i of `t` with HostTensor::set/setInt rules.
template <typename T> void storeAll(HostTensor &t, const T *values);

extern template std::vector<float> loadAs<float>(const HostTensor &);
extern template std::vector<double> loadAs<double>(const HostTensor &);
extern template std::vector<int64_t> loadAs<int64_t>(const HostTensor &);
extern template void storeAll<float>(HostTensor &, const float *);
extern template void storeAll<double>(HostTensor &, const double *);
extern template void storeAll<int64_t>(HostTensor &, const int64_t *);

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

/// A zero-filled tensor of the dtype and shape of `op`'s result `index`.
llvm::Expected<HostTensor> makeResult(mlir::Operation *op, unsigned index = 0);
/// An error that names the op: "fusec.matmul: <message>".
llvm::Error opError(mlir::Operation *op, const llvm::Twine &message);

/// C[M x N] = A[M x K] * B[K x N], all row-major with the given leading
/// dimensions, accumulating in T in k order. `parallel` spreads the work
/// over threads; callers that are already parallel pass false.
template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, const T *a, int64_t lda, const T *b,
          int64_t ldb, T *c, int64_t ldc, bool parallel);
extern template void gemm<float>(int64_t, int64_t, int64_t, const float *, int64_t,
                                 const float *, int64_t, float *, int64_t, bool);
extern template void gemm<double>(int64_t, int64_t, int64_t, const double *, int64_t,
                                  const double *, int64_t, double *, int64_t, bool);

/// Copies `rows` x `cols` (row-major, leading dimension `lds`) into dst as its
/// transpose (cols x rows, leading dimension `ldd`), in cache-sized tiles.
template <typename T>
void transposeMatrix(int64_t rows, int64_t cols, const T *src, int64_t lds, T *dst,
                     int64_t ldd) {
  constexpr int64_t kTile = 32;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (int64_t c0 = 0; c0 < cols; c0 += kTile)
      for (int64_t r = r0, re = std::min(rows, r0 + kTile); r < re; ++r)
        for (int64_t c = c0, ce = std::min(cols, c0 + kTile); c < ce; ++c)
          dst[c * ldd + r] = src[r * lds + c];
}

// Op families; each returns an error for an op it does not know.
llvm::Expected<HostTensor> evalElementwise(mlir::Operation *op, Operands in,
                                           const InterpOptions &opts);
llvm::Expected<HostTensor> evalReduction(mlir::Operation *op, Operands in,
                                         const InterpOptions &opts);
llvm::Expected<HostTensor> evalLayout(mlir::Operation *op, Operands in,
                                      const InterpOptions &opts);
llvm::Expected<HostTensor> evalMatmul(mlir::Operation *op, Operands in,
                                      const InterpOptions &opts);
llvm::Expected<HostTensor> evalComposite(mlir::Operation *op, Operands in,
                                         const InterpOptions &opts);
llvm::Expected<HostTensor> evalCollective(mlir::Operation *op, Operands in,
                                          const InterpOptions &opts);

} // namespace fusec::interp
