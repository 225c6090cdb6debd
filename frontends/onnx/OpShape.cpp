//===- OpShape.cpp - result shapes of the fusec ops the ONNX reader emits -===//
#include "frontends/onnx/OpShape.h"

#include <set>

namespace fusec {

std::optional<shape::Shape> opShape(const std::string &op, const std::vector<shape::Shape> &in,
                                    const nlohmann::json &attrs) {
  auto ints = [&](const char *name) {
    return attrs.contains(name) ? attrs[name].get<std::vector<int64_t>>() : std::vector<int64_t>{};
  };
  auto ok = [](const std::string &why, shape::Shape &out) -> std::optional<shape::Shape> {
    return why.empty() ? std::optional(out) : std::nullopt;
  };
  static const std::set<std::string> same = {
      "neg", "abs", "relu", "exp", "log", "sqrt", "reciprocal", "tanh", "sigmoid", "sin",
      "cos", "erf", "cast", "gelu", "softmax", "log_softmax", "layer_norm"};
  static const std::set<std::string> broadcasting = {
      "add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "lt", "le", "gt", "ge",
      "where"};
  shape::Shape out;
  if (op == "constant" || op == "iota")
    return ints("shape");
  if (in.empty())
    return std::nullopt;
  if (same.count(op))
    return in[0];
  if (broadcasting.count(op))
    return ok(shape::broadcast(in, out), out);
  if (op == "matmul" && in.size() == 2)
    return ok(shape::matmul(in[0], in[1], out), out);
  if (op == "transpose") {
    std::vector<int64_t> perm = ints("perm");
    if (perm.empty())
      for (size_t d = in[0].size(); d-- > 0;)
        perm.push_back(static_cast<int64_t>(d));
    return ok(shape::transpose(in[0], perm, out), out);
  }
  if (op == "reshape")
    return ok(shape::reshape(in[0], ints("shape"), out), out);
  if (op == "mean" || op == "sum" || op == "max" || op == "min") {
    std::vector<int64_t> axes;
    if (!shape::normalizeAxes(ints("axes"), static_cast<int64_t>(in[0].size()), axes).empty())
      return std::nullopt;
    return ok(shape::reduce(in[0], axes, attrs.value("keepdims", false), out), out);
  }
  // Axes as ONNX writes them, negative ones counting from the end.
  auto axis = [&]() -> std::optional<int64_t> {
    int64_t a = 0;
    if (!shape::normalizeAxis(attrs.value("axis", int64_t(0)), int64_t(in[0].size()), a).empty())
      return std::nullopt;
    return a;
  };
  if (op == "concat" && axis())
    return ok(shape::concat(in, *axis(), out), out);
  if (op == "gather" && in.size() == 2 && axis())
    return ok(shape::gather(in[0], in[1], *axis(), out), out);
  if (op == "broadcast_to")
    return ok(shape::broadcast({in[0], ints("shape")}, out), out);
  if (op == "slice") {
    shape::SliceSpec spec;
    if (!shape::normalizeSlice(in[0], ints("starts"), ints("ends"), ints("axes"), ints("steps"),
                               spec)
             .empty())
      return std::nullopt;
    return ok(shape::slice(in[0], spec, out), out);
  }
  return std::nullopt;
}

} // namespace fusec
