//===- RandomAttentionGraph.cpp - random attention graphs ------------------===//
#include "test/common/RandomGraph.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace fusec::test {

std::string randomAttentionGraph(uint64_t seed) {
  using Json = nlohmann::json;
  Rng rng{seed * 2862933555777941757ull + 3037000493ull};
  auto pick = [&](int n) { return rng.pick(n); };
  const int64_t b = 1 + pick(2), h = std::vector<int64_t>{1, 3, 4}[pick(3)];
  const int64_t l = std::vector<int64_t>{64, 77, 130, 200, 257}[pick(5)];
  const int64_t keys = std::vector<int64_t>{1, 8, 77, 128, 200, 333}[pick(6)];
  const int64_t d = std::vector<int64_t>{16, 64, 80, 96, 128}[pick(5)];
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
  return g.dump();
}

} // namespace fusec::test
