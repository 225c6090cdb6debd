//===- RandomRowStatsGraph.cpp - random log-sum-exp over products ---------===//
#include "test/common/RandomGraph.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace fusec::test {

std::string randomRowStatsGraph(uint64_t seed) {
  using Json = nlohmann::json;
  Rng rng{seed * 0x2545F4914F6CDD1Dull + 0x9E3779B97F4A7C15ull};
  const bool batched = rng.pick(3) == 0;
  const int64_t m = rng.of<int64_t>({1, 7, 77, 130, 300});
  const int64_t n = rng.of<int64_t>({1, 33, 1000, 4097, 8192});
  const int64_t k = rng.of<int64_t>({16, 40, 64, 96, 128});
  const std::string dt = rng.pick(2) ? "bf16" : "f16";
  const bool weightRows = rng.pick(3) != 0;  // w as [N, K] (a vocabulary's rows)
  const bool upcast = rng.pick(2) == 0;
  const bool scaled = rng.pick(2) == 0, bias = rng.pick(3) == 0;
  // Columns past a vocabulary size masked to -inf (padding a vocabulary to
  // a multiple of 64), in some graphs every column of the row.
  const int padding = rng.pick(4);
  const int outputs = rng.pick(3);  // lse; lse and the max; the loss against a target logit
  std::vector<int64_t> lead = batched ? std::vector<int64_t>{2} : std::vector<int64_t>{};
  auto shape = [&](std::vector<int64_t> tail) {
    std::vector<int64_t> s = lead;
    s.insert(s.end(), tail.begin(), tail.end());
    return s;
  };
  const std::string ct = upcast ? "f32" : dt;
  Json g;
  g["fusec"] = 1;
  g["name"] = "random_row_stats_" + std::to_string(seed);
  Json inputs = Json::array(), nodes = Json::array();
  inputs.push_back({{"name", "h"}, {"dtype", dt}, {"shape", shape({m, k})}});
  if (weightRows) {
    inputs.push_back({{"name", "w"}, {"dtype", dt}, {"shape", {n, k}}});
    nodes.push_back({{"name", "wt"}, {"op", "transpose"}, {"inputs", {"w"}},
                     {"attrs", {{"perm", {1, 0}}}}});
  } else {
    inputs.push_back({{"name", "wt"}, {"dtype", dt}, {"shape", {k, n}}});
  }
  nodes.push_back({{"name", "logits"}, {"op", "matmul"}, {"inputs", {"h", "wt"}}});
  std::string x = "logits";
  auto add = [&](const std::string &name, const std::string &op, Json in, Json attrs = nullptr) {
    Json node = {{"name", name}, {"op", op}, {"inputs", in}};
    if (!attrs.is_null())
      node["attrs"] = attrs;
    nodes.push_back(node);
    x = name;
  };
  if (upcast)
    add("x32", "cast", {x}, {{"dtype", "f32"}});
  if (scaled) {
    nodes.push_back({{"name", "c"}, {"op", "constant"}, {"attrs", {{"value", 0.125}, {"dtype", ct}}}});
    add("xs", "mul", {x, "c"});
  }
  if (bias) {
    inputs.push_back({{"name", "bias"}, {"dtype", ct}, {"shape", {n}}});
    add("xb", "add", {x, "bias"});
  }
  if (padding) {
    const int64_t vocab = padding == 3 ? 0 : std::max<int64_t>(1, n - 17 * padding);
    nodes.push_back({{"name", "col"}, {"op", "iota"},
                     {"attrs", {{"shape", {n}}, {"dim", 0}, {"dtype", "i64"}}}});
    nodes.push_back({{"name", "vocab"}, {"op", "constant"},
                     {"attrs", {{"value", vocab}, {"dtype", "i64"}}}});
    nodes.push_back({{"name", "inside"}, {"op", "lt"}, {"inputs", {"col", "vocab"}}});
    nodes.push_back({{"name", "ninf"}, {"op", "constant"}, {"attrs", {{"value", "-inf"}, {"dtype", ct}}}});
    add("xm", "where", {"inside", x, "ninf"});
  }
  const Json lastAxis = {{"axes", -1}, {"keepdims", true}};
  nodes.push_back({{"name", "mx"}, {"op", "max"}, {"inputs", {x}}, {"attrs", lastAxis}});
  nodes.push_back({{"name", "d"}, {"op", "sub"}, {"inputs", {x, "mx"}}});
  nodes.push_back({{"name", "e"}, {"op", "exp"}, {"inputs", {"d"}}});
  nodes.push_back({{"name", "l"}, {"op", "sum"}, {"inputs", {"e"}}, {"attrs", lastAxis}});
  nodes.push_back({{"name", "logl"}, {"op", "log"}, {"inputs", {"l"}}});
  nodes.push_back({{"name", "lse"}, {"op", "add"}, {"inputs", {"logl", "mx"}}});
  Json outs = {"lse"};
  if (outputs == 1)
    outs.push_back("mx");
  if (outputs == 2) {
    // The target's logit given, or picked from the logits by its index
    // (i32 or i64; random ints fall outside [0, N) too, and pick 0 there).
    const int picked = rng.pick(3);
    std::string targetLogit = "target_logit", lossOp = "sub";
    if (picked) {
      const std::string it = picked == 1 ? "i32" : "i64";
      inputs.push_back({{"name", "target"}, {"dtype", it}, {"shape", shape({m, 1})}});
      nodes.push_back({{"name", "tcol"}, {"op", "iota"},
                       {"attrs", {{"shape", shape({m, n})}, {"dim", lead.size() + 1}, {"dtype", it}}}});
      nodes.push_back({{"name", "hit"}, {"op", "eq"}, {"inputs", {"tcol", "target"}}});
      nodes.push_back({{"name", "zero"}, {"op", "constant"}, {"attrs", {{"value", 0}, {"dtype", ct}}}});
      // Picked from the logits, or (as a log-softmax then a pick) from the
      // log-probabilities x - m - log l and negated: the same loss, which
      // -fusec-pick-early turns into the first form.
      const bool fromLogProbs = rng.pick(2) == 0;
      if (fromLogProbs)
        nodes.push_back({{"name", "logp"}, {"op", "sub"}, {"inputs", {"d", "logl"}}});
      nodes.push_back({{"name", "xt"}, {"op", "where"},
                       {"inputs", {"hit", fromLogProbs ? "logp" : x, "zero"}}});
      nodes.push_back({{"name", "picked"}, {"op", "sum"}, {"inputs", {"xt"}}, {"attrs", lastAxis}});
      targetLogit = "picked";
      if (fromLogProbs)
        lossOp = "neg";
    } else {
      inputs.push_back({{"name", "target_logit"}, {"dtype", ct}, {"shape", shape({m, 1})}});
    }
    if (lossOp == "neg")
      nodes.push_back({{"name", "loss"}, {"op", "neg"}, {"inputs", {targetLogit}}});
    else
      nodes.push_back({{"name", "loss"}, {"op", "sub"}, {"inputs", {"lse", targetLogit}}});
    outs = {"loss"};
  }
  g["inputs"] = inputs;
  g["nodes"] = nodes;
  g["outputs"] = outs;
  return g.dump();
}

} // namespace fusec::test
