//===- OnnxReader.cpp - ONNX models -> fusec's graph format ---------------===//
#include "frontends/onnx/OnnxReader.h"

#include "frontends/json/GraphReader.h"
#include "frontends/onnx/KnownValues.h"
#include "frontends/onnx/OpShape.h"
#include "frontends/onnx/TensorProto.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <onnx.pb.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace fusec {
namespace {

using Json = nlohmann::json;
using onnx_import::dtypeName;
using onnx_import::elementAt;
using onnx_import::elementCount;
using onnx_import::initializerValues;
using onnx_import::Known;
using onnx_import::knownOf;

/// The failure of one conversion: a message that names the node and op.
struct Unsupported {
  std::string message;
};

class Converter {
public:
  Converter(const onnx::ModelProto &model, std::string fileName, const SizeBindings &sizes)
      : model(model), file(std::move(fileName)), sizes(sizes) {
    for (const auto &o : model.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx")
        opset = o.version();
  }

  Json convert() {
    const onnx::GraphProto &g = model.graph();
    graph["fusec"] = 1;
    graph["name"] = g.name().empty() ? std::string("onnx_model") : g.name();
    graph["inputs"] = Json::array();
    graph["nodes"] = Json::array();
    std::set<std::string> initializerNames;
    for (const onnx::TensorProto &t : g.initializer())
      initializerNames.insert(t.name());
    // The model's inputs first, then its weights in the order ONNX lists
    // them (only those an op reads: integer lists that only give shapes and
    // axes are read at import).
    for (const onnx::ValueInfoProto &v : g.input())
      if (!initializerNames.count(v.name()))
        addInput(v);
    for (const onnx::TensorProto &t : g.initializer())
      addInitializer(t);
    for (const onnx::NodeProto &n : g.node())
      addNode(n);
    current = nullptr;
    graph["outputs"] = Json::array();
    for (const onnx::ValueInfoProto &v : g.output()) {
      materialize(v.name());
      // An output that is another value (Identity, Dropout) keeps its own
      // name: a reshape to its shape, which costs nothing.
      if (resolve(v.name()) != v.name() && !produced.count(v.name()))
        if (std::optional<std::vector<int64_t>> s = shapeOf(v.name())) {
          const std::string target = resolve(v.name());
          alias.erase(v.name());
          emit(v.name(), "reshape", {target}, {{"shape", *s}});
        }
      graph["outputs"].push_back(resolve(v.name()));
    }
    // Weights an op reads are parameters (bound from weights files); the
    // others (integer lists read at import) are dropped.
    Json inputs = Json::array(), parameters = Json::array();
    for (Json &in : graph["inputs"]) {
      const std::string name = in["name"];
      if (!weights.count(name))
        inputs.push_back(in);
      else if (read.count(name))
        parameters.push_back(in);
    }
    graph["inputs"] = inputs;
    if (!parameters.empty())
      graph["parameters"] = parameters;
    return graph;
  }

private:
  [[noreturn]] void fail(const std::string &what) { throw Unsupported{file + ": " + what}; }
  [[noreturn]] void failNode(const onnx::NodeProto &n, const std::string &what) {
    fail("node '" + nodeName(n) + "' (" + n.op_type() + ", opset " + std::to_string(opset) +
         "): " + what);
  }
  static std::string nodeName(const onnx::NodeProto &n) {
    return !n.name().empty() ? n.name() : n.output_size() ? n.output(0) : n.op_type();
  }

  std::string resolve(const std::string &name) const {
    auto it = alias.find(name);
    return it == alias.end() ? name : it->second;
  }

  void addInput(const onnx::ValueInfoProto &v) {
    if (!v.type().has_tensor_type())
      fail("input '" + v.name() + "' is not a tensor");
    const auto &tt = v.type().tensor_type();
    std::optional<std::string> dt = dtypeName(tt.elem_type());
    if (!dt)
      fail("input '" + v.name() + "' has element type " + std::to_string(tt.elem_type()) +
           ", which fusec does not have (f32, f16, bf16, i32, i64, bool)");
    Json shape = Json::array();
    for (const auto &d : tt.shape().dim()) {
      if (d.has_dim_value()) {
        shape.push_back(d.dim_value());
        continue;
      }
      // A dynamic axis: its size comes from --bind, and the graph is
      // converted (its shape arithmetic computed) for that size.
      auto it = d.has_dim_param() ? sizes.find(d.dim_param()) : sizes.end();
      if (!d.has_dim_param() || d.dim_param().empty())
        fail("input '" + v.name() + "' has a dimension of unknown size: export it with a "
             "fixed size or a named dynamic axis");
      if (it == sizes.end())
        fail("input '" + v.name() + "' has the dynamic dimension '" + d.dim_param() +
             "': give its size with --bind " + d.dim_param() + "=N");
      shape.push_back(it->second);
    }
    graph["inputs"].push_back({{"name", v.name()}, {"dtype", *dt}, {"shape", shape}});
    shapes[v.name()] = shape.get<std::vector<int64_t>>();
    produced.insert(v.name());
  }

  void addInitializer(const onnx::TensorProto &t) {
    std::optional<std::string> dt = dtypeName(t.data_type());
    if (!dt)
      fail("initializer '" + t.name() + "' has element type " + std::to_string(t.data_type()) +
           ", which fusec does not have");
    // Values in external data files are read when weights are bound
    // (onnxWeights), not here: only integer lists are read at import.
    const bool external = t.data_location() == onnx::TensorProto::EXTERNAL;
    if (std::optional<Known> k = external ? std::nullopt : knownOf(t, *dt))
      known[t.name()] = *k;
    Json shape = Json::array();
    for (int64_t d : t.dims())
      shape.push_back(d);
    shapes[t.name()] = std::vector<int64_t>(t.dims().begin(), t.dims().end());
    if (elementCount(t) == 1 && !external) {
      // A scalar: written as a `constant` where an op reads it (materialize).
      if (!known.count(t.name()))
        fail("initializer '" + t.name() + "' holds no value");
      return;
    }
    // A weight: a parameter of its own name, where an op reads it.
    graph["inputs"].push_back({{"name", t.name()}, {"dtype", *dt}, {"shape", shape}});
    weights.insert(t.name());
    produced.insert(t.name());
  }

  const onnx::AttributeProto *attr(const onnx::NodeProto &n, const char *name) const {
    for (const auto &a : n.attribute())
      if (a.name() == name)
        return &a;
    return nullptr;
  }
  int64_t intAttr(const onnx::NodeProto &n, const char *name, int64_t dflt) const {
    const onnx::AttributeProto *a = attr(n, name);
    return a ? a->i() : dflt;
  }
  double floatAttr(const onnx::NodeProto &n, const char *name, double dflt) const {
    const onnx::AttributeProto *a = attr(n, name);
    return a ? a->f() : dflt;
  }
  std::optional<std::vector<int64_t>> intsAttr(const onnx::NodeProto &n, const char *name) const {
    const onnx::AttributeProto *a = attr(n, name);
    if (!a)
      return std::nullopt;
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  }
  /// Input `i` as constant integers (a shape or axes operand), or an error.
  std::vector<int64_t> constInput(const onnx::NodeProto &n, int i, const char *what) {
    if (n.input_size() <= i || n.input(i).empty())
      failNode(n, std::string("needs its ") + what + " input");
    const Known *k = knownValue(n.input(i));
    std::optional<std::vector<int64_t>> ints = k ? k->ints() : std::nullopt;
    if (!k && !produced.count(resolve(n.input(i))))
      failNode(n, std::string("its ") + what + " '" + n.input(i) +
                      "' is not defined by an earlier node, an input or an initializer");
    if (!ints)
      failNode(n, std::string("its ") + what + " '" + n.input(i) +
                      "' depends on values known only when the model runs; fusec takes " +
                      what + " values computed at import only");
    return *ints;
  }
  /// The attributes a node may carry that the conversion reads; any other
  /// is an error, never silently dropped.
  void allowAttrs(const onnx::NodeProto &n, std::initializer_list<const char *> known) {
    for (const auto &a : n.attribute())
      if (std::none_of(known.begin(), known.end(), [&](const char *k) { return a.name() == k; }))
        failNode(n, "attribute '" + a.name() + "' is not supported");
  }

  void emit(const std::string &name, const std::string &op, std::vector<std::string> inputs,
            Json attrs = Json::object()) {
    for (const std::string &i : inputs)
      if (!i.empty())
        materialize(i);
    Json node = {{"name", name}, {"op", op}, {"inputs", Json::array()}};
    for (const std::string &i : inputs) {
      node["inputs"].push_back(i.empty() ? std::string() : resolve(i));
      read.insert(resolve(i));
    }
    if (!attrs.empty())
      node["attrs"] = attrs;
    graph["nodes"].push_back(node);
    produced.insert(name);
    if (std::optional<std::vector<int64_t>> s = inferShape(op, node["inputs"], attrs))
      shapes[name] = *s;
  }

  /// The shape of a value the conversion produced or read, if it tracks it:
  /// what Unsqueeze, Squeeze and Flatten need to become reshapes.
  std::optional<std::vector<int64_t>> shapeOf(const std::string &name) const {
    auto it = shapes.find(resolve(name));
    if (it == shapes.end())
      return std::nullopt;
    return it->second;
  }
  std::vector<int64_t> knownShape(const onnx::NodeProto &n, const std::string &name) {
    std::optional<std::vector<int64_t>> s = shapeOf(name);
    if (!s)
      failNode(n, "the shape of '" + name + "' is not known at import (an op whose shape the "
                  "importer does not track computes it)");
    return *s;
  }

  /// The result shape of a fusec op the conversion emitted, where its
  /// operands' shapes are known.
  std::optional<std::vector<int64_t>> inferShape(const std::string &op, const Json &inputs,
                                                 const Json &attrs) const {
    std::vector<shape::Shape> in;
    for (const Json &i : inputs) {
      if (i.get<std::string>().empty())
        continue;  // an optional operand left out
      std::optional<std::vector<int64_t>> s = shapeOf(i.get<std::string>());
      if (!s)
        return std::nullopt;
      in.push_back(*s);
    }
    return opShape(op, in, attrs);
  }
  std::string fresh(const std::string &base, const char *suffix) {
    return base + "." + suffix;
  }

  /// The shape Unsqueeze, Squeeze and Flatten give their input (whose shape
  /// the importer tracks): each is a reshape.
  std::vector<int64_t> layoutTarget(const onnx::NodeProto &n) {
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

  /// The dtype of a value in the graph being written: an input's, or what
  /// its node's op gives (fusec's rules: casts, constants and iotas say it,
  /// comparisons give bool, `where` its second operand's, the rest their
  /// first operand's).
  std::string dtypeOf(const std::string &name) const {
    const std::string r = resolve(name);
    for (const Json &i : graph["inputs"])
      if (i["name"] == r)
        return i["dtype"];
    const Json &nodes = graph["nodes"];
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      const Json &node = *it;
      if (node["name"] != r)
        continue;
      const std::string op = node["op"];
      if (node.contains("attrs") && node["attrs"].contains("dtype"))
        return node["attrs"]["dtype"];
      if (op == "constant")
        return "f32";
      if (op == "iota")
        return "i64";
      if (op == "eq" || op == "ne" || op == "lt" || op == "le" || op == "gt" || op == "ge")
        return "bool";
      return dtypeOf(node["inputs"][op == "where" ? 1 : 0]);
    }
    return "f32";
  }

  const Known *knownValue(const std::string &name) const {
    auto it = known.find(resolve(name));
    return it == known.end() ? nullptr : &it->second;
  }

  /// Writes a value computed at import as nodes, once, where an op of the
  /// graph reads it: a fill becomes a `constant`, an index progression an
  /// `iota` (scaled and offset); any other table is computed by the graph
  /// from what the node that made it read (a causal mask compared from two
  /// index ranges), where that node converts; else it is an error.
  void materialize(const std::string &name) {
    const std::string r = resolve(name);
    if (produced.count(r))
      return;
    auto it = known.find(r);
    if (it == known.end())
      return;  // the JSON reader names an unknown value
    const Known k = it->second;
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
        produced.erase(r);
        const onnx::NodeProto *reader = current;
        unfolded.insert(by->second);
        addNode(*by->second);  // its inputs materialize in turn
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
    std::string v = p->step == 1 && p->start == 0 ? r : r + ".iota";
    graph["nodes"].push_back({{"name", v}, {"op", "iota"},
                              {"attrs", {{"shape", k.shape}, {"dim", p->dim}, {"dtype", k.dtype}}}});
    if (p->step != 1) {
      std::string scaled = p->start == 0 ? r : r + ".scaled";
      graph["nodes"].push_back({{"name", r + ".step"}, {"op", "constant"},
                                {"attrs", {{"value", p->step}, {"dtype", k.dtype}}}});
      graph["nodes"].push_back({{"name", scaled}, {"op", "mul"}, {"inputs", {v, r + ".step"}}});
      v = scaled;
    }
    if (p->start != 0) {
      graph["nodes"].push_back({{"name", r + ".start"}, {"op", "constant"},
                                {"attrs", {{"value", p->start}, {"dtype", k.dtype}}}});
      graph["nodes"].push_back({{"name", r}, {"op", "add"}, {"inputs", {v, r + ".start"}}});
    }
  }

  void setKnown(const std::string &name, Known k) {
    shapes[name] = k.shape;
    known[name] = std::move(k);
    if (current)
      foldedBy[name] = current;
  }

  /// Computes `n` at import where its result depends only on shapes and
  /// values known here (shape arithmetic); false where the graph computes it.
  bool fold(const onnx::NodeProto &n) {
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
    if (op == "Range") {
      allowAttrs(n, {});
      if (args.size() != 3)
        failNode(n, "needs 3 input(s)");
      return check(onnx_import::foldRange(args[0], args[1], args[2], error));
    }
    if (op == "Gather") {
      allowAttrs(n, {"axis"});
      if (args.size() != 2)
        failNode(n, "needs 2 input(s)");
      return check(onnx_import::foldGather(args[0], args[1], intAttr(n, "axis", 0), error));
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

  /// Gather of a tensor the graph computes (a weight) at indices known at
  /// import: one index repeated, or evenly spaced increasing indices (the
  /// rows of positions 0..S-1) are a slice of it, reshaped to the indices'
  /// place and broadcast over their other dims (other indices take the
  /// gather op).
  /// Whether indices known at import are one index, or evenly spaced
  /// increasing ones, inside the gathered dim and all of one sign (a slice).
  bool sliceable(const onnx::NodeProto &n, const Known &idx) {
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

  void gatherKnownRows(const onnx::NodeProto &n, const Known &idx) {
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

  /// Split: one slice per output, of the sizes its `split` input gives, or
  /// (opset 18) `num_outputs` parts, the last one smaller where the dim does
  /// not divide; a known input's parts are known.
  void split(const onnx::NodeProto &n) {
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
    int64_t total = 0;
    for (int64_t z : sizes)
      total += z < 0 ? dim + 1 : z;  // a negative size makes the check fail
    if (static_cast<int64_t>(sizes.size()) != parts || total != dim)
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

  void addNode(const onnx::NodeProto &n) {
    if (!n.domain().empty() && n.domain() != "ai.onnx")
      failNode(n, "operators of domain '" + n.domain() + "' are not supported");
    current = &n;
    if (n.op_type() == "Split")
      return split(n);
    if (n.op_type() == "Dropout") {
      // Inference: the identity (a training-mode Dropout, or its mask, is not).
      allowAttrs(n, {"seed"});
      if (n.input_size() > 2 && !n.input(2).empty() && constInput(n, 2, "training_mode") != std::vector<int64_t>{0})
        failNode(n, "training_mode must be false: fusec runs inference");
      if (n.output_size() > 1 && !n.output(1).empty())
        failNode(n, "its mask output is not supported (inference has none)");
      if (n.input_size() < 1 || n.input(0).empty())
        failNode(n, "needs 1 input(s)");
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
        {"Slice", 3}, {"Expand", 2}, {"Gather", 2}, {"Range", 3}, {"Conv", 2}};
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
    if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin") {
      allowAttrs(n, {"axes", "keepdims", "noop_with_empty_axes"});
      std::optional<std::vector<int64_t>> axes = intsAttr(n, "axes");
      if (!axes && in.size() > 1 && !in[1].empty())
        axes = constInput(n, 1, "axes");
      if (intAttr(n, "noop_with_empty_axes", 0) && (!axes || axes->empty()))
        failNode(n, "noop_with_empty_axes is not supported");
      Json attrs = {{"keepdims", intAttr(n, "keepdims", 1) != 0}};
      if (axes && !axes->empty())
        attrs["axes"] = *axes;
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
      if (const Known *idx = knownValue(in[1]))
        if (sliceable(n, *idx))
          return gatherKnownRows(n, *idx);
      // Indices known only when the model runs (token ids): an embedding lookup.
      return emit(out, "gather", {in[0], in[1]}, {{"axis", intAttr(n, "axis", 0)}});
    }
    if (op == "Range")
      failNode(n, "takes start, limit and delta known at import only");
    failNode(n, "this operator is not supported");
  }

  const onnx::ModelProto &model;
  std::string file;
  const SizeBindings &sizes;
  int64_t opset = 0;
  Json graph;
  std::map<std::string, std::string> alias;
  /// Values computed at import (KnownValues.h), and the names the graph
  /// being written holds (inputs, nodes): a known value an op reads is
  /// written as a node first (materialize).
  std::map<std::string, Known> known;
  std::set<std::string> produced;
  const onnx::NodeProto *current = nullptr;  ///< the node being converted
  /// The node each value computed at import came from, and the nodes the
  /// graph computes after all (materialize).
  std::map<std::string, const onnx::NodeProto *> foldedBy;
  std::set<const onnx::NodeProto *> unfolded;
  std::set<std::string> weights, read;  ///< weights; names an op reads
public:
  /// The parameters of the converted graph (after convert).
  std::vector<std::string> parameterNames() const {
    std::vector<std::string> out;
    for (const Json &p : graph.value("parameters", Json::array()))
      out.push_back(p["name"]);
    return out;
  }
  std::map<std::string, std::vector<int64_t>> shapes;  ///< see shapeOf
};

} // namespace

llvm::Expected<std::string> onnxToGraphJson(llvm::StringRef bytes, llvm::StringRef fileName,
                                            const SizeBindings &sizes) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "%s: not an ONNX model (the protobuf does not parse)",
                                   fileName.str().c_str());
  try {
    Converter c(model, fileName.str(), sizes);
    return c.convert().dump(2) + "\n";
  } catch (const Unsupported &u) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", u.message.c_str());
  } catch (const std::exception &e) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s",
                                   fileName.str().c_str(), e.what());
  }
}

llvm::Expected<std::map<std::string, HostTensor>> onnxFileWeights(llvm::StringRef path,
                                                                   const SizeBindings &sizes) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read model '%s': %s",
                                   path.str().c_str(), buffer.getError().message().c_str());
  llvm::StringRef bytes = (*buffer)->getBuffer();
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "%s: not an ONNX model (the protobuf does not parse)",
                                   path.str().c_str());
  std::vector<std::string> parameters;
  try {
    Converter c(model, path.str(), sizes);
    c.convert();
    parameters = c.parameterNames();
  } catch (const Unsupported &u) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", u.message.c_str());
  } catch (const std::exception &e) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s", path.str().c_str(),
                                   e.what());
  }
  std::set<std::string> wanted(parameters.begin(), parameters.end());
  std::map<std::string, HostTensor> weights;
  for (const onnx::TensorProto &t : model.graph().initializer()) {
    if (!wanted.count(t.name()))
      continue;
    llvm::Expected<HostTensor> v = initializerValues(t, path);
    if (!v)
      return v.takeError();
    weights.emplace(t.name(), std::move(*v));
  }
  return weights;
}

llvm::Expected<std::string> onnxFileToGraphJson(llvm::StringRef path, const SizeBindings &sizes) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read model '%s': %s",
                                   path.str().c_str(), buffer.getError().message().c_str());
  return onnxToGraphJson((*buffer)->getBuffer(), path, sizes);
}

llvm::Expected<NamedDims> namedDimsOfModelFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read graph '%s': %s",
                                   path.str().c_str(), buffer.getError().message().c_str());
  llvm::StringRef bytes = (*buffer)->getBuffer();
  if (!path.ends_with(".onnx"))
    return namedDimsOfGraphText(bytes, path);
  NamedDims out;
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return out;  // reading the model reports it
  for (const onnx::ValueInfoProto &v : model.graph().input()) {
    if (!v.type().has_tensor_type())
      continue;
    std::vector<std::string> dims;
    bool named = false;
    for (const auto &d : v.type().tensor_type().shape().dim()) {
      dims.push_back(d.has_dim_param() ? d.dim_param() : "");
      named |= d.has_dim_param() && !d.dim_param().empty();
    }
    if (named)
      out[v.name()] = dims;
  }
  return out;
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> importModelFile(llvm::StringRef path,
                                                                  mlir::MLIRContext &ctx,
                                                                  const SizeBindings &sizes) {
  if (!path.ends_with(".onnx"))
    return importGraphFile(path, ctx, sizes);
  llvm::Expected<std::string> json = onnxFileToGraphJson(path, sizes);
  if (!json)
    return json.takeError();
  return importGraphText(*json, path, ctx);
}

} // namespace fusec
