//===- ConvertFolds.cpp - what an ONNX model computes at import -----------===//
#include "frontends/onnx/Converter.h"

#include <algorithm>
#include <cmath>

namespace fusec::onnx_import {

bool Converter::fold(const onnx::NodeProto &n) {
  const std::string &op = n.op_type(), out = n.output(0);
  std::vector<std::string> in(n.input().begin(), n.input().end());
  std::string error;
  auto check = [&](std::optional<Known> k) {
    if (!k && !error.empty())
      failNode(n, error);
    if (k)
      setKnown(out, std::move(*k));
    return k.has_value();
  };
  if (op == "Shape" || op == "Size") {
    allowAttrs(n, op == "Shape" ? std::initializer_list<const char *>{"start", "end"}
                                : std::initializer_list<const char *>{});
    if (in.empty() || in[0].empty())
      failNode(n, "needs 1 input(s)");
    std::vector<int64_t> s = knownShape(n, in[0]);
    Known k;
    if (op == "Size") {
      int64_t count = 1;
      for (int64_t d : s)
        count *= d;
      k.shape = {};
      k.values = {double(count)};
      return check(k);
    }
    const int64_t rank = static_cast<int64_t>(s.size());
    auto clampDim = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t(0), rank); };
    int64_t b = clampDim(intAttr(n, "start", 0)), e = clampDim(intAttr(n, "end", rank));
    for (int64_t d = b; d < e; ++d)
      k.values.push_back(double(s[size_t(d)]));
    k.shape = {std::max<int64_t>(0, e - b)};
    if (k.values.empty())
      k.values = {0};
    return check(k);
  }
  if (op == "ConstantOfShape") {
    allowAttrs(n, {"value"});
    Known k;
    k.shape = constInput(n, 0, "shape");
    for (int64_t d : k.shape)
      if (d < 0)
        failNode(n, "its shape has the negative dim " + std::to_string(d));
    // A fill is never spelled out, but what reads it takes its shape as a
    // tensor's: within fusec's bound on elements.
    if (std::string e = shape::checkDims(k.shape); !e.empty())
      failNode(n, e);
    k.dtype = "f32";
    k.values = {0};
    if (const onnx::AttributeProto *v = attr(n, "value")) {
      std::optional<std::string> dt = dtypeName(v->t().data_type());
      std::optional<double> x = elementAt(v->t(), 0);
      if (!dt || !x || elementCount(v->t()) != 1)
        failNode(n, "its value is not one element of a dtype fusec has");
      k.dtype = *dt;
      k.values = {*x};
    }
    return check(k);
  }
  // The rest fold only when every operand is known.
  std::vector<Known> args;
  for (const std::string &i : in) {
    if (i.empty())
      continue;
    const Known *k = knownValue(i);
    if (!k)
      return false;
    args.push_back(*k);
  }
  if (args.empty() || op == "Constant")
    return false;
  if (op == "Identity")
    return check(args[0]);
  // The node's attributes are among `attrs` and it has `count` inputs.
  auto expect = [&](size_t count, std::initializer_list<const char *> attrs) {
    allowAttrs(n, attrs);
    if (args.size() != count)
      failNode(n, "needs " + std::to_string(count) + " input(s)");
  };
  if (op == "Range") {
    expect(3, {});
    return check(onnx_import::foldRange(args[0], args[1], args[2], error));
  }
  if (op == "Gather") {
    expect(2, {"axis"});
    return check(onnx_import::foldGather(args[0], args[1], intAttr(n, "axis", 0), error));
  }
  if (op == "CumSum") {
    expect(2, {"exclusive", "reverse"});
    std::vector<int64_t> axis = constInput(n, 1, "axis");
    if (axis.size() != 1)
      failNode(n, "its axis is " + std::to_string(axis.size()) + " values, not one");
    return check(onnx_import::foldCumSum(args[0], axis.front(),
                                         intAttr(n, "exclusive", 0) != 0,
                                         intAttr(n, "reverse", 0) != 0, error));
  }
  if (op == "GatherND") {
    expect(2, {"batch_dims"});
    return check(onnx_import::foldGatherND(args[0], args[1], intAttr(n, "batch_dims", 0), error));
  }
  if (op == "GatherElements") {
    expect(2, {"axis"});
    return check(onnx_import::foldGatherElements(args[0], args[1], intAttr(n, "axis", 0), error));
  }
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Flatten") {
    Known k = args[0];
    k.shape = layoutTarget(n);
    return check(k);
  }
  if (op == "Reshape") {
    allowAttrs(n, {"allowzero"});
    std::optional<shape::Shape> s = onnx_import::reshapeTarget(
        args[0].shape, constInput(n, 1, "shape"), intAttr(n, "allowzero", 0) != 0, error);
    if (!s)
      failNode(n, error);
    Known k = args[0];
    k.shape = *s;
    return check(k);
  }
  if (op == "Concat") {
    allowAttrs(n, {"axis"});
    return check(onnx_import::foldConcat(args, intAttr(n, "axis", 0), error));
  }
  if (op == "Cast") {
    allowAttrs(n, {"to", "saturate"});
    std::optional<std::string> dt = dtypeName(static_cast<int>(intAttr(n, "to", 0)));
    if (!dt)
      failNode(n, "casts to an element type fusec does not have");
    return check(onnx_import::castKnown(args[0], *dt));
  }
  if (op == "Slice") {
    allowAttrs(n, {});
    std::vector<int64_t> axes, steps;
    if (in.size() > 3 && !in[3].empty())
      axes = constInput(n, 3, "axes");
    if (in.size() > 4 && !in[4].empty())
      steps = constInput(n, 4, "steps");
    return check(onnx_import::foldSlice(args[0], constInput(n, 1, "starts"),
                                        constInput(n, 2, "ends"), axes, steps, error));
  }
  if (op == "Expand") {
    allowAttrs(n, {});
    return check(onnx_import::foldExpand(args[0], constInput(n, 1, "shape"), error));
  }
  static const std::set<std::string> elementwise = {
      "Add", "Sub", "Mul", "Div", "Mod", "Max", "Min", "Neg", "Abs", "Equal", "Less", "Greater",
      "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Where"};
  if (!elementwise.count(op))
    return false;  // e.g. Trilu of a fill: the graph computes it
  allowAttrs(n, op == "Mod" ? std::initializer_list<const char *>{"fmod"}
                            : std::initializer_list<const char *>{});
  if (op == "Mod" && intAttr(n, "fmod", 0))
    failNode(n, "fmod = 1 (the dividend's sign) is not supported");
  return check(onnx_import::foldElementwise(op, args, error));
}

void Converter::materialize(const std::string &name) {
  const std::string r = resolve(name);
  if (produced.count(r))
    return;
  auto it = known.find(r);
  if (it == known.end())
    return;  // the JSON reader names an unknown value
  const Known k = it->second;
  // A value of no elements (a Range that runs backwards, a zero-size dim)
  // has nothing to write, and fusec's tensors have no empty dims.
  if (k.values.empty() || k.numel() == 0) {
    const std::string what = "'" + r + "' is an empty tensor (a dim of size 0), which fusec does not take";
    if (current)
      failNode(*current, what);
    fail(what);
  }
  auto number = [](double v) -> Json {
    if (std::isinf(v))
      return v > 0 ? "inf" : "-inf";
    if (std::isnan(v))
      return "nan";
    return v;
  };
  produced.insert(r);
  if (k.fill() || k.numel() <= 1) {
    graph["nodes"].push_back({{"name", r}, {"op", "constant"},
                              {"attrs", {{"value", number(k.at(0))}, {"dtype", k.dtype}, {"shape", k.shape}}}});
    return;
  }
  std::optional<onnx_import::Progression> p = onnx_import::progressionOf(k);
  if (!p) {
    auto by = foldedBy.find(r);
    if (by != foldedBy.end() && by->second->op_type() != "Shape" &&
        by->second->op_type() != "Size") {
      // Each value unfolded unfolds its inputs in turn: a chain of folded
      // nodes thousands long would overflow the stack.
      if (unfoldDepth >= kMaxUnfoldDepth)
        failNode(*by->second, "it ends a chain of more than " + std::to_string(kMaxUnfoldDepth) +
                                  " nodes computed at import whose values the graph needs");
      produced.erase(r);
      const onnx::NodeProto *reader = current;
      unfolded.insert(by->second);
      ++unfoldDepth;
      addNode(*by->second);  // its inputs materialize in turn
      --unfoldDepth;
      current = reader;
      if (produced.count(resolve(r)))
        return;
      produced.insert(r);
    }
    std::string why = "'" + r + "' holds " + std::to_string(k.numel()) +
                      " values computed at import; fusec's graph format holds fills and index "
                      "progressions, not tables";
    if (current)
      failNode(*current, "its input " + why);
    fail("output " + why);
  }
  std::string v = p->step == 1 && p->start == 0 ? r : fresh(r, "iota");
  graph["nodes"].push_back({{"name", v}, {"op", "iota"},
                            {"attrs", {{"shape", k.shape}, {"dim", p->dim}, {"dtype", k.dtype}}}});
  if (p->step != 1) {
    std::string scaled = p->start == 0 ? r : fresh(r, "scaled");
    graph["nodes"].push_back({{"name", fresh(r, "step")}, {"op", "constant"},
                              {"attrs", {{"value", p->step}, {"dtype", k.dtype}}}});
    graph["nodes"].push_back({{"name", scaled}, {"op", "mul"}, {"inputs", {v, fresh(r, "step")}}});
    v = scaled;
  }
  if (p->start != 0) {
    graph["nodes"].push_back({{"name", fresh(r, "start")}, {"op", "constant"},
                              {"attrs", {{"value", p->start}, {"dtype", k.dtype}}}});
    graph["nodes"].push_back({{"name", r}, {"op", "add"}, {"inputs", {v, fresh(r, "start")}}});
  }
}

} // namespace fusec::onnx_import
