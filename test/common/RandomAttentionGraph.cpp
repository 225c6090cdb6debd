//===- RandomAttentionGraph.cpp - random attention graphs ------------------===//
#include "test/common/RandomGraph.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace fusec::test {
namespace {

/// With `transposed`, the output [b, h, l, d] goes back to tokens, [b, l, h,
/// d] (what a model's output projection reads).
void addTokenTranspose(nlohmann::json &g, bool transposed) {
  if (!transposed)
    return;
  g["nodes"].push_back({{"name", "o_tokens"},
                        {"op", "transpose"},
                        {"inputs", {"o"}},
                        {"attrs", {{"perm", {0, 2, 1, 3}}}}});
  g["outputs"] = nlohmann::json::array({"o_tokens"});
}

} // namespace

std::string randomAttentionGraph(uint64_t seed) {
  using Json = nlohmann::json;
  Rng rng{seed * 2862933555777941757ull + 3037000493ull};
  auto pick = [&](int n) { return rng.pick(n); };
  const int64_t b = 1 + pick(2), h = std::vector<int64_t>{1, 3, 4}[pick(3)];
  const int64_t l = std::vector<int64_t>{64, 77, 130, 200, 257}[pick(5)];
  const int64_t keys = std::vector<int64_t>{1, 8, 77, 128, 200, 333}[pick(6)];
  const int64_t d = std::vector<int64_t>{16, 64, 80, 96, 128, 256}[pick(6)];
  const std::string dt = pick(2) ? "bf16" : "f16";
  const bool causal = pick(2) == 0;
  const int mask = pick(3);  // none, additive over keys, boolean rows x keys
  Json g;
  g["fusec"] = 1;
  g["name"] = "random_attention_" + std::to_string(seed);
  Json inputs = Json::array();
  inputs.push_back({{"name", "q"}, {"dtype", dt}, {"shape", {b, h, l, d}}});
  inputs.push_back({{"name", "k"}, {"dtype", dt}, {"shape", {b, h, keys, d}}});
  inputs.push_back({{"name", "v"}, {"dtype", dt}, {"shape", {b, h, keys, d}}});
  Json args = {"q", "k", "v"};
  if (mask == 1)
    inputs.push_back({{"name", "mask"}, {"dtype", dt}, {"shape", {b, 1, 1, keys}}});
  if (mask == 2)
    inputs.push_back({{"name", "mask"}, {"dtype", "bool"}, {"shape", {1, 1, l, keys}}});
  if (mask)
    args.push_back("mask");
  g["inputs"] = inputs;
  g["nodes"] = Json::array({{{"name", "o"},
                             {"op", "scaled_dot_product_attention"},
                             {"inputs", args},
                             {"attrs", {{"causal", causal}}}}});
  g["outputs"] = Json::array({"o"});
  addTokenTranspose(g, pick(2) == 0);
  return g.dump();
}

std::string randomDecodeAttentionGraph(uint64_t seed) {
  using Json = nlohmann::json;
  Rng rng{seed * 6364136223846793005ull + 1442695040888963407ull};
  const int64_t b = 1 + rng.pick(2), kv = rng.of<int64_t>({1, 2, 4});
  const int64_t rep = rng.of<int64_t>({1, 2, 4, 8}), h = kv * rep;
  const int64_t l = rng.of<int64_t>({1, 2, 5, 16, 40});
  const int64_t keys = rng.of<int64_t>({3, 77, 1000, 4097, 9000});
  const int64_t d = rng.of<int64_t>({16, 64, 80, 128, 256});
  const std::string dt = rng.pick(2) ? "bf16" : "f16";
  const int64_t appended = keys > 2 ? rng.pick(3) : 0;  // rows joined to the cache
  const int mask = rng.pick(3);                           // none, additive over keys, causal
  Json g;
  g["fusec"] = 1;
  g["name"] = "random_decode_attention_" + std::to_string(seed);
  Json inputs = Json::array(), nodes = Json::array();
  inputs.push_back({{"name", "q"}, {"dtype", dt}, {"shape", {b, h, l, d}}});
  for (const char *x : {"k", "v"}) {
    std::string name = x;
    if (appended) {
      inputs.push_back({{"name", name + "_cache"}, {"dtype", dt}, {"shape", {b, kv, keys - appended, d}}});
      inputs.push_back({{"name", name + "_new"}, {"dtype", dt}, {"shape", {b, kv, appended, d}}});
      nodes.push_back({{"name", name + "_all"}, {"op", "concat"},
                       {"inputs", {name + "_cache", name + "_new"}}, {"attrs", {{"axis", 2}}}});
      name += "_all";
    } else {
      inputs.push_back({{"name", name}, {"dtype", dt}, {"shape", {b, kv, keys, d}}});
    }
    if (rep > 1) {  // each K/V head repeated for `rep` query heads
      nodes.push_back({{"name", std::string(x) + "_1"}, {"op", "reshape"}, {"inputs", {name}},
                       {"attrs", {{"shape", {b, kv, 1, keys, d}}}}});
      nodes.push_back({{"name", std::string(x) + "_rep"}, {"op", "broadcast_to"},
                       {"inputs", {std::string(x) + "_1"}},
                       {"attrs", {{"shape", {b, kv, rep, keys, d}}}}});
      nodes.push_back({{"name", std::string(x) + "_heads"}, {"op", "reshape"},
                       {"inputs", {std::string(x) + "_rep"}},
                       {"attrs", {{"shape", {b, h, keys, d}}}}});
      name = std::string(x) + "_heads";
    }
    g[std::string("_") + x] = name;
  }
  Json args = {"q", g["_k"], g["_v"]};
  g.erase("_k");
  g.erase("_v");
  if (mask == 1) {
    inputs.push_back({{"name", "mask"}, {"dtype", dt}, {"shape", {b, 1, 1, keys}}});
    args.push_back("mask");
  }
  nodes.push_back({{"name", "o"},
                   {"op", "scaled_dot_product_attention"},
                   {"inputs", args},
                   {"attrs", {{"causal", mask == 2}}}});
  g["inputs"] = inputs;
  g["nodes"] = nodes;
  g["outputs"] = Json::array({"o"});
  addTokenTranspose(g, rng.pick(2) == 0);
  return g.dump();
}

} // namespace fusec::test
