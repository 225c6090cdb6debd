//===- ReductionEval.cpp - sum, mean, max, min ----------------------------===//
//
// The input's dims split into kept and reduced ones; an outer strided walk
// visits each result element through the kept dims and an inner walk visits
// the elements it reduces through the reduced dims. Floats accumulate in
// double and round once on store; integers accumulate in int64 (wrapping).
// Empty reductions give the identity: sum 0, mean NaN (0 / 0), max -inf and
// min +inf (for integers the dtype's min and max).
//
//===----------------------------------------------------------------------===//
#include "compiler/interp/EvalSupport.h"

#include "compiler/dialect/FusecDialect.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace fusec::interp {
namespace {

enum class ReduceKind { Sum, Mean, Max, Min };

/// Kept and reduced dims of the input, each with the input's strides.
struct ReduceLayout {
  Shape keptShape, keptStrides, reducedShape, reducedStrides;
  int64_t reducedCount = 1;
};

ReduceLayout splitAxes(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> axes) {
  Shape strides = rowMajorStrides(shape);
  ReduceLayout layout;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (llvm::is_contained(axes, static_cast<int64_t>(d))) {
      layout.reducedShape.push_back(shape[d]);
      layout.reducedStrides.push_back(strides[d]);
      layout.reducedCount *= shape[d];
    } else {
      layout.keptShape.push_back(shape[d]);
      layout.keptStrides.push_back(strides[d]);
    }
  }
  return layout;
}

/// out[o] = finish(fold(step, init, elements reduced into o)).
template <typename T, typename Step, typename Finish>
std::vector<T> reduceValues(const std::vector<T> &values, const ReduceLayout &layout, T init,
                            Step step, Finish finish) {
  const int64_t outCount = numElements(layout.keptShape);
  std::vector<T> out(static_cast<size_t>(outCount));
  std::array<const int64_t *, 1> kept{layout.keptStrides.data()};
  std::array<const int64_t *, 1> reduced{layout.reducedStrides.data()};
  int64_t grain = std::max<int64_t>(1, kElementGrain / std::max<int64_t>(1, layout.reducedCount));
  parallelFor(outCount, grain, [&](int64_t begin, int64_t end) {
    forEachStrided<1>(layout.keptShape, kept, {}, begin, end,
                      [&](int64_t o, const std::array<int64_t, 1> &base) {
                        T acc = init;
                        forEachStrided<1>(layout.reducedShape, reduced, base, 0,
                                          layout.reducedCount,
                                          [&](int64_t, const std::array<int64_t, 1> &at) {
                                            acc = step(acc, values[at[0]]);
                                          });
                        out[o] = finish(acc);
                      });
  });
  return out;
}

std::vector<double> reduceFloat(const HostTensor &x, const ReduceLayout &layout,
                                ReduceKind kind) {
  std::vector<double> values = loadAs<double>(x);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto identity = [](double a) { return a; };
  auto add = [](double a, double v) { return a + v; };
  // NaN wins: once the accumulator is NaN it stays NaN.
  auto max = [nan](double a, double v) {
    return std::isnan(a) || std::isnan(v) ? nan : std::max(a, v);
  };
  auto min = [nan](double a, double v) {
    return std::isnan(a) || std::isnan(v) ? nan : std::min(a, v);
  };
  switch (kind) {
  case ReduceKind::Sum: return reduceValues(values, layout, 0.0, add, identity);
  case ReduceKind::Mean: {
    double count = static_cast<double>(layout.reducedCount);
    return reduceValues(values, layout, 0.0, add, [count](double s) { return s / count; });
  }
  case ReduceKind::Max: return reduceValues(values, layout, -inf, max, identity);
  case ReduceKind::Min: return reduceValues(values, layout, inf, min, identity);
  }
  return {};
}

std::vector<int64_t> reduceInt(const HostTensor &x, const ReduceLayout &layout,
                               ReduceKind kind) {
  std::vector<int64_t> values = loadAs<int64_t>(x);
  bool i32 = x.dtype() == DType::I32;
  int64_t lowest = i32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
  int64_t highest = i32 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max();
  auto identity = [](int64_t a) { return a; };
  switch (kind) {
  case ReduceKind::Sum:
  case ReduceKind::Mean: // mean is float-only; the verifier rejects it here
    return reduceValues<int64_t>(
        values, layout, 0,
        [](int64_t a, int64_t v) { return static_cast<int64_t>(uint64_t(a) + uint64_t(v)); },
        identity);
  case ReduceKind::Max:
    return reduceValues<int64_t>(
        values, layout, lowest, [](int64_t a, int64_t v) { return std::max(a, v); }, identity);
  case ReduceKind::Min:
    return reduceValues<int64_t>(
        values, layout, highest, [](int64_t a, int64_t v) { return std::min(a, v); }, identity);
  }
  return {};
}

} // namespace

llvm::Expected<HostTensor> evalReduction(Operation *op, Operands in, const InterpOptions &) {
  ReduceKind kind;
  if (isa<SumOp>(op))
    kind = ReduceKind::Sum;
  else if (isa<MeanOp>(op))
    kind = ReduceKind::Mean;
  else if (isa<MaxOp>(op))
    kind = ReduceKind::Max;
  else if (isa<MinOp>(op))
    kind = ReduceKind::Min;
  else
    return opError(op, "not a reduction");

  auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
  if (!axes)
    return opError(op, "missing 'axes' attribute");
  llvm::Expected<HostTensor> out = makeResult(op);
  if (!out)
    return out.takeError();
  const HostTensor &x = *in[0];
  ReduceLayout layout = splitAxes(x.shape(), axes.asArrayRef());
  // keepdims only inserts 1s, so the result's row-major order is the kept dims'.
  if (numElements(layout.keptShape) != out->numel())
    return opError(op, "result shape does not match the reduced input shape");
  if (isFloat(x.dtype())) {
    std::vector<double> r = reduceFloat(x, layout, kind);
    storeAll<double>(*out, r.data());
  } else {
    std::vector<int64_t> r = reduceInt(x, layout, kind);
    storeAll<int64_t>(*out, r.data());
  }
  return out;
}

} // namespace fusec::interp
