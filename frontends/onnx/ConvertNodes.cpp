//===- ConvertNodes.cpp - ONNX operators as fusec graph nodes -------------===//
#include "frontends/onnx/Converter.h"

#include <algorithm>
#include <cmath>

namespace fusec::onnx_import {

void Converter::addNode(const onnx::NodeProto &n) {
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    failNode(n, "operators of domain '" + n.domain() + "' are not supported");
  current = &n;
  if (n.op_type() == "Split")
    return split(n);
  if (n.op_type() == "TopK")
    return topk(n);
  if (n.op_type() == "NegativeLogLikelihoodLoss" || n.op_type() == "SoftmaxCrossEntropyLoss")
    return crossEntropy(n);
  if (n.op_type() == "Dropout") {
    // Inference: the identity (a training-mode Dropout, or its mask, is not).
    allowAttrs(n, {"seed"});
    if (n.input_size() > 2 && !n.input(2).empty() && constInput(n, 2, "training_mode") != std::vector<int64_t>{0})
      failNode(n, "training_mode must be false: fusec runs inference");
    if (n.output_size() > 1 && !n.output(1).empty())
      failNode(n, "its mask output is not supported (inference has none)");
    if (n.input_size() < 1 || n.input(0).empty())
      failNode(n, "needs 1 input(s)");
    if (n.output_size() < 1 || n.output(0).empty())
      failNode(n, "needs 1 output");
    alias[n.output(0)] = resolve(n.input(0));
    return;
  }
  const bool foldable = !unfolded.count(&n);
  if (n.output_size() != 1)
    failNode(n, "only single-output operators are supported");
  const std::string out = n.output(0), &op = n.op_type();
  if (foldable && fold(n))
    return;
  std::vector<std::string> in(n.input().begin(), n.input().end());
  static const std::map<std::string, size_t> arity = {
      {"Where", 3}, {"MatMul", 2}, {"Gemm", 2}, {"Reshape", 2}, {"Max", 2}, {"Min", 2},
      {"Slice", 3}, {"Expand", 2}, {"Gather", 2}, {"GatherElements", 2}, {"Range", 3}, {"Conv", 2}};
  size_t needed = op == "Constant" ? 0 : arity.count(op) ? arity.at(op) : 1;
  if (in.size() < needed || (needed > 0 && in[0].empty()))
    failNode(n, "needs " + std::to_string(needed) + " input(s)");
  static const std::map<std::string, std::string> unary = {
      {"Neg", "neg"},   {"Abs", "abs"},   {"Relu", "relu"},         {"Exp", "exp"},
      {"Log", "log"},   {"Sqrt", "sqrt"}, {"Reciprocal", "reciprocal"}, {"Tanh", "tanh"},
      {"Sigmoid", "sigmoid"}, {"Sin", "sin"}, {"Cos", "cos"}, {"Erf", "erf"}};
  static const std::map<std::string, std::string> binary = {
      {"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"}, {"Div", "div"}, {"Pow", "pow"},
      {"Equal", "eq"}, {"Less", "lt"}, {"LessOrEqual", "le"}, {"Greater", "gt"},
      {"GreaterOrEqual", "ge"}};
  if (auto it = unary.find(op); it != unary.end()) {
    allowAttrs(n, {});
    return emit(out, it->second, {in.at(0)});
  }
  if (auto it = binary.find(op); it != binary.end()) {
    allowAttrs(n, {});
    if (in.size() < 2)
      failNode(n, "needs 2 inputs");
    return emit(out, it->second, {in.at(0), in.at(1)});
  }
  if ((op == "Max" || op == "Min") && in.size() == 2) {
    allowAttrs(n, {});
    return emit(out, op == "Max" ? "maximum" : "minimum", {in[0], in[1]});
  }
  if (op == "Identity") {
    alias[out] = resolve(in.at(0));
    return;
  }
  if (op == "Where") {
    allowAttrs(n, {});
    return emit(out, "where", {in.at(0), in.at(1), in.at(2)});
  }
  if (op == "Cast") {
    allowAttrs(n, {"to", "saturate"});
    std::optional<std::string> dt = dtypeName(static_cast<int>(intAttr(n, "to", 0)));
    if (!dt)
      failNode(n, "casts to an element type fusec does not have");
    return emit(out, "cast", {in.at(0)}, {{"dtype", *dt}});
  }
  if (op == "MatMul") {
    allowAttrs(n, {});
    return emit(out, "matmul", {in.at(0), in.at(1)});
  }
  if (op == "Gemm") {
    allowAttrs(n, {"alpha", "beta", "transA", "transB"});
    std::string a = in.at(0), b = in.at(1);
    if (intAttr(n, "transA", 0)) {
      emit(fresh(out, "a_t"), "transpose", {a}, {{"perm", {1, 0}}});
      a = fresh(out, "a_t");
    }
    if (intAttr(n, "transB", 0)) {
      emit(fresh(out, "b_t"), "transpose", {b}, {{"perm", {1, 0}}});
      b = fresh(out, "b_t");
    }
    double alpha = floatAttr(n, "alpha", 1), beta = floatAttr(n, "beta", 1);
    bool bias = in.size() > 2 && !in[2].empty();
    std::string product = alpha != 1 || bias ? fresh(out, "product") : out;
    emit(product, "matmul", {a, b});
    std::string scaled = product;
    if (alpha != 1) {
      emit(fresh(out, "alpha"), "constant", {}, {{"value", alpha}});
      scaled = bias ? fresh(out, "scaled") : out;
      emit(scaled, "mul", {product, fresh(out, "alpha")});
    }
    if (!bias)
      return;
    std::string c = in[2];
    if (beta != 1) {
      emit(fresh(out, "beta"), "constant", {}, {{"value", beta}});
      emit(fresh(out, "c_scaled"), "mul", {c, fresh(out, "beta")});
      c = fresh(out, "c_scaled");
    }
    return emit(out, "add", {scaled, c});
  }
  if (op == "Softmax" || op == "LogSoftmax") {
    allowAttrs(n, {"axis"});
    if (opset < 13)
      failNode(n, "is the opset < 13 form (flattening from `axis`); export with opset 13 or newer");
    return emit(out, op == "Softmax" ? "softmax" : "log_softmax", {in.at(0)},
                {{"axis", intAttr(n, "axis", -1)}});
  }
  if (op == "Transpose") {
    allowAttrs(n, {"perm"});
    Json attrs = Json::object();
    if (auto perm = intsAttr(n, "perm"))
      attrs["perm"] = *perm;
    return emit(out, "transpose", {in.at(0)}, attrs);
  }
  if (op == "Reshape") {
    allowAttrs(n, {"allowzero"});
    std::vector<int64_t> shape = constInput(n, 1, "shape");
    if (!intAttr(n, "allowzero", 0) && std::find(shape.begin(), shape.end(), 0) != shape.end()) {
      std::string error;
      std::optional<shape::Shape> s =
          onnx_import::reshapeTarget(knownShape(n, in[0]), shape, false, error);
      if (!s)
        failNode(n, error);
      shape = *s;
    }
    return emit(out, "reshape", {in.at(0)}, {{"shape", shape}});
  }
  if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin" ||
      op == "ReduceLogSumExp") {
    allowAttrs(n, {"axes", "keepdims", "noop_with_empty_axes"});
    std::optional<std::vector<int64_t>> axes = intsAttr(n, "axes");
    if (!axes && in.size() > 1 && !in[1].empty())
      axes = constInput(n, 1, "axes");
    if (intAttr(n, "noop_with_empty_axes", 0) && (!axes || axes->empty()))
      failNode(n, "noop_with_empty_axes is not supported");
    Json attrs = {{"keepdims", intAttr(n, "keepdims", 1) != 0}};
    if (axes && !axes->empty())
      attrs["axes"] = *axes;
    if (op == "ReduceLogSumExp") {
      // log(sum(exp(x - m))) + m with m = max(x): the max kept as 1 along the
      // axes, which the streamed row statistics take (RowStatsForm.h), and
      // a reshape dropping them where keepdims is 0.
      const bool keep = attrs["keepdims"].get<bool>();
      Json kept = attrs;
      kept["keepdims"] = true;
      emit(fresh(out, "max"), "max", {in.at(0)}, kept);
      emit(fresh(out, "shifted"), "sub", {in.at(0), fresh(out, "max")});
      emit(fresh(out, "exp"), "exp", {fresh(out, "shifted")});
      emit(fresh(out, "sum"), "sum", {fresh(out, "exp")}, kept);
      emit(fresh(out, "log"), "log", {fresh(out, "sum")});
      const std::string lse = keep ? out : fresh(out, "kept");
      emit(lse, "add", {fresh(out, "log"), fresh(out, "max")});
      if (keep)
        return;
      std::vector<int64_t> x = knownShape(n, in.at(0)), dims;
      const int64_t rank = static_cast<int64_t>(x.size());
      std::vector<bool> reduced(x.size(), !axes || axes->empty());
      for (int64_t a : axes ? *axes : std::vector<int64_t>{}) {
        if (a < -rank || a >= rank)
          failNode(n, "axis " + std::to_string(a) + " is out of range for rank " +
                          std::to_string(rank));
        reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
      }
      for (size_t d = 0; d < x.size(); ++d)
        if (!reduced[d])
          dims.push_back(x[d]);
      return emit(out, "reshape", {lse}, {{"shape", dims}});
    }
    std::string name = op == "ReduceMean" ? "mean"
                       : op == "ReduceSum" ? "sum"
                       : op == "ReduceMax" ? "max"
                                           : "min";
    return emit(out, name, {in.at(0)}, attrs);
  }
  if (op == "LayerNormalization") {
    allowAttrs(n, {"axis", "epsilon", "stash_type"});
    std::vector<std::string> ins = {in.at(0), in.size() > 1 ? in[1] : "",
                                    in.size() > 2 ? in[2] : ""};
    return emit(out, "layer_norm", ins,
                {{"axis", intAttr(n, "axis", -1)}, {"eps", floatAttr(n, "epsilon", 1e-5)}});
  }
  if (op == "Gelu") {
    allowAttrs(n, {"approximate"});
    const onnx::AttributeProto *a = attr(n, "approximate");
    std::string approximate = a ? a->s() : "none";
    if (approximate != "none" && approximate != "tanh")
      failNode(n, "approximate '" + approximate + "' is neither none nor tanh");
    return emit(out, "gelu", {in[0]}, {{"approximate", approximate}});
  }
  if (op == "Slice") {
    allowAttrs(n, {});
    Json attrs = {{"starts", constInput(n, 1, "starts")}, {"ends", constInput(n, 2, "ends")}};
    if (in.size() > 3 && !in[3].empty())
      attrs["axes"] = constInput(n, 3, "axes");
    if (in.size() > 4 && !in[4].empty())
      attrs["steps"] = constInput(n, 4, "steps");
    return emit(out, "slice", {in[0]}, attrs);
  }
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Flatten")
    return emit(out, "reshape", {in[0]}, {{"shape", layoutTarget(n)}});
  if (op == "Concat") {
    allowAttrs(n, {"axis"});
    if (!attr(n, "axis"))
      failNode(n, "needs its axis attribute");
    return emit(out, "concat", in, {{"axis", intAttr(n, "axis", 0)}});
  }
  if (op == "Constant") {
    allowAttrs(n, {"value"});
    const onnx::AttributeProto *v = attr(n, "value");
    if (!v || !v->has_t())
      failNode(n, "only the `value` tensor form is supported");
    onnx::TensorProto t = v->t();
    t.set_name(out);
    if (elementCount(t) == 1) {
      addInitializer(t);
      return;
    }
    std::optional<std::string> dt = dtypeName(t.data_type());
    std::optional<Known> k = dt ? knownOf(t, *dt) : std::nullopt;
    if (!k)
      failNode(n, "a constant tensor of this element type or size is not supported");
    known[out] = *k;
    shapes[out] = k->shape;
    return;
  }
  if (op == "Conv") {
    // A patch embedding (ViT): kernel = stride, no padding, dilation 1, one
    // group. The image's patches are rows of a matrix, the kernel's filters
    // its columns: reshape, transpose and one product, then Conv's layout.
    allowAttrs(n, {"kernel_shape", "strides", "pads", "dilations", "group", "auto_pad"});
    std::vector<int64_t> xs = knownShape(n, in[0]), ws = knownShape(n, in.at(1));
    if (xs.size() != 4 || ws.size() != 4)
      failNode(n, "only 2-D convolutions (NCHW) are supported");
    const int64_t B = xs[0], C = xs[1], H = xs[2], W = xs[3], E = ws[0], P = ws[2], Q = ws[3];
    auto ints = [&](const char *name, std::vector<int64_t> dflt) {
      std::optional<std::vector<int64_t>> v = intsAttr(n, name);
      return v ? *v : dflt;
    };
    const onnx::AttributeProto *pad = attr(n, "auto_pad");
    if (ints("strides", {1, 1}) != std::vector<int64_t>{P, Q} ||
        ints("dilations", {1, 1}) != std::vector<int64_t>{1, 1} ||
        ints("pads", {0, 0, 0, 0}) != std::vector<int64_t>{0, 0, 0, 0} ||
        intAttr(n, "group", 1) != 1 || (pad && pad->s() != "NOTSET" && pad->s() != "VALID") ||
        ws[1] != C || H % P != 0 || W % Q != 0)
      failNode(n, "only patch embeddings are supported: kernel equal to the stride, no "
                  "padding or dilation, one group, the image a whole number of patches");
    const int64_t Hp = H / P, Wp = W / Q;
    emit(fresh(out, "grid"), "reshape", {in[0]}, {{"shape", {B, C, Hp, P, Wp, Q}}});
    emit(fresh(out, "patches"), "transpose", {fresh(out, "grid")}, {{"perm", {0, 2, 4, 1, 3, 5}}});
    emit(fresh(out, "rows"), "reshape", {fresh(out, "patches")}, {{"shape", {B * Hp * Wp, C * P * Q}}});
    emit(fresh(out, "filters"), "reshape", {in[1]}, {{"shape", {E, C * P * Q}}});
    emit(fresh(out, "filters_t"), "transpose", {fresh(out, "filters")}, {{"perm", {1, 0}}});
    emit(fresh(out, "embedded"), "matmul", {fresh(out, "rows"), fresh(out, "filters_t")});
    std::string v = fresh(out, "embedded");
    if (in.size() > 2 && !in[2].empty()) {
      emit(fresh(out, "biased"), "add", {v, in[2]});
      v = fresh(out, "biased");
    }
    emit(fresh(out, "tokens"), "reshape", {v}, {{"shape", {B, Hp, Wp, E}}});
    return emit(out, "transpose", {fresh(out, "tokens")}, {{"perm", {0, 3, 1, 2}}});
  }
  if (op == "ArgMax") {
    allowAttrs(n, {"axis", "keepdims", "select_last_index"});
    if (intAttr(n, "select_last_index", 0))
      failNode(n, "select_last_index = 1 is not supported (fusec gives the first index)");
    return emit(out, "argmax", {in[0]},
                {{"axis", intAttr(n, "axis", 0)}, {"keepdims", intAttr(n, "keepdims", 1) != 0}});
  }
  if (op == "Not" || op == "And" || op == "Or") {
    // Logic on bool tensors as fusec's compare and select.
    allowAttrs(n, {});
    if (in.size() < (op == "Not" ? 1u : 2u))
      failNode(n, "needs " + std::string(op == "Not" ? "1" : "2") + " input(s)");
    const bool value = op == "Or";
    emit(fresh(out, value ? "true" : "false"), "constant", {},
         {{"value", value}, {"dtype", "bool"}});
    const std::string c = fresh(out, value ? "true" : "false");
    if (op == "Not")
      return emit(out, "eq", {in[0], c});
    return op == "And" ? emit(out, "where", {in[0], in[1], c}) : emit(out, "where", {in[0], c, in[1]});
  }
  if (op == "Clip") {
    allowAttrs(n, {});
    std::string v = in[0];
    const bool low = in.size() > 1 && !in[1].empty(), high = in.size() > 2 && !in[2].empty();
    if (low && high)
      emit(fresh(out, "low"), "maximum", {v, in[1]}), v = fresh(out, "low");
    else if (low)
      return emit(out, "maximum", {v, in[1]});
    if (high)
      return emit(out, "minimum", {v, in[2]});
    alias[out] = resolve(v);
    return;
  }
  if (op == "Expand") {
    allowAttrs(n, {});
    shape::Shape target;
    std::vector<int64_t> to = constInput(n, 1, "shape");
    if (std::string e = shape::broadcast({knownShape(n, in[0]), to}, target); !e.empty())
      failNode(n, e);
    return emit(out, "broadcast_to", {in[0]}, {{"shape", target}});
  }
  if (op == "Trilu") {
    // Keeps x where j - i >= k (upper) or j - i <= k (lower) over its last
    // two dims (rows i, columns j), else 0: index masks, nothing stored.
    allowAttrs(n, {"upper"});
    std::vector<int64_t> s = knownShape(n, in[0]);
    if (s.size() < 2)
      failNode(n, "takes a matrix or a batch of them");
    int64_t k = 0;
    if (in.size() > 1 && !in[1].empty()) {
      std::vector<int64_t> kv = constInput(n, 1, "k");
      if (kv.size() != 1)
        failNode(n, "takes one k");
      k = kv[0];
    }
    std::vector<int64_t> mask(s.end() - 2, s.end());
    emit(fresh(out, "rows"), "iota", {}, {{"shape", mask}, {"dim", 0}});
    emit(fresh(out, "cols"), "iota", {}, {{"shape", mask}, {"dim", 1}});
    emit(fresh(out, "diag"), "sub", {fresh(out, "cols"), fresh(out, "rows")});
    emit(fresh(out, "k"), "constant", {}, {{"value", k}, {"dtype", "i64"}});
    emit(fresh(out, "keep"), intAttr(n, "upper", 1) ? "ge" : "le", {fresh(out, "diag"), fresh(out, "k")});
    materialize(in[0]);
    emit(fresh(out, "zero"), "constant", {}, {{"value", 0}, {"dtype", dtypeOf(in[0])}});
    return emit(out, "where", {fresh(out, "keep"), in[0], fresh(out, "zero")});
  }
  if (op == "Gather") {
    allowAttrs(n, {"axis"});
    if (const Known *idx = knownValue(in[1])) {
      // A slice first: 0..S-1 of a table of S rows reads as it does of a
      // longer table, so a graph read at two sizes (--max) keeps its ops.
      if (sliceable(n, *idx))
        return gatherKnownRows(n, *idx);
      if (enumeratesRows(n, *idx))
        return gatherEveryRow(n, *idx);
    }
    // Indices known only when the model runs (token ids): an embedding lookup.
    return emit(out, "gather", {in[0], in[1]}, {{"axis", intAttr(n, "axis", 0)}});
  }
  if (op == "GatherElements")
    return gatherElements(n);
  if (op == "Range")
    failNode(n, "takes start, limit and delta known at import only");
  failNode(n, "this operator is not supported");
}

void Converter::split(const onnx::NodeProto &n) {
  allowAttrs(n, {"axis", "num_outputs"});
  if (n.input_size() < 1 || n.input(0).empty())
    failNode(n, "needs 1 input(s)");
  std::vector<int64_t> s = knownShape(n, n.input(0));
  int64_t axis = 0;
  if (std::string e = shape::normalizeAxis(intAttr(n, "axis", 0),
                                           static_cast<int64_t>(s.size()), axis);
      !e.empty())
    failNode(n, e);
  const int64_t dim = s[size_t(axis)], parts = n.output_size();
  std::vector<int64_t> sizes;
  if (n.input_size() > 1 && !n.input(1).empty()) {
    sizes = constInput(n, 1, "split");
  } else {
    int64_t count = attr(n, "num_outputs") ? intAttr(n, "num_outputs", parts) : parts;
    if (count != parts || count <= 0)
      failNode(n, "num_outputs " + std::to_string(count) + " is not its " +
                      std::to_string(parts) + " outputs");
    const int64_t each = (dim + count - 1) / count;
    for (int64_t p = 0, left = dim; p < count; ++p, left -= each)
      sizes.push_back(std::max<int64_t>(0, std::min(each, left)));
  }
  // Sizes that cover the dim exactly, each checked before it is added (a
  // huge size would overflow the sum).
  bool covers = static_cast<int64_t>(sizes.size()) == parts;
  int64_t total = 0;
  for (int64_t z : sizes) {
    if (z < 0 || z > dim - total) {
      covers = false;
      break;
    }
    total += z;
  }
  if (!covers || total != dim)
    failNode(n, "its split sizes do not cover dim " + std::to_string(axis) + " of " +
                    std::to_string(dim) + " in " + std::to_string(parts) + " outputs");
  const Known *k = knownValue(n.input(0));
  for (int64_t p = 0, at = 0; p < parts; at += sizes[size_t(p)], ++p) {
    const std::string &out = n.output(static_cast<int>(p));
    if (out.empty())
      continue;  // an output the model leaves out
    std::string error;
    if (k) {
      std::optional<Known> part =
          onnx_import::foldSlice(*k, {at}, {at + sizes[size_t(p)]}, {axis}, {1}, error);
      if (!part)
        failNode(n, error.empty() ? "its known input is too large to split at import" : error);
      setKnown(out, *part);
      continue;
    }
    emit(out, "slice", {n.input(0)},
         {{"starts", {at}}, {"ends", {at + sizes[size_t(p)]}}, {"axes", {axis}}});
  }
}

bool Converter::sliceable(const onnx::NodeProto &n, const Known &idx) {
  std::optional<std::vector<int64_t>> v = idx.ints();
  std::optional<shape::Shape> s = shapeOf(n.input(0));
  int64_t axis = 0;
  if (!v || v->empty() || !s ||
      !shape::normalizeAxis(intAttr(n, "axis", 0), static_cast<int64_t>(s->size()), axis).empty())
    return false;
  const int64_t size = (*s)[size_t(axis)];
  auto [lo, hi] = std::minmax_element(v->begin(), v->end());
  if (!((*lo >= 0 && *hi < size) || (*lo >= -size && *hi < 0)))
    return false;
  std::optional<onnx_import::Progression> p = onnx_import::progressionOf(idx);
  return idx.fill() || idx.numel() == 1 || (p && p->step > 0);
}

bool Converter::enumeratesRows(const onnx::NodeProto &n, const Known &idx) {
  std::optional<std::vector<int64_t>> v = idx.ints();
  std::optional<shape::Shape> s = shapeOf(n.input(0));
  int64_t axis = 0;
  if (!v || v->size() < 2 || !s ||
      !shape::normalizeAxis(intAttr(n, "axis", 0), static_cast<int64_t>(s->size()), axis).empty() ||
      static_cast<int64_t>(v->size()) != (*s)[size_t(axis)])
    return false;
  // Negative indices count from the end (ONNX): -size is row 0.
  const int64_t size = (*s)[size_t(axis)];
  for (size_t i = 0; i < v->size(); ++i)
    if ((*v)[i] != static_cast<int64_t>(i) && (*v)[i] != static_cast<int64_t>(i) - size)
      return false;
  return true;
}

void Converter::gatherEveryRow(const onnx::NodeProto &n, const Known &idx) {
  // Indices 0, 1, ..., size - 1 in row-major order (a flattened batch
  // and sequence indexed by b * S + j, as exporters write a mask's
  // gather): every row once, in order, so the result is the data with the
  // gathered dim reshaped into the indices' shape. As a reshape, the index
  // arithmetic (which changes with the sizes) leaves the graph.
  std::vector<int64_t> s = knownShape(n, n.input(0));
  int64_t axis = 0;
  if (std::string e = shape::normalizeAxis(intAttr(n, "axis", 0), static_cast<int64_t>(s.size()), axis);
      !e.empty())
    failNode(n, e);
  std::vector<int64_t> shape(s.begin(), s.begin() + axis);
  shape.insert(shape.end(), idx.shape.begin(), idx.shape.end());
  shape.insert(shape.end(), s.begin() + axis + 1, s.end());
  emit(n.output(0), "reshape", {n.input(0)}, {{"shape", shape}});
}

void Converter::gatherKnownRows(const onnx::NodeProto &n, const Known &idx) {
  const std::string out = n.output(0), data = n.input(0);
  std::vector<int64_t> s = knownShape(n, data);
  const int64_t rank = static_cast<int64_t>(s.size());
  int64_t axis = 0;
  if (std::string e = shape::normalizeAxis(intAttr(n, "axis", 0), rank, axis); !e.empty())
    failNode(n, e);
  const int64_t size = s[size_t(axis)];
  std::optional<std::vector<int64_t>> values = idx.ints();
  if (!values || values->empty())
    failNode(n, "gathers with indices that are not integers, or none");
  auto norm = [&](int64_t i) {
    if (i < -size || i >= size)
      failNode(n, "gathers index " + std::to_string(i) + " of a dim of " + std::to_string(size));
    return i < 0 ? i + size : i;
  };
  int64_t start = norm(values->front()), step = 1, count = 1, dim = -1;
  if (!idx.fill() && idx.numel() > 1) {
    std::optional<onnx_import::Progression> p = onnx_import::progressionOf(idx);
    if (!p || p->step <= 0 ||
        norm(int64_t(p->start + p->step * double(idx.shape[size_t(p->dim)] - 1))) < start)
      failNode(n, "internal error: a slice of indices that are not evenly spaced and "
                  "increasing");
    step = int64_t(p->step);
    dim = p->dim;
    count = idx.shape[size_t(dim)];
  }
  emit(fresh(out, "rows"), "slice", {data},
       {{"starts", {start}}, {"ends", {start + step * (count - 1) + 1}}, {"axes", {axis}},
        {"steps", {step}}});
  // data[:axis] + indices' shape (the counted dim, 1s elsewhere) + data[axis+1:]
  std::vector<int64_t> placed(s.begin(), s.begin() + axis), full = placed;
  for (size_t d = 0; d < idx.shape.size(); ++d) {
    placed.push_back(int64_t(d) == dim ? count : 1);
    full.push_back(idx.shape[d]);
  }
  placed.insert(placed.end(), s.begin() + axis + 1, s.end());
  full.insert(full.end(), s.begin() + axis + 1, s.end());
  emit(placed == full ? out : fresh(out, "placed"), "reshape", {fresh(out, "rows")},
       {{"shape", placed}});
  if (placed != full)
    emit(out, "broadcast_to", {fresh(out, "placed")}, {{"shape", full}});
}

std::vector<int64_t> Converter::layoutTarget(const onnx::NodeProto &n) {
  const std::string &op = n.op_type();
  std::vector<std::string> in(n.input().begin(), n.input().end());
  if (op == "Unsqueeze" || op == "Squeeze") {
    allowAttrs(n, {"axes"});
    std::vector<int64_t> shape = knownShape(n, in[0]);
    std::optional<std::vector<int64_t>> axes = intsAttr(n, "axes");
    if (!axes && in.size() > 1 && !in[1].empty())
      axes = constInput(n, 1, "axes");
    const bool unsqueeze = op == "Unsqueeze";
    if (unsqueeze && !axes)
      failNode(n, "needs its axes");
    int64_t rank = static_cast<int64_t>(shape.size()) +
                   (unsqueeze ? static_cast<int64_t>(axes->size()) : 0);
    std::set<int64_t> at;
    for (int64_t a : axes.value_or(std::vector<int64_t>{})) {
      int64_t norm = a < 0 ? a + rank : a;
      if (norm < 0 || norm >= rank || !at.insert(norm).second)
        failNode(n, "axis " + std::to_string(a) + " is out of range or repeated");
    }
    std::vector<int64_t> target;
    if (unsqueeze) {
      for (int64_t d = 0, src = 0; d < rank; ++d)
        target.push_back(at.count(d) ? 1 : shape[src++]);
    } else {
      for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
        bool drop = axes ? at.count(d) > 0 : shape[d] == 1;
        if (drop && shape[d] != 1)
          failNode(n, "squeezes dim " + std::to_string(d) + " of size " +
                          std::to_string(shape[d]));
        if (!drop)
          target.push_back(shape[d]);
      }
    }
    return target;
  }
  if (op == "Flatten") {
    allowAttrs(n, {"axis"});
    std::vector<int64_t> shape = knownShape(n, in[0]);
    int64_t rank = static_cast<int64_t>(shape.size()), axis = intAttr(n, "axis", 1);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis > rank)
      failNode(n, "axis " + std::to_string(intAttr(n, "axis", 1)) + " is out of range");
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < axis ? outer : inner) *= shape[d];
    return {outer, inner};
  }
  failNode(n, "is not a reshape");
}

void Converter::topk(const onnx::NodeProto &n) {
  allowAttrs(n, {"axis", "largest", "sorted", "k"});
  if (intAttr(n, "largest", 1) == 0)
    failNode(n, "largest = 0 (the k smallest) is not supported");
  if (n.input_size() < 1 || n.input(0).empty())
    failNode(n, "needs 1 input(s)");
  // K is an input from opset 10 on, an attribute before.
  int64_t k = 0;
  if (n.input_size() > 1 && !n.input(1).empty()) {
    std::vector<int64_t> ks = constInput(n, 1, "K");
    if (ks.size() != 1)
      failNode(n, "its K input holds " + std::to_string(ks.size()) + " values, not one");
    k = ks[0];
  } else if (attr(n, "k")) {
    k = intAttr(n, "k", 0);
  } else {
    failNode(n, "needs its K input");
  }
  const Json attrs = {{"k", k}, {"axis", intAttr(n, "axis", -1)}};
  if (n.output_size() > 0 && !n.output(0).empty())
    emit(n.output(0), "topk", {n.input(0)}, attrs);
  if (n.output_size() > 1 && !n.output(1).empty())
    emit(n.output(1), "topk_indices", {n.input(0)}, attrs);
}

} // namespace fusec::onnx_import
