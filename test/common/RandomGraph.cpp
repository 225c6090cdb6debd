//===- RandomGraph.cpp - random pointwise/broadcast/reduction graphs ------===//
#include "test/common/RandomGraph.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <vector>

namespace fusec::test {
namespace {

using Json = nlohmann::json;

struct Value {
  std::string name;
  std::vector<int64_t> shape;
};

class Builder {
public:
  explicit Builder(uint64_t seed) : rng{seed * 7919 + 17} {}
  Json build(int64_t maxElements);

private:
  std::string fresh(const char *p) { return p + std::to_string(counter++); }
  Value input(const std::vector<int64_t> &shape, const std::string &dt);
  Value node(const char *op, std::vector<std::string> ins, std::vector<int64_t> shape,
             Json attrs = Json::object());
  Value unary(const Value &x);
  Value binary(const Value &x, const Value &y);
  Value reduceBroadcast(const Value &x);
  std::vector<int64_t> pickAxes(int rank);
  Value transposedInput(const std::vector<int64_t> &shape);
  std::vector<int64_t> pickShape(int64_t maxElements);

  Rng rng;
  int counter = 0;
  std::string dtype;
  Json inputs = Json::array(), nodes = Json::array();
};

Value Builder::input(const std::vector<int64_t> &shape, const std::string &dt) {
  Value v{fresh("in"), shape};
  inputs.push_back({{"name", v.name}, {"dtype", dt}, {"shape", shape}});
  return v;
}

Value Builder::node(const char *op, std::vector<std::string> ins, std::vector<int64_t> shape,
                    Json attrs) {
  Value v{fresh("n"), std::move(shape)};
  Json n = {{"name", v.name}, {"op", op}, {"inputs", ins}};
  if (!attrs.empty())
    n["attrs"] = attrs;
  nodes.push_back(n);
  return v;
}

bool isFloatName(const std::string &dt) { return dt == "f32" || dt == "f16" || dt == "bf16"; }

Value Builder::unary(const Value &x) {
  if (dtype == "bool")
    return node("where", {x.name, x.name, x.name}, x.shape);
  if (!isFloatName(dtype))
    return node(rng.of<const char *>({"neg", "abs", "relu"}), {x.name}, x.shape);
  // Bounded outputs keep long chains finite.
  const char *op = rng.of<const char *>(
      {"tanh", "sigmoid", "sin", "cos", "gelu", "silu", "abs", "neg", "relu", "erf"});
  Value y = node(op, {x.name}, x.shape,
                 std::string(op) == "gelu" && rng.pick(2) ? Json{{"approximate", "tanh"}}
                                                          : Json::object());
  bool bounded = std::string(op) == "tanh" || std::string(op) == "sigmoid" ||
                 std::string(op) == "sin" || std::string(op) == "cos" || std::string(op) == "erf";
  if (bounded && rng.pick(3) == 0) {  // sqrt/exp/reciprocal on an argument in [0, 1]
    Value a = node("abs", {y.name}, y.shape);
    const char *f = rng.of<const char *>({"sqrt", "exp", "reciprocal"});
    if (std::string(f) == "reciprocal") {
      Value one = node("constant", {}, {}, {{"value", 1.0}, {"dtype", dtype}});
      a = node("add", {a.name, one.name}, a.shape);
    }
    y = node(f, {a.name}, a.shape);
  }
  return y;
}

Value Builder::binary(const Value &x, const Value &y) {
  if (dtype == "bool")
    return node("where", {x.name, y.name, x.name}, x.shape);
  const char *op = rng.of<const char *>({"add", "sub", "mul", "maximum", "minimum"});
  return node(op, {x.name, y.name}, x.shape);
}

/// Axes to reduce: the last (row kernels), the first (column kernels), a
/// middle one (column kernels too: the last dim is kept), or all of them (one
/// long row, split over blocks when long enough).
std::vector<int64_t> Builder::pickAxes(int rank) {
  int kind = rng.pick(4);
  if (kind == 0 || rank == 1)
    return {rank - 1};
  if (kind == 1)
    return {0};
  if (kind == 2 && rank >= 3)
    return {1};
  std::vector<int64_t> all;
  for (int i = 0; i < rank; ++i)
    all.push_back(i);
  return all;
}

/// reduce over some axes (keepdims), then combine with x: the normalization shape.
Value Builder::reduceBroadcast(const Value &x) {
  int rank = x.shape.size();
  std::vector<int64_t> axes = pickAxes(rank);
  std::vector<int64_t> kept = x.shape;
  for (int64_t a : axes)
    kept[a] = 1;
  const char *op = isFloatName(dtype) ? rng.of<const char *>({"sum", "mean", "max", "min"})
                                      : rng.of<const char *>({"sum", "max", "min"});
  if (dtype == "bool")
    return x;
  // A float sum over many elements grows the values by about the square root
  // of its count, and a later sum or cos of those is ill-conditioned: seed
  // 117 summed 1M f32 elements, summed 256 of those (~1e5), and took cos of
  // that, where fp32 rounding alone moves the result by 6% in any order. A
  // mean keeps the kernel and its reduction order the same at unit scale.
  int64_t count = 1;
  for (int64_t a : axes)
    count *= x.shape[a];
  if (isFloatName(dtype) && std::string(op) == "sum" && count > 1024)
    op = "mean";
  Value r = node(op, {x.name}, kept, {{"axes", axes}, {"keepdims", true}});
  const char *combine = rng.of<const char *>({"sub", "add", "maximum"});
  return node(combine, {x.name, r.name}, x.shape);
}

/// An input stored with its last two dims swapped, read through a transpose
/// (the pointwise kernel stages it through shared-memory tiles when both dims
/// are long enough).
Value Builder::transposedInput(const std::vector<int64_t> &shape) {
  int rank = shape.size();
  if (rank < 2)
    return input(shape, dtype);
  std::vector<int64_t> stored = shape, perm;
  std::swap(stored[rank - 1], stored[rank - 2]);
  for (int i = 0; i < rank; ++i)
    perm.push_back(i);
  std::swap(perm[rank - 1], perm[rank - 2]);
  Value t = input(stored, dtype);
  return node("transpose", {t.name}, shape, {{"perm", perm}});
}

std::vector<int64_t> Builder::pickShape(int64_t maxElements) {
  static const std::vector<int64_t> dims = {1, 3, 7, 33, 64, 128, 1023, 4097, 256, 8};
  for (;;) {
    int rank = 1 + rng.pick(3);
    std::vector<int64_t> s;
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) {
      s.push_back(rng.of(dims));
      n *= s.back();
    }
    if (n <= maxElements)
      return s;
  }
}

Json Builder::build(int64_t maxElements) {
  dtype = rng.of<std::string>({"f32", "bf16", "f16", "f32", "bf16", "i32", "i64", "bool"});
  std::vector<int64_t> shape = pickShape(maxElements);
  Value x = input(shape, dtype);
  std::vector<Value> live{x};
  // Broadcast operands: a bias over the last dim, a per-row scale.
  std::vector<int64_t> bias{shape.back()};
  std::vector<int64_t> perRow = shape;
  perRow.back() = 1;
  Value cur = x;
  int steps = 2 + rng.pick(6);
  for (int i = 0; i < steps; ++i) {
    switch (rng.pick(6)) {
    case 0: cur = unary(cur); break;
    case 1: cur = binary(cur, input(bias, dtype)); break;
    case 2: cur = binary(cur, input(rng.pick(2) ? perRow : shape, dtype)); break;
    case 3: cur = reduceBroadcast(cur); break;
    case 4: cur = binary(cur, transposedInput(shape)); break;
    default: {
      // where(cmp(a, b), cur, other) with the comparison on inputs only.
      Value a = input(shape, dtype), b = input(bias, dtype);
      Value c = node(rng.of<const char *>({"lt", "ge", "eq", "ne"}), {a.name, b.name}, shape);
      cur = node("where", {c.name, cur.name, a.name}, shape);
    }
    }
    live.push_back(cur);
  }
  if (nodes.empty())
    cur = unary(cur);
  Json outputs = Json::array({cur.name});
  // Sometimes also an intermediate (multi-output groups) or a reduction alone.
  if (live.size() > 2 && rng.pick(2))
    outputs.push_back(live[1 + rng.pick(live.size() - 2)].name);
  if (dtype != "bool" && rng.pick(3) == 0) {
    // A float mean of |cur|, not of cur: a mean of values of both signs
    // cancels (seed 137's mean of x - mean(x) is 0 but for rounding; seed
    // 117's mean of 1M cosines is 4e-3 against terms of 1), and its relative
    // error then measures the cancellation, not the kernel.
    Value src = isFloatName(dtype) ? node("abs", {cur.name}, cur.shape) : cur;
    Value r = node(isFloatName(dtype) ? "mean" : "sum", {src.name}, {},
                   {{"axes", pickAxes(shape.size())}});
    outputs.push_back(r.name);
  }
  return {{"fusec", 1}, {"name", "random"}, {"inputs", inputs}, {"nodes", nodes},
          {"outputs", outputs}};
}

} // namespace

std::string randomGraph(uint64_t seed, int64_t maxElements) {
  return Builder(seed).build(maxElements).dump(1);
}

} // namespace fusec::test
