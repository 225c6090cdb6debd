//===- LibraryEpilogue.cpp - epilogues cuBLASLt applies itself ------------===//
#include "compiler/schedule/LibraryEpilogue.h"

#include "compiler/cost/CostModel.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/schedule/GroupSchedule.h"
#include "compiler/schedule/StridedView.h"
#include "compiler/support/Float16.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace fusec {
namespace {

/// `v` as an elementwise op with result shape `shape` reads it (NumPy
/// broadcasting: stride 0 along the dims it is repeated over).
std::optional<StridedView> readAs(Value v, ArrayRef<int64_t> shape) {
  std::optional<StridedView> view = stridedView(v);
  if (!view || view->shape.size() > shape.size())
    return std::nullopt;
  StridedView out;
  out.offset = view->offset;
  out.shape.assign(shape.begin(), shape.end());
  out.strides.assign(shape.size(), 0);
  size_t lead = shape.size() - view->shape.size();
  for (size_t j = 0; j < view->shape.size(); ++j)
    out.strides[lead + j] = view->shape[j] == 1 ? 0 : view->strides[j];
  return out;
}

/// The 16-byte alignment cuBLASLt's plans assume for every pointer.
bool aligned(const StridedView &v, DType dt) { return v.offset * dtypeBytes(dt) % 16 == 0; }

/// Laid out as the result itself (row-major, dense): cuBLASLt's C.
bool sameLayoutAsResult(const StridedView &v) {
  int64_t expect = 1;
  for (int i = (int)v.shape.size() - 1; i >= 0; --i) {
    if (v.shape[i] != 1 && v.strides[i] != expect)
      return false;
    expect *= v.shape[i];
  }
  return true;
}

/// One dense vector along the last dim, repeated for every row and batch.
bool rowVector(const StridedView &v) {
  for (size_t i = 0; i + 1 < v.shape.size(); ++i)
    if (v.strides[i] != 0 && v.shape[i] != 1)
      return false;
  return !v.shape.empty() && (v.strides.back() == 1 || v.shape.back() == 1);
}

/// The constant's value in `dt`, rounded as a cast to that dtype would (the
/// reference and fusec's kernels see the rounded value; so must alpha).
std::optional<double> constantValue(Value v, DType dt) {
  auto c = dyn_cast_or_null<ConstantOp>(viewSource(v).getDefiningOp());
  if (!c)
    return std::nullopt;
  double value = c.getValue().convertToDouble();
  if (dt == DType::BF16)
    return bf16ToFloat(floatToBF16(static_cast<float>(value)));
  if (dt == DType::F16)
    return halfToFloat(doubleToHalf(value));
  return static_cast<float>(value);
}

/// Memory the library can read: not a constant or iota that exists only as
/// index math (those stay fusec's epilogue).
bool stored(Value v) {
  Operation *def = viewSource(v).getDefiningOp();
  return !def || !isGenerator(def);
}

} // namespace

std::string LibraryEpilogue::describe() const {
  std::string s;
  auto add = [&](const std::string &part) { s += (s.empty() ? "" : ", ") + part; };
  if (alpha != 1)
    add("alpha " + std::to_string(alpha));
  if (residual)
    add("residual as C");
  if (bias)
    add("bias");
  if (gelu)
    add("gelu");
  return s;
}

std::optional<LibraryEpilogue> matchLibraryEpilogue(Operation *matmul, ArrayRef<Operation *> epilogue,
                                                    std::string &why) {
  Value cur = matmul->getResult(0);
  DType dt = dtypeOf(cur);
  if (dt != DType::BF16 && dt != DType::F16 && dt != DType::F32) {
    why = "cuBLASLt takes f32, f16 or bf16";
    return std::nullopt;
  }
  ArrayRef<int64_t> shape = shapeOf(cur);
  LibraryEpilogue e;
  enum { Scale, Adds, Done } stage = Scale;
  auto fail = [&](std::string reason) {
    why = std::move(reason);
    return std::nullopt;
  };
  for (Operation *op : epilogue) {
    if (isView(op) || isGenerator(op))
      continue;  // the bias's broadcast, the scale's constant
    if (!llvm::is_contained(op->getOperands(), cur))
      return fail(nodeLabel(op) + " does not continue one chain from the product");
    if (!cur.hasOneUse())
      return fail("an intermediate of the epilogue is also used elsewhere");
    if (op->getNumResults() != 1 || dtypeOf(op->getResult(0)) != dt)
      return fail(nodeLabel(op) + " changes the dtype");
    Value other;
    for (Value v : op->getOperands())
      if (v != cur)
        other = v;
    if (isa<MulOp>(op)) {
      std::optional<double> c = other ? constantValue(other, dt) : std::nullopt;
      if (!c)
        return fail(nodeLabel(op) + ": cuBLASLt scales by a constant only");
      if (stage != Scale)
        return fail(nodeLabel(op) + ": cuBLASLt scales the product before any add");
      e.alpha *= *c;
    } else if (isa<AddOp>(op)) {
      if (stage == Done)
        return fail(nodeLabel(op) + ": cuBLASLt applies gelu last");
      stage = Adds;
      if (!other || !stored(other))
        return fail(nodeLabel(op) + ": cuBLASLt adds a residual or bias read from memory");
      std::optional<StridedView> v = readAs(other, shape);
      if (!v || !aligned(*v, dt))
        return fail(nodeLabel(op) + ": its operand is not a 16-byte aligned view");
      if (!e.residual && sameLayoutAsResult(*v))
        e.residual = other;
      else if (!e.bias && rowVector(*v))
        e.bias = other;
      else
        return fail(nodeLabel(op) + ": cuBLASLt adds one residual and one bias vector");
    } else if (auto g = dyn_cast<GeluOp>(op)) {
      if (g.getApproximate() != "tanh")
        return fail(nodeLabel(op) + ": cuBLASLt's GELU is the tanh form");
      if (stage == Done)
        return fail(nodeLabel(op) + ": one gelu only");
      stage = Done;
      e.gelu = true;
    } else {
      return fail(nodeLabel(op) + " is not an epilogue cuBLASLt applies");
    }
    cur = op->getResult(0);
  }
  if (cur == matmul->getResult(0))
    return fail("no epilogue");
  e.result = cur;
  return e;
}

} // namespace fusec
