//===- OnnxReader.cpp - ONNX models -> fusec's graph format ---------------===//
#include "frontends/onnx/OnnxReader.h"

#include "compiler/support/Float16.h"
#include "frontends/json/GraphReader.h"
#include "frontends/onnx/OpShape.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <onnx.pb.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>

namespace fusec {
namespace {

using Json = nlohmann::json;

/// The failure of one conversion: a message that names the node and op.
struct Unsupported {
  std::string message;
};

std::optional<std::string> dtypeName(int onnxType) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT: return "f32";
  case onnx::TensorProto::FLOAT16: return "f16";
  case onnx::TensorProto::BFLOAT16: return "bf16";
  case onnx::TensorProto::INT32: return "i32";
  case onnx::TensorProto::INT64: return "i64";
  case onnx::TensorProto::BOOL: return "bool";
  default: return std::nullopt;
  }
}

/// The tensor's element count; -1 for negative or overflowing dims (a
/// damaged or hostile file), which no conversion reads as a value.
int64_t elementCount(const onnx::TensorProto &t) {
  int64_t n = 1;
  for (int64_t d : t.dims())
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      return -1;
  return n;
}

/// Element `i` of a tensor as a double (from raw_data or its typed field).
std::optional<double> elementAt(const onnx::TensorProto &t, int64_t i) {
  const std::string &raw = t.raw_data();
  auto rawAt = [&](auto zero) -> std::optional<decltype(zero)> {
    decltype(zero) v;
    if (raw.size() < static_cast<size_t>(i + 1) * sizeof v)
      return std::nullopt;
    std::memcpy(&v, raw.data() + i * sizeof v, sizeof v);
    return v;
  };
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT:
    if (!raw.empty())
      return rawAt(0.0f);
    return i < t.float_data_size() ? std::optional<double>(t.float_data(i)) : std::nullopt;
  case onnx::TensorProto::DOUBLE:
    if (!raw.empty())
      return rawAt(0.0);
    return i < t.double_data_size() ? std::optional<double>(t.double_data(i)) : std::nullopt;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16: {
    std::optional<uint16_t> bits;
    if (!raw.empty())
      bits = rawAt(uint16_t(0));
    else if (i < t.int32_data_size())
      bits = static_cast<uint16_t>(t.int32_data(i));
    if (!bits)
      return std::nullopt;
    return t.data_type() == onnx::TensorProto::FLOAT16 ? halfToFloat(*bits) : bf16ToFloat(*bits);
  }
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::BOOL:
    if (!raw.empty()) {
      std::optional<double> v;
      if (t.data_type() == onnx::TensorProto::BOOL) {
        if (auto b = rawAt(uint8_t(0)))
          v = *b;
      } else if (auto x = rawAt(int32_t(0))) {
        v = *x;
      }
      return v;
    }
    return i < t.int32_data_size() ? std::optional<double>(t.int32_data(i)) : std::nullopt;
  case onnx::TensorProto::INT64:
    if (!raw.empty())
      return rawAt(int64_t(0)) ? std::optional<double>(*rawAt(int64_t(0))) : std::nullopt;
    return i < t.int64_data_size() ? std::optional<double>(t.int64_data(i)) : std::nullopt;
  default:
    return std::nullopt;
  }
}

/// A small integer tensor's values (a shape, axes, starts), if it is one.
std::optional<std::vector<int64_t>> intsOf(const onnx::TensorProto &t) {
  if (t.data_type() != onnx::TensorProto::INT64 && t.data_type() != onnx::TensorProto::INT32)
    return std::nullopt;
  int64_t n = elementCount(t);
  if (n < 0 || n > 64)
    return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) {
    const std::string &raw = t.raw_data();
    if (!raw.empty()) {
      if (t.data_type() == onnx::TensorProto::INT64) {
        if (raw.size() < static_cast<size_t>(n) * 8)
          return std::nullopt;
        int64_t v;
        std::memcpy(&v, raw.data() + i * 8, 8);
        out.push_back(v);
      } else {
        if (raw.size() < static_cast<size_t>(n) * 4)
          return std::nullopt;
        int32_t v;
        std::memcpy(&v, raw.data() + i * 4, 4);
        out.push_back(v);
      }
    } else if (t.data_type() == onnx::TensorProto::INT64 && i < t.int64_data_size()) {
      out.push_back(t.int64_data(i));
    } else if (t.data_type() == onnx::TensorProto::INT32 && i < t.int32_data_size()) {
      out.push_back(t.int32_data(i));
    } else {
      return std::nullopt;
    }
  }
  return out;
}

class Converter {
public:
  Converter(const onnx::ModelProto &model, std::string fileName)
      : model(model), file(std::move(fileName)) {
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
    Json inputs = Json::array();
    for (Json &in : graph["inputs"])
      if (!weights.count(in["name"].get<std::string>()) ||
          read.count(in["name"].get<std::string>()))
        inputs.push_back(in);
    graph["inputs"] = inputs;
    graph["outputs"] = Json::array();
    for (const onnx::ValueInfoProto &v : g.output())
      graph["outputs"].push_back(resolve(v.name()));
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
      if (!d.has_dim_value())
        fail("input '" + v.name() + "' has a symbolic dimension '" + d.dim_param() +
             "': export it with fixed sizes (symbolic sizes are not supported yet)");
      shape.push_back(d.dim_value());
    }
    graph["inputs"].push_back({{"name", v.name()}, {"dtype", *dt}, {"shape", shape}});
    shapes[v.name()] = shape.get<std::vector<int64_t>>();
  }

  void addInitializer(const onnx::TensorProto &t) {
    std::optional<std::string> dt = dtypeName(t.data_type());
    if (!dt)
      fail("initializer '" + t.name() + "' has element type " + std::to_string(t.data_type()) +
           ", which fusec does not have");
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      fail("initializer '" + t.name() + "' is stored in an external data file, which is not "
           "read yet");
    if (std::optional<std::vector<int64_t>> ints = intsOf(t))
      constInts[t.name()] = *ints;
    Json shape = Json::array();
    for (int64_t d : t.dims())
      shape.push_back(d);
    shapes[t.name()] = std::vector<int64_t>(t.dims().begin(), t.dims().end());
    if (elementCount(t) == 1) {
      std::optional<double> v = elementAt(t, 0);
      if (!v)
        fail("initializer '" + t.name() + "' holds no value");
      graph["nodes"].push_back(
          {{"name", t.name()}, {"op", "constant"}, {"attrs", {{"value", *v}, {"dtype", *dt}, {"shape", shape}}}});
      return;
    }
    // A weight: a graph input of its own name until graphs have parameters.
    graph["inputs"].push_back({{"name", t.name()}, {"dtype", *dt}, {"shape", shape}});
    weights.insert(t.name());
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
    auto it = constInts.find(n.input(i));
    if (it == constInts.end())
      failNode(n, std::string("its ") + what + " '" + n.input(i) +
                      "' is computed in the graph; only constant " + what +
                      " are read (shape arithmetic is not folded yet)");
    return it->second;
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
    Json node = {{"name", name}, {"op", op}, {"inputs", Json::array()}};
    for (const std::string &i : inputs) {
      node["inputs"].push_back(i.empty() ? std::string() : resolve(i));
      read.insert(resolve(i));
    }
    if (!attrs.empty())
      node["attrs"] = attrs;
    graph["nodes"].push_back(node);
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

  void addNode(const onnx::NodeProto &n) {
    if (!n.domain().empty() && n.domain() != "ai.onnx")
      failNode(n, "operators of domain '" + n.domain() + "' are not supported");
    if (n.output_size() != 1)
      failNode(n, "only single-output operators are supported");
    const std::string out = n.output(0), &op = n.op_type();
    std::vector<std::string> in(n.input().begin(), n.input().end());
    static const std::map<std::string, size_t> arity = {
        {"Where", 3}, {"MatMul", 2}, {"Gemm", 2}, {"Reshape", 2}, {"Max", 2}, {"Min", 2},
        {"Slice", 3}};
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
      if (std::find(shape.begin(), shape.end(), 0) != shape.end())
        failNode(n, "a 0 in the target shape (copy the input's dim) is not supported yet");
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
      return emit(out, "reshape", {in[0]}, {{"shape", target}});
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
      return emit(out, "reshape", {in[0]}, {{"shape", {outer, inner}}});
    }
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
      if (std::optional<std::vector<int64_t>> ints = intsOf(t))
        constInts[out] = *ints;
      if (elementCount(t) != 1) {
        // Integer lists feed shapes and axes (read above); any other use fails
        // at the reader as an unknown name, so say why here instead.
        if (!constInts.count(out))
          failNode(n, "a constant tensor of more than one element is not supported yet");
        return;
      }
      addInitializer(t);
      return;
    }
    failNode(n, "this operator is not supported");
  }

  const onnx::ModelProto &model;
  std::string file;
  int64_t opset = 0;
  Json graph;
  std::map<std::string, std::string> alias;
  std::map<std::string, std::vector<int64_t>> constInts;
  std::set<std::string> weights, read;  ///< weight inputs; names an op reads
  std::map<std::string, std::vector<int64_t>> shapes;  ///< see shapeOf
};

} // namespace

llvm::Expected<std::string> onnxToGraphJson(llvm::StringRef bytes, llvm::StringRef fileName) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "%s: not an ONNX model (the protobuf does not parse)",
                                   fileName.str().c_str());
  try {
    Converter c(model, fileName.str());
    return c.convert().dump(2) + "\n";
  } catch (const Unsupported &u) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", u.message.c_str());
  } catch (const std::exception &e) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s",
                                   fileName.str().c_str(), e.what());
  }
}

llvm::Expected<std::string> onnxFileToGraphJson(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read model '%s': %s",
                                   path.str().c_str(), buffer.getError().message().c_str());
  return onnxToGraphJson((*buffer)->getBuffer(), path);
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> importModelFile(llvm::StringRef path,
                                                                  mlir::MLIRContext &ctx) {
  if (!path.ends_with(".onnx"))
    return importGraphFile(path, ctx);
  llvm::Expected<std::string> json = onnxFileToGraphJson(path);
  if (!json)
    return json.takeError();
  return importGraphText(*json, path, ctx);
}

} // namespace fusec
