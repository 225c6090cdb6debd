//===- Converter.h - one ONNX model's conversion to fusec's graph format --===//
//
// The ONNX reader (OnnxReader.cpp) converts a model node by node into the
// JSON graph format, tracking the shapes of the values it writes and the
// values it computes at import (KnownValues.h). The conversion of the
// operators is ConvertNodes.cpp (the training losses ConvertLosses.cpp); what
// is computed at import, and how a computed value is written back into the
// graph, is ConvertFolds.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontends/json/GraphReader.h"
#include "frontends/onnx/KnownValues.h"
#include "frontends/onnx/OpShape.h"
#include "frontends/onnx/TensorProto.h"

#include <onnx.pb.h>
#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fusec::onnx_import {

using Json = nlohmann::json;

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
    // Every name the model uses, which the importer's own (fresh) avoid.
    for (const onnx::ValueInfoProto &v : g.input())
      modelNames.insert(v.name());
    for (const onnx::ValueInfoProto &v : g.output())
      modelNames.insert(v.name());
    for (const onnx::TensorProto &t : g.initializer())
      modelNames.insert(t.name());
    for (const onnx::NodeProto &n : g.node()) {
      modelNames.insert(n.input().begin(), n.input().end());
      modelNames.insert(n.output().begin(), n.output().end());
    }
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
    // A size given for no dynamic axis (a typo) is reported first, before
    // the unbound axis it leaves.
    std::set<std::string> dimNames;
    for (const onnx::ValueInfoProto &v : g.input())
      if (!initializerNames.count(v.name()) && v.type().has_tensor_type())
        for (const auto &d : v.type().tensor_type().shape().dim())
          if (d.has_dim_param())
            dimNames.insert(d.dim_param());
    if (std::string e = unknownSizeError(sizes, dimNames); !e.empty())
      fail(e);
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
      if (std::string problem = sizeNameProblem(d.dim_param()); !problem.empty())
        fail("input '" + v.name() + "' has the dynamic dimension '" + d.dim_param() +
             "', which cannot be given with --bind: " + problem);
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
  /// The name of an importer-made value `suffix` of `base` (a node's
  /// output): base.suffix, the same at every call, unless the model itself
  /// names a value so (any string is an ONNX name), then base.suffix.2, ...
  std::string fresh(const std::string &base, const char *suffix) {
    const std::string wanted = base + "." + suffix;
    if (auto it = freshNames.find(wanted); it != freshNames.end())
      return it->second;
    std::string name = wanted;
    for (int i = 2; modelNames.count(name) || produced.count(name) || takenFresh.count(name); ++i)
      name = wanted + "." + std::to_string(i);
    takenFresh.insert(name);
    return freshNames[wanted] = name;
  }
  std::set<std::string> modelNames;  ///< every name of the model (convert)
  std::set<std::string> takenFresh;  ///< the names fresh has given
  std::map<std::string, std::string> freshNames;

  /// The shape Unsqueeze, Squeeze and Flatten give their input (whose shape
  /// the importer tracks): each is a reshape.
  std::vector<int64_t> layoutTarget(const onnx::NodeProto &n);

  /// The dtype of a value in the graph being written: an input's, or what
  /// its node's op gives (fusec's rules: casts, constants and iotas say it,
  /// comparisons give bool, `where` its second operand's, the rest their
  /// first operand's).
  std::string dtypeOf(const std::string &name) const {
    const std::string r = resolve(name);
    // Remembered: a chain of nodes each asking its input's (Trilu) would
    // otherwise scan the graph down the whole chain at every link.
    if (auto it = dtypes.find(r); it != dtypes.end())
      return it->second;
    std::string t = "f32";
    bool found = false;
    for (const Json &i : graph["inputs"])
      if (i["name"] == r) {
        t = i["dtype"];
        found = true;
      }
    const Json &nodes = graph["nodes"];
    for (auto it = nodes.rbegin(); !found && it != nodes.rend(); ++it) {
      const Json &node = *it;
      if (node["name"] != r)
        continue;
      found = true;
      const std::string op = node["op"];
      if (node.contains("attrs") && node["attrs"].contains("dtype"))
        t = node["attrs"]["dtype"];
      else if (op == "constant")
        t = "f32";
      else if (op == "iota")
        t = "i64";
      else if (op == "eq" || op == "ne" || op == "lt" || op == "le" || op == "gt" || op == "ge")
        t = "bool";
      else
        t = dtypeOf(node["inputs"][op == "where" ? 1 : 0]);
    }
    // A value computed at import and not written yet (a Constant, a Shape)
    // has its own dtype.
    if (const Known *k = found ? nullptr : knownValue(r)) {
      t = k->dtype;
      found = true;
    }
    if (found)
      dtypes[r] = t;
    return t;
  }
  mutable std::map<std::string, std::string> dtypes;

  const Known *knownValue(const std::string &name) const {
    auto it = known.find(resolve(name));
    return it == known.end() ? nullptr : &it->second;
  }

  /// Writes a value computed at import as nodes, once, where an op of the
  /// graph reads it: a fill becomes a `constant`, an index progression an
  /// `iota` (scaled and offset); any other table is computed by the graph
  /// from what the node that made it read (a causal mask compared from two
  /// index ranges), where that node converts; else it is an error.
  void materialize(const std::string &name);

  void setKnown(const std::string &name, Known k) {
    shapes[name] = k.shape;
    known[name] = std::move(k);
    if (current)
      foldedBy[name] = current;
  }

  /// Computes `n` at import where its result depends only on shapes and
  /// values known here (shape arithmetic); false where the graph computes it.
  bool fold(const onnx::NodeProto &n);

  /// Gather of a tensor the graph computes (a weight) at indices known at
  /// import: one index repeated, or evenly spaced increasing indices (the
  /// rows of positions 0..S-1) are a slice of it, reshaped to the indices'
  /// place and broadcast over their other dims (other indices take the
  /// gather op).
  /// Whether indices known at import are one index, or evenly spaced
  /// increasing ones, inside the gathered dim and all of one sign (a slice).
  bool sliceable(const onnx::NodeProto &n, const Known &idx);

  void gatherKnownRows(const onnx::NodeProto &n, const Known &idx);
  /// Whether indices known at import are 0, 1, ..., size - 1 of the gathered
  /// dim in row-major order; such a gather is a reshape (gatherEveryRow).
  bool enumeratesRows(const onnx::NodeProto &n, const Known &idx);
  void gatherEveryRow(const onnx::NodeProto &n, const Known &idx);

  /// Split: one slice per output, of the sizes its `split` input gives, or
  /// (opset 18) `num_outputs` parts, the last one smaller where the dim does
  /// not divide; a known input's parts are known.
  void split(const onnx::NodeProto &n);
  /// TopK: its values and its indices, each a fusec topk op of one face
  /// (the k largest only; sorted, which `sorted = 0` also admits).
  void topk(const onnx::NodeProto &n);
  /// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss over [N, C]
  /// scores: the target's log-probability picked by an index mask (iota ==
  /// target) and a row sum, class weights gathered, ignore_index rows
  /// dropped, then reduced (none, sum or the weighted mean).
  void crossEntropy(const onnx::NodeProto &n);
  /// Writes `name`, the element of each row of `data` (of shape `shape`)
  /// along `axis` at `index` (of its rank, 1 along the axis; `indexDtype`), 0 where
  /// the index is no position: sum(where(iota == index, data, zero)) along
  /// the axis, keeping the dim (the form -fusec-pick-early and the streamed
  /// row statistics take). Its ops are named after `base`.
  void emitPick(const std::string &name, const std::string &base, const std::string &data,
                const std::vector<int64_t> &shape, const std::string &index, int64_t axis,
                const std::string &indexDtype, const std::string &zero);
  /// GatherElements at indices known only when the model runs: each pick a
  /// sum of where(iota == index, data, 0) along the axis
  /// (ConvertGatherElements.cpp).
  void gatherElements(const onnx::NodeProto &n);

  void addNode(const onnx::NodeProto &n);

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
  /// How many unfolds materialize is inside (each recurses into its inputs).
  int unfoldDepth = 0;
  static constexpr int kMaxUnfoldDepth = 128;
  std::set<std::string> weights, read;  ///< weights; names an op reads
  std::map<std::string, std::vector<int64_t>> shapes;  ///< see shapeOf
};

} // namespace fusec::onnx_import
