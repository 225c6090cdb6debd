//===- MatmulTuningTest.cpp - which cuBLASLt algorithm a plan asks for ----===//
//
// A product the plan gives cuBLASLt carries a tuning key; `--autotune`'s
// candidate i asks for the heuristic's i-th usable result, and a tuned key in
// the cache ("rank N") is what a later compile asks for.
//
//===----------------------------------------------------------------------===//
#include "compiler/pipeline/Compile.h"
#include "frontends/json/GraphReader.h"
#include "compiler/plan/MatmulTuning.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace fusec;

namespace {

// 32 rows through a [6144, 4096] weight: decode Q/K/V, a cuBLASLt product.
const char *kQkv = R"({"fusec": 1, "name": "qkv32",
  "inputs": [{"name": "x", "dtype": "bf16", "shape": [32, 4096]},
             {"name": "w", "dtype": "bf16", "shape": [6144, 4096]}],
  "nodes": [{"name": "y", "op": "linear", "inputs": ["x", "w"]}],
  "outputs": ["y"]})";

llvm::Expected<PlanDesc> plan(mlir::MLIRContext &ctx, const CompileOptions &o) {
  auto module = importGraphText(kQkv, "qkv32.json", ctx);
  if (!module)
    return module.takeError();
  if (llvm::Error err = fuseModule(**module, o))
    return std::move(err);
  return buildPlan(**module, o);
}

const PlanMatmul *onlyMatmul(const PlanDesc &p) {
  const PlanMatmul *m = nullptr;
  for (const PlanStep &s : p.steps)
    if (s.kind == PlanStep::Kind::Matmul) {
      EXPECT_EQ(m, nullptr) << "more than one cuBLASLt step";
      m = &s.matmul;
    }
  return m;
}

TEST(MatmulTuning, RankConfigsRoundTrip) {
  for (int r : {0, 1, 4, 17})
    EXPECT_EQ(parseMatmulRankConfig(matmulRankConfig(r)), r);
  for (const char *bad : {"", "rank", "rank -1", "rank x", "128x256x64 w64x64 s4 k1", "Rank 2"})
    EXPECT_EQ(parseMatmulRankConfig(bad), std::nullopt) << bad;
}

TEST(MatmulTuning, CandidateAndTunedRankReachThePlan) {
  mlir::MLIRContext ctx;
  CompileOptions o;
  o.arch = "sm_90a";
  o.gemm = "cublaslt";
  auto base = plan(ctx, o);
  ASSERT_TRUE(bool(base)) << llvm::toString(base.takeError());
  const PlanMatmul *m = onlyMatmul(*base);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->algoRank, 0);  // untuned: the heuristic's first choice
  EXPECT_EQ(m->tuningKey, matmulTuningKey(m->desc, "sm_90a"));
  EXPECT_EQ(m->tuningKey.find("cublaslt sm_90a bf16"), 0u) << m->tuningKey;
  const std::string key = m->tuningKey;

  // Autotuning's candidate 3: rank 3.
  CompileOptions c = o;
  c.gemmCandidate = 3;
  mlir::MLIRContext ctx2;
  auto tried = plan(ctx2, c);
  ASSERT_TRUE(bool(tried)) << llvm::toString(tried.takeError());
  ASSERT_NE(onlyMatmul(*tried), nullptr);
  EXPECT_EQ(onlyMatmul(*tried)->algoRank, 3);

  // A tuned entry; one for another architecture, or not a rank, is ignored.
  for (auto [entry, want] : std::vector<std::pair<std::string, int>>{
           {"rank 4", 4}, {"not a rank", 0}}) {
    CompileOptions t = o;
    t.gemmTuning[key] = entry;
    t.gemmTuning[matmulTuningKey(m->desc, "sm_80")] = "rank 2";
    mlir::MLIRContext ctx3;
    auto tuned = plan(ctx3, t);
    ASSERT_TRUE(bool(tuned)) << llvm::toString(tuned.takeError());
    ASSERT_NE(onlyMatmul(*tuned), nullptr);
    EXPECT_EQ(onlyMatmul(*tuned)->algoRank, want) << entry;
  }
}

} // namespace
