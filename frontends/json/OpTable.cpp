//===- OpTable.cpp - graph op name -> operand rules and IR builder --------===//
#include "frontends/json/OpTable.h"

#include <limits>

using namespace mlir;

namespace fusec::json {

//===----------------------------------------------------------------------===//
// NodeContext helpers
//===----------------------------------------------------------------------===//

int64_t NodeContext::intAttr(const char *key, int64_t dflt) const {
  const Json *v = attr(key);
  return v ? asInt(at, *v, field(key)) : dflt;
}
double NodeContext::numberAttr(const char *key, double dflt) const {
  const Json *v = attr(key);
  return v ? asNumber(at, *v, field(key)) : dflt;
}
bool NodeContext::boolAttr(const char *key, bool dflt) const {
  const Json *v = attr(key);
  return v ? asBool(at, *v, field(key)) : dflt;
}
const Json &NodeContext::requireAttr(const char *key) const {
  if (const Json *v = attr(key))
    return *v;
  at.fail(field(key), "missing required attribute");
}
int64_t NodeContext::axisAttr(const char *key, int64_t dflt) const {
  int64_t axis = intAttr(key, dflt), out = 0;
  check(shape::normalizeAxis(axis, shapeOf(in(0)).size(), out), field(key));
  return out;
}
void NodeContext::check(const std::string &err, const std::string &fieldName) const {
  if (!err.empty())
    at.fail(fieldName, err);
}

namespace {

Type elementTypeOf(Value v) { return cast<RankedTensorType>(v.getType()).getElementType(); }

shape::Shape shapeVec(Value v) { return shape::Shape(shapeOf(v).begin(), shapeOf(v).end()); }

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename OpT> Value unary(NodeContext &c) { return c.tb.unary<OpT>(c.in(0)); }

Value broadcastCheck(NodeContext &c) {
  std::vector<shape::Shape> shapes;
  for (Value v : c.operands)
    shapes.push_back(shapeVec(v));
  shape::Shape out;
  c.check(shape::broadcast(shapes, out));
  return {};
}

template <typename OpT> Value binary(NodeContext &c) {
  broadcastCheck(c);
  return c.tb.binary<OpT>(c.in(0), c.in(1));
}

template <typename OpT> Value compare(NodeContext &c) {
  broadcastCheck(c);
  return c.tb.compare<OpT>(c.in(0), c.in(1));
}

Value gelu(NodeContext &c) {
  std::string mode = "none";
  if (const Json *v = c.attr("approximate"))
    mode = asString(c.at, *v, c.field("approximate"));
  if (mode != "none" && mode != "tanh")
    c.at.fail(c.field("approximate"), "expected \"none\" or \"tanh\", got \"" + mode + "\"");
  OpBuilder &b = c.tb.builder();
  return b.create<GeluOp>(c.tb.location(), c.in(0).getType(), c.in(0), b.getStringAttr(mode));
}

Value castOp(NodeContext &c) {
  DType to = asDType(c.at, c.requireAttr("dtype"), c.field("dtype"));
  return c.tb.cast(c.in(0), toMlirType(to, c.tb.builder().getContext()));
}

Value where(NodeContext &c) {
  if (dtypeOf(c.in(0)) != DType::Bool)
    c.at.fail("inputs[0]", "condition '" + c.operandNames[0] + "' must be bool, got " +
                               std::string(dtypeName(dtypeOf(c.in(0)))));
  if (dtypeOf(c.in(1)) != dtypeOf(c.in(2)))
    c.at.fail("inputs", "dtype mismatch: '" + c.operandNames[1] + "' is " +
                            std::string(dtypeName(dtypeOf(c.in(1)))) + " but '" +
                            c.operandNames[2] + "' is " +
                            std::string(dtypeName(dtypeOf(c.in(2)))) + " (insert a cast)");
  broadcastCheck(c);
  return c.tb.where(c.in(0), c.in(1), c.in(2));
}

Value constant(NodeContext &c) {
  const Json &v = c.requireAttr("value");
  double value;
  if (v.is_boolean()) {
    value = v.get<bool>() ? 1.0 : 0.0;
  } else if (v.is_string()) {
    // JSON has no literals for these; masks need -inf.
    std::string s = v.get<std::string>();
    if (s == "inf" || s == "+inf")
      value = std::numeric_limits<double>::infinity();
    else if (s == "-inf")
      value = -std::numeric_limits<double>::infinity();
    else if (s == "nan")
      value = std::numeric_limits<double>::quiet_NaN();
    else
      c.at.fail(c.field("value"), "expected a number, a boolean, \"inf\", \"-inf\" or \"nan\", got \"" + s + "\"");
  } else {
    value = asNumber(c.at, v, c.field("value"));
  }
  DType dt = DType::F32;
  if (const Json *d = c.attr("dtype"))
    dt = asDType(c.at, *d, c.field("dtype"));
  else if (const Json *d = find(c.node, "dtype"))
    dt = asDType(c.at, *d, "dtype");
  std::vector<int64_t> s;
  if (const Json *sv = c.attr("shape"))
    s = asShape(c.at, *sv, c.field("shape"));
  else if (const Json *sv = find(c.node, "shape"))
    s = asShape(c.at, *sv, "shape");
  return c.tb.constant(value, toMlirType(dt, c.tb.builder().getContext()), s);
}

/// The index of the largest element along `axis` (default -1), i64.
Value argmaxOp(NodeContext &c) {
  int64_t axis = c.axisAttr("axis", -1);
  bool keep = c.boolAttr("keepdims", false);
  shape::Shape out;
  c.check(shape::reduce(shapeVec(c.in(0)), {axis}, keep, out), c.field("axis"));
  if (shapeVec(c.in(0))[size_t(axis)] == 0)
    c.at.fail(c.field("axis"), "argmax over an empty dim has no index");
  OpBuilder &b = c.tb.builder();
  auto type = RankedTensorType::get(out, b.getI64Type());
  return b.create<ArgMaxOp>(c.tb.location(), type, c.in(0), b.getI64IntegerAttr(axis),
                            b.getBoolAttr(keep));
}

/// The k largest elements along `axis` (default -1), descending, or their
/// indices (i64): one op per face (TopKOp).
template <bool Indices>
Value topkOp(NodeContext &c) {
  int64_t axis = c.axisAttr("axis", -1);
  int64_t k = asInt(c.at, c.requireAttr("k"), c.field("k"));
  shape::Shape out = shapeVec(c.in(0));
  const int64_t n = out[size_t(axis)];
  if (k < 1 || k > n)
    c.at.fail(c.field("k"), "k = " + std::to_string(k) + " must be in [1, " + std::to_string(n) +
                                "], the size of dim " + std::to_string(axis));
  if (k > kMaxTopK)
    c.at.fail(c.field("k"), "k = " + std::to_string(k) + " is more than the " +
                                std::to_string(kMaxTopK) +
                                " fusec's topk takes (it runs k rounds over the row)");
  out[size_t(axis)] = k;
  OpBuilder &b = c.tb.builder();
  Type elt = Indices ? b.getI64Type() : elementTypeOf(c.in(0));
  return b.create<TopKOp>(c.tb.location(), RankedTensorType::get(out, elt), c.in(0),
                          b.getI64IntegerAttr(k), b.getI64IntegerAttr(axis),
                          b.getBoolAttr(Indices));
}

/// Rows of data chosen by integer indices (an embedding lookup).
Value gatherOp(NodeContext &c) {
  DType it = dtypeOf(c.in(1));
  if (it != DType::I32 && it != DType::I64)
    c.at.fail("inputs[1]", std::string("gather takes i32 or i64 indices, got ") +
                               std::string(dtypeName(it)));
  shape::Shape out;
  c.check(shape::gather(shapeVec(c.in(0)), shapeVec(c.in(1)), c.intAttr("axis", 0), out),
          c.field("axis"));
  return c.tb.gather(c.in(0), c.in(1), c.intAttr("axis", 0));
}

/// Element (i_0, ..., i_n) holds i_dim: position ids, index masks.
Value iota(NodeContext &c) {
  std::vector<int64_t> s = asShape(c.at, c.requireAttr("shape"), c.field("shape"));
  int64_t dim = 0;
  c.check(shape::normalizeAxis(c.intAttr("dim", 0), static_cast<int64_t>(s.size()), dim),
          c.field("dim"));
  DType dt = DType::I64;
  if (const Json *d = c.attr("dtype"))
    dt = asDType(c.at, *d, c.field("dtype"));
  if (dt == DType::Bool)
    c.at.fail(c.field("dtype"), "an index is a number; bool is not");
  return c.tb.iota(dim, toMlirType(dt, c.tb.builder().getContext()), s);
}

//===----------------------------------------------------------------------===//
// Reductions and layout
//===----------------------------------------------------------------------===//

template <typename OpT> Value reduce(NodeContext &c) {
  std::vector<int64_t> axes;
  if (const Json *a = c.attr("axes"))
    axes = asIntList(c.at, *a, c.field("axes"), /*allowScalar=*/true);
  std::vector<int64_t> norm;
  c.check(shape::normalizeAxes(axes, shapeOf(c.in(0)).size(), norm), c.field("axes"));
  if (c.attr("axes") && axes.empty())
    c.at.fail(c.field("axes"), "empty list; leave 'axes' out to reduce over all axes");
  return c.tb.reduce<OpT>(c.in(0), norm, c.boolAttr("keepdims", false));
}

Value reshape(NodeContext &c) {
  std::vector<int64_t> target = asIntList(c.at, c.requireAttr("shape"), c.field("shape"));
  shape::Shape out;
  c.check(shape::reshape(shapeOf(c.in(0)), target, out), c.field("shape"));
  return c.tb.reshape(c.in(0), out);
}

Value transpose(NodeContext &c) {
  int64_t rank = shapeOf(c.in(0)).size();
  std::vector<int64_t> perm;
  if (const Json *p = c.attr("perm"))
    perm = asIntList(c.at, *p, c.field("perm"));
  else
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  for (int64_t &p : perm)
    if (p < 0 && p >= -rank)
      p += rank;
  shape::Shape out;
  c.check(shape::transpose(shapeOf(c.in(0)), perm, out), c.field("perm"));
  return c.tb.transpose(c.in(0), perm);
}

Value broadcastTo(NodeContext &c) {
  // -1 keeps the input's dim there (dims aligned from the right), as
  // PyTorch's expand: a dim that is a named size plus one stays expressible.
  std::vector<int64_t> target = asIntList(c.at, c.requireAttr("shape"), c.field("shape"));
  llvm::ArrayRef<int64_t> in = shapeOf(c.in(0));
  for (size_t d = 0; d < target.size(); ++d) {
    if (target[d] != -1)
      continue;
    int64_t from = int64_t(d) - int64_t(target.size() - in.size());
    if (from < 0)
      c.at.fail(c.field("shape"), "-1 at dim " + std::to_string(d) +
                                      " keeps the input's dim, and the input has none there");
    target[d] = in[size_t(from)];
  }
  if (std::string err = shape::checkDims(target); !err.empty())
    c.at.fail(c.field("shape"), err);
  c.check(shape::broadcastTo(shapeOf(c.in(0)), target), c.field("shape"));
  return c.tb.broadcastTo(c.in(0), target);
}

Value slice(NodeContext &c) {
  auto list = [&](const char *key, bool required) {
    const Json *v = required ? &c.requireAttr(key) : c.attr(key);
    return v ? asIntList(c.at, *v, c.field(key)) : std::vector<int64_t>{};
  };
  std::vector<int64_t> starts = list("starts", true), ends = list("ends", true),
                       axes = list("axes", false), steps = list("steps", false);
  shape::SliceSpec spec;
  std::string err = shape::normalizeSlice(shapeOf(c.in(0)), starts, ends, axes, steps, spec);
  // Name the list at fault (the rule's messages start with what they are about).
  llvm::StringRef msg(err);
  std::string field = msg.starts_with("step") ? "attrs.steps"
                      : msg.starts_with("axes") || msg.starts_with("axis") ? "attrs.axes"
                      : msg.contains("ends") ? "attrs.ends"
                                             : "attrs.starts";
  c.check(err, field);
  return c.tb.slice(c.in(0), spec);
}

Value concat(NodeContext &c) {
  std::vector<shape::Shape> shapes;
  for (Value v : c.operands)
    shapes.push_back(shapeVec(v));
  int64_t axis = c.axisAttr("axis", 0);
  shape::Shape out;
  c.check(shape::concat(shapes, axis, out));
  return c.tb.concat(c.operands, axis);
}

Value matmul(NodeContext &c) {
  shape::Shape out;
  c.check(shape::matmul(shapeOf(c.in(0)), shapeOf(c.in(1)), out));
  return c.tb.matmul(c.in(0), c.in(1));
}

//===----------------------------------------------------------------------===//
// Composites (shapes of the optional operands are checked by the verifiers)
//===----------------------------------------------------------------------===//

template <typename OpT> Value softmaxLike(NodeContext &c) {
  OpBuilder &b = c.tb.builder();
  int64_t axis = c.axisAttr("axis", -1);
  return b.create<OpT>(c.tb.location(), c.in(0).getType(), c.in(0), b.getI64IntegerAttr(axis));
}

Value optionalIn(NodeContext &c, size_t i) {
  return i < c.operands.size() ? c.operands[i] : Value();
}

/// An optional operand `i` must have exactly `expected` as its shape.
void expectOperandShape(NodeContext &c, size_t i, ArrayRef<int64_t> expected, const char *role) {
  Value v = optionalIn(c, i);
  if (!v || shapeOf(v) == expected)
    return;
  c.at.fail("inputs[" + std::to_string(i) + "]",
            std::string(role) + " '" + c.operandNames[i] + "' has shape " +
                shape::str(shapeOf(v)) + ", expected " + shape::str(expected));
}

Value layerNorm(NodeContext &c) {
  OpBuilder &b = c.tb.builder();
  int64_t axis = c.axisAttr("axis", -1);
  ArrayRef<int64_t> normalized = shapeOf(c.in(0)).drop_front(axis);
  expectOperandShape(c, 1, normalized, "weight (the normalized dims x.shape[axis:])");
  expectOperandShape(c, 2, normalized, "bias (the normalized dims x.shape[axis:])");
  double eps = c.numberAttr("eps", 1e-5);
  return b.create<LayerNormOp>(c.tb.location(), c.in(0).getType(), c.in(0), optionalIn(c, 1),
                               optionalIn(c, 2), b.getI64IntegerAttr(axis),
                               b.getF64FloatAttr(eps));
}

Value rmsNorm(NodeContext &c) {
  OpBuilder &b = c.tb.builder();
  if (shapeOf(c.in(0)).empty())
    c.at.fail("inputs[0]", "rms_norm needs an input of rank >= 1");
  double eps = c.numberAttr("eps", 1e-6);
  expectOperandShape(c, 1, shapeOf(c.in(0)).back(), "weight (the last dim of x)");
  return b.create<RmsNormOp>(c.tb.location(), c.in(0).getType(), c.in(0), optionalIn(c, 1),
                             b.getF64FloatAttr(eps));
}

Value linear(NodeContext &c) {
  ArrayRef<int64_t> x = shapeOf(c.in(0)), w = shapeOf(c.in(1));
  if (x.empty() || w.size() != 2 || w[1] != x.back())
    c.at.fail("inputs", "linear expects x [..., in] and weight [out, in], got x " +
                            shape::str(x) + " and weight " + shape::str(w));
  shape::Shape out(x.begin(), x.end());
  out.back() = w[0];
  expectOperandShape(c, 2, w[0], "bias ([out])");
  return c.tb.builder().create<LinearOp>(c.tb.location(),
                                         c.tb.tensorType(out, elementTypeOf(c.in(0))),
                                         c.in(0), c.in(1), optionalIn(c, 2));
}

Value attention(NodeContext &c) {
  DType q = dtypeOf(c.in(0));
  if (!isFloat(q))
    c.at.fail("inputs[0]", "query must be f32, f16 or bf16, got " + std::string(dtypeName(q)));
  for (int i = 1; i < 3; ++i)
    if (dtypeOf(c.in(i)) != q)
      c.at.fail("inputs[" + std::to_string(i) + "]",
                "dtype " + std::string(dtypeName(dtypeOf(c.in(i)))) + " differs from the query's " +
                    std::string(dtypeName(q)));
  Value mask = optionalIn(c, 3);
  if (mask && dtypeOf(mask) != DType::Bool && dtypeOf(mask) != q)
    c.at.fail("inputs[3]", "mask must be bool or " + std::string(dtypeName(q)));
  ArrayRef<int64_t> qs = shapeOf(c.in(0)), ks = shapeOf(c.in(1)), vs = shapeOf(c.in(2));
  if (qs.size() < 2 || ks.size() < 2 || vs.size() < 2 || qs.back() != ks.back() ||
      ks[ks.size() - 2] != vs[vs.size() - 2])
    c.at.fail("inputs", "attention expects q [..., L, E], k [..., S, E], v [..., S, Ev], got " +
                            shape::str(qs) + ", " + shape::str(ks) + ", " + shape::str(vs));
  shape::Shape batch;
  c.check(shape::broadcast({shape::Shape(qs.begin(), qs.end() - 2),
                            shape::Shape(ks.begin(), ks.end() - 2),
                            shape::Shape(vs.begin(), vs.end() - 2)},
                           batch));
  if (mask) {
    shape::Shape scores = batch;
    scores.push_back(qs[qs.size() - 2]);
    scores.push_back(ks[ks.size() - 2]);
    if (std::string err = shape::broadcastTo(shapeOf(mask), scores); !err.empty())
      c.at.fail("inputs[3]", "mask '" + c.operandNames[3] + "' must broadcast to the scores " +
                                 shape::str(scores) + ": " + err);
  }
  shape::Shape out = batch;
  out.push_back(qs[qs.size() - 2]);
  out.push_back(vs.back());
  OpBuilder &b = c.tb.builder();
  FloatAttr scale;
  if (c.attr("scale"))
    scale = b.getF64FloatAttr(c.numberAttr("scale", 0));
  return b.create<AttentionOp>(
      c.tb.location(), c.tb.tensorType(out, elementTypeOf(c.in(0))),
      c.in(0), c.in(1), c.in(2), mask, b.getBoolAttr(c.boolAttr("causal", false)), scale);
}

std::vector<OpSpec> buildTable() {
  using R = DTypeRule;
  std::vector<OpSpec> t = {
      {"neg", 1, 1, R::Numeric, {}, unary<NegOp>},
      {"abs", 1, 1, R::Numeric, {}, unary<AbsOp>},
      {"relu", 1, 1, R::Numeric, {}, unary<ReluOp>},
      {"exp", 1, 1, R::Float, {}, unary<ExpOp>},
      {"log", 1, 1, R::Float, {}, unary<LogOp>},
      {"sqrt", 1, 1, R::Float, {}, unary<SqrtOp>},
      {"rsqrt", 1, 1, R::Float, {}, unary<RsqrtOp>},
      {"reciprocal", 1, 1, R::Float, {}, unary<ReciprocalOp>},
      {"tanh", 1, 1, R::Float, {}, unary<TanhOp>},
      {"sigmoid", 1, 1, R::Float, {}, unary<SigmoidOp>},
      {"silu", 1, 1, R::Float, {}, unary<SiluOp>},
      {"sin", 1, 1, R::Float, {}, unary<SinOp>},
      {"cos", 1, 1, R::Float, {}, unary<CosOp>},
      {"erf", 1, 1, R::Float, {}, unary<ErfOp>},
      {"gelu", 1, 1, R::Float, {"approximate"}, gelu},
      {"cast", 1, 1, R::Any, {"dtype"}, castOp},
      {"add", 2, 2, R::Numeric, {}, binary<AddOp>},
      {"sub", 2, 2, R::Numeric, {}, binary<SubOp>},
      {"mul", 2, 2, R::Numeric, {}, binary<MulOp>},
      {"div", 2, 2, R::Numeric, {}, binary<DivOp>},
      {"pow", 2, 2, R::Float, {}, binary<PowOp>},
      {"maximum", 2, 2, R::Numeric, {}, binary<MaximumOp>},
      {"minimum", 2, 2, R::Numeric, {}, binary<MinimumOp>},
      {"eq", 2, 2, R::Any, {}, compare<EqOp>},
      {"ne", 2, 2, R::Any, {}, compare<NeOp>},
      {"lt", 2, 2, R::Any, {}, compare<LtOp>},
      {"le", 2, 2, R::Any, {}, compare<LeOp>},
      {"gt", 2, 2, R::Any, {}, compare<GtOp>},
      {"ge", 2, 2, R::Any, {}, compare<GeOp>},
      {"where", 3, 3, R::Custom, {}, where},
      {"constant", 0, 0, R::Any, {"value", "dtype", "shape"}, constant},
      {"iota", 0, 0, R::Any, {"shape", "dim", "dtype"}, iota},
      {"gather", 2, 2, R::Custom, {"axis"}, gatherOp},
      {"argmax", 1, 1, R::Numeric, {"axis", "keepdims"}, argmaxOp},
      {"topk", 1, 1, R::Numeric, {"k", "axis"}, topkOp<false>},
      {"topk_indices", 1, 1, R::Numeric, {"k", "axis"}, topkOp<true>},
      {"sum", 1, 1, R::Numeric, {"axes", "keepdims"}, reduce<SumOp>},
      {"mean", 1, 1, R::Float, {"axes", "keepdims"}, reduce<MeanOp>},
      {"max", 1, 1, R::Numeric, {"axes", "keepdims"}, reduce<MaxOp>},
      {"min", 1, 1, R::Numeric, {"axes", "keepdims"}, reduce<MinOp>},
      {"reshape", 1, 1, R::Any, {"shape"}, reshape},
      {"transpose", 1, 1, R::Any, {"perm"}, transpose},
      {"broadcast_to", 1, 1, R::Any, {"shape"}, broadcastTo},
      {"slice", 1, 1, R::Any, {"starts", "ends", "axes", "steps"}, slice},
      {"concat", 1, -1, R::Any, {"axis"}, concat},
      {"matmul", 2, 2, R::Float, {}, matmul},
      {"softmax", 1, 1, R::Float, {"axis"}, softmaxLike<SoftmaxOp>},
      {"log_softmax", 1, 1, R::Float, {"axis"}, softmaxLike<LogSoftmaxOp>},
      {"layer_norm", 1, 3, R::Float, {"axis", "eps"}, layerNorm},
      {"rms_norm", 1, 2, R::Float, {"eps"}, rmsNorm},
      {"linear", 2, 3, R::Float, {}, linear},
      {"scaled_dot_product_attention", 3, 4, R::Custom, {"causal", "scale"}, attention},
  };
  return t;
}

} // namespace

const std::vector<OpSpec> &opTable() {
  static const std::vector<OpSpec> table = buildTable();
  return table;
}

const OpSpec *lookupOp(const std::string &name) {
  for (const OpSpec &s : opTable())
    if (s.name == name)
      return &s;
  return nullptr;
}

std::vector<std::string> opNames() {
  std::vector<std::string> names;
  for (const OpSpec &s : opTable())
    names.push_back(s.name);
  return names;
}

} // namespace fusec::json
