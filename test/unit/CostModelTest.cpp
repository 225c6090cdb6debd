//===- CostModelTest.cpp - what the cost model counts for matmul prologues ===//
//
// A matmul prologue (ops computing an operand while the kernel loads it) is
// charged per element as often as each kernel computes it: the portable
// GEMM once per 64-wide tile of the other dim, the dot-product kernel A once
// per 8-row block when it fits its shared-memory stage (once per weight row
// when not) and B once. These pin what `fusec explain` predicts from.
//
//===----------------------------------------------------------------------===//
#include "compiler/cost/CostModel.h"
#include "compiler/families/KernelFamily.h"
#include "compiler/schedule/GemmForms.h"
#include "compiler/dialect/FusecDialect.h"
#include "frontends/json/GraphReader.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <string>

using namespace fusec;

namespace {

/// (silu(gate) * up) @ w: gate and up [m, k], w [k, n]; `prologueOnB` puts a
/// silu on w instead.
std::string graph(int m, int k, int n, bool prologueOnB) {
  std::string M = std::to_string(m), K = std::to_string(k), N = std::to_string(n);
  std::string in = "{\"name\": \"gate\", \"dtype\": \"bf16\", \"shape\": [" + M + ", " + K +
                   "]}, {\"name\": \"up\", \"dtype\": \"bf16\", \"shape\": [" + M + ", " + K +
                   "]}, {\"name\": \"w\", \"dtype\": \"bf16\", \"shape\": [" + K + ", " + N + "]}";
  std::string nodes =
      prologueOnB
          ? "{\"name\": \"a\", \"op\": \"mul\", \"inputs\": [\"gate\", \"up\"]}, "
            "{\"name\": \"ws\", \"op\": \"silu\", \"inputs\": [\"w\"]}, "
            "{\"name\": \"y\", \"op\": \"matmul\", \"inputs\": [\"a\", \"ws\"]}"
          : "{\"name\": \"g\", \"op\": \"silu\", \"inputs\": [\"gate\"]}, "
            "{\"name\": \"a\", \"op\": \"mul\", \"inputs\": [\"g\", \"up\"]}, "
            "{\"name\": \"y\", \"op\": \"matmul\", \"inputs\": [\"a\", \"w\"]}";
  return "{\"fusec\": 1, \"name\": \"p\", \"inputs\": [" + in + "], \"nodes\": [" + nodes +
         "], \"outputs\": [\"y\"]}";
}

struct Counted {
  size_t prologueOps = 0;
  Cost all, matmulAlone;
};

Counted count(const std::string &text) {
  mlir::MLIRContext ctx;
  auto module = importGraphText(text, "p.json", ctx);
  EXPECT_TRUE(bool(module)) << llvm::toString(module.takeError());
  Counted c;
  if (!module)
    return c;
  std::vector<mlir::Operation *> ops;
  mlir::Operation *mm = nullptr;
  for (mlir::Operation &op : graphFunction(**module).getBody().front().without_terminator()) {
    ops.push_back(&op);
    if (llvm::isa<MatmulOp>(op))
      mm = &op;
  }
  EXPECT_NE(mm, nullptr);
  if (!mm)
    return c;
  c.prologueOps = matmulPrologue(mm, ops).size();
  c.all = groupCost(ops);
  c.matmulAlone = groupCost({mm});
  return c;
}

} // namespace

TEST(CostModel, PrologueOnAIsCountedPerTileAndPerBlock) {
  // 4 x 2048 @ 2048 x 1024: A is 8192 elements and fits the 48 KB stage.
  Counted c = count(graph(4, 2048, 1024, false));
  EXPECT_EQ(c.prologueOps, 2u);
  EXPECT_EQ(c.all.prologueTileElements, 4 * 2048 * (1024 / 64));
  EXPECT_EQ(c.all.prologueGemvElements, 4 * 2048 * (1024 / 8));
  // The prologue's inputs are read before the products, not as an epilogue.
  EXPECT_EQ(c.all.epilogueBytes, 0);
  EXPECT_EQ(c.matmulAlone.prologueTileElements, 0);
  EXPECT_EQ(c.matmulAlone.prologueGemvElements, 0);
}

TEST(CostModel, PrologueOnALargerThanTheStageIsCountedPerWeightRow) {
  // 8 x 4096 bf16 is 64 KB: every warp (one per weight row) computes it.
  Counted c = count(graph(8, 4096, 100, false));
  EXPECT_EQ(c.all.prologueGemvElements, 8 * 4096 * 100);
  EXPECT_EQ(c.all.prologueTileElements, 8 * 4096 * 2);  // 100 columns: two 64-wide tiles
}

TEST(CostModel, PrologueOnBIsCountedPerRowTileAndOnceByTheDotProduct) {
  // mul(gate, up) on A and silu on B: both operands computed.
  Counted c = count(graph(130, 64, 32, true));
  EXPECT_EQ(c.prologueOps, 2u);
  EXPECT_EQ(c.all.prologueTileElements, 130 * 64 * 1 + 64 * 32 * 3);  // 130 rows: 3 tiles
  EXPECT_EQ(c.all.prologueGemvElements, 130 * 64 * 4 + 64 * 32);      // 32 columns: 4 blocks
}

TEST(CostModel, PrologueCostsTheOwnKernelsOnly) {
  Counted c = count(graph(4, 2048, 1024, false));
  DeviceProfile p = *measuredProfile("h100", {});
  Cost noPrologue = c.all;
  noPrologue.prologueTileElements = noPrologue.prologueGemvElements = 0;
  EXPECT_GT(predictSeconds(c.all, p, GemmPath::Fusec), predictSeconds(noPrologue, p, GemmPath::Fusec));
  EXPECT_GT(predictSeconds(c.all, p, GemmPath::FusecGemv),
            predictSeconds(noPrologue, p, GemmPath::FusecGemv));
  // cuBLASLt never runs a prologue: its prediction ignores the count.
  EXPECT_EQ(predictSeconds(c.all, p, GemmPath::Library), predictSeconds(noPrologue, p, GemmPath::Library));
}

// The dot-product kernel's pricing follows its rows, not the product's flops
// per byte: 9-64 rows of one matrix run on its tensor-core form (priced at
// fusec GEMM's memory fraction, as measured), a batch of 8-row products with
// one shared weight (many flops per weight byte) still on CUDA cores.
TEST(CostModel, DotProductPathFollowsTheRows) {
  // (The path chosen is read from the planner's attributes and the shape:
  // a matmul stands for the linear layer here.)
  auto linear = [](const std::string &x) {
    return "{\"fusec\": 1, \"name\": \"l\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"bf16\", "
           "\"shape\": " + x + "}, {\"name\": \"w\", \"dtype\": \"bf16\", \"shape\": [4096, 4096]}], "
           "\"nodes\": [{\"name\": \"y\", \"op\": \"matmul\", \"inputs\": [\"x\", \"w\"]}], "
           "\"outputs\": [\"y\"]}";
  };
  DeviceProfile p = *measuredProfile("h100", {});
  for (auto [x, path] : {std::pair<std::string, GemmPath>{"[32, 4096]", GemmPath::FusecTensorGemv},
                         {"[8, 8, 4096]", GemmPath::FusecGemv},
                         {"[4, 4096]", GemmPath::FusecGemv}}) {
    mlir::MLIRContext ctx;
    auto module = importGraphText(linear(x), "l.json", ctx);
    ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
    mlir::Operation *mm = nullptr;
    graphFunction(**module).walk([&](MatmulOp op) { mm = op; });
    ASSERT_NE(mm, nullptr);
    setChosenGemmPath(mm, gemvPath(mm));
    EXPECT_EQ(chosenGemmPath(mm), path) << x;
  }
  Cost c;
  c.bytes = 34 << 20;
  c.tensorFlops = int64_t(2) * 32 * 4096 * 4096;
  EXPECT_NEAR(predictSeconds(c, p, GemmPath::FusecTensorGemv) /
                  predictSeconds(c, p, GemmPath::FusecGemv),
              p.gemvBandwidthFraction / p.gemmBandwidthFraction, 1e-3);
}

// A batch of few-row products streams its B like a split-K GEMM when K is
// long and the batch fills the GPU (decode attention's probabilities @ V at
// 32 sequences, measured at 88% of the copy rate; 8 matrices at one token,
// 23%), and leaves the tiles idle when K is the head dim (the scores).
TEST(CostModel, BatchedFewRowProductsFollowTheirDepth) {
  auto batched = [](int rows, int k, int n, int batch) {
    std::string R = std::to_string(rows), K = std::to_string(k),
                N = std::to_string(n), B = std::to_string(batch);
    return "{\"fusec\": 1, \"name\": \"b\", \"inputs\": [{\"name\": \"p\", \"dtype\": \"bf16\", "
           "\"shape\": [" + B + ", " + R + ", " + K + "]}, {\"name\": \"v\", \"dtype\": \"bf16\", "
           "\"shape\": [" + B + ", " + K + ", " + N + "]}], \"nodes\": [{\"name\": \"o\", \"op\": "
           "\"matmul\", \"inputs\": [\"p\", \"v\"]}], \"outputs\": [\"o\"]}";
  };
  DeviceProfile p = *measuredProfile("h100", {});
  for (auto [rows, k, path] : {std::tuple<int, int, GemmPath>{4, 4096, GemmPath::FusecBatchedStream},
                               {8, 4097, GemmPath::FusecBatchedStream},
                               {4, 128, GemmPath::FusecBatchedRows},
                               {4, 129, GemmPath::FusecBatchedStream},
                               {-8, 4097, GemmPath::Fusec},  // 8 matrices only
                               {-127, 4097, GemmPath::Fusec},  // 127 matrices
                               {-128, 4097, GemmPath::FusecBatchedStream},
                               {16, 4096, GemmPath::Fusec}}) {
    mlir::MLIRContext ctx;
    // A negative count is the batch, of 4-row matrices.
    auto module = importGraphText(rows < 0 ? batched(4, k, 128, -rows) : batched(rows, k, 128, 256),
                                  "b.json", ctx);
    ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
    mlir::Operation *mm = nullptr;
    graphFunction(**module).walk([&](MatmulOp op) { mm = op; });
    ASSERT_NE(mm, nullptr);
    EXPECT_EQ(fusecGemmPaths(mm, false, "sm_90a", p).path, path) << rows << " x " << k;
  }
  Cost c;
  c.bytes = int64_t(277) << 20;
  c.tensorFlops = int64_t(2) * 256 * 4 * 4096 * 128;
  c.launches = 1;
  EXPECT_NEAR(predictSeconds(c, p, GemmPath::FusecBatchedStream),
              double(c.bytes) / (p.hbmBytesPerSec * p.libraryBandwidthFraction) + p.launchSeconds, 1e-9);
}

// cuBLASLt runs products whose output rows are not 16-byte multiples several
// times slower (docs/cost-model.md, "Unaligned outputs"): their flops are
// counted apart and the library paths price them so, fusec's GEMM does not.
TEST(CostModel, UnalignedOutputRowsSlowTheLibraryOnly) {
  DeviceProfile p = *measuredProfile("h200", {});
  auto costOf = [&](int n) {
    std::string text = graph(4096, 4096, n, false);
    return count(text).matmulAlone;
  };
  Cost aligned = costOf(32000), half = costOf(4100), odd = costOf(32001);
  EXPECT_EQ(aligned.unalignedTensorFlops + aligned.halfAlignedTensorFlops, 0);
  EXPECT_EQ(half.halfAlignedTensorFlops, half.tensorFlops);
  EXPECT_EQ(half.unalignedTensorFlops, 0);
  EXPECT_EQ(odd.unalignedTensorFlops, odd.tensorFlops);
  // Per flop: about 7x slower unaligned, 2.5x with 8-byte rows, on cuBLASLt;
  // the same on fusec's wgmma GEMM.
  auto perFlop = [&](const Cost &c, KernelFamily f) {
    return predictSeconds(c, p, f) / static_cast<double>(c.tensorFlops);
  };
  const double lib = perFlop(aligned, KernelFamily::Library);
  EXPECT_GT(perFlop(odd, KernelFamily::Library), 5 * lib);
  EXPECT_GT(perFlop(half, KernelFamily::Library), 2 * lib);
  EXPECT_LT(perFlop(half, KernelFamily::Library), perFlop(odd, KernelFamily::Library));
  EXPECT_GT(perFlop(odd, KernelFamily::LibraryEpilogue), 5 * lib);
  EXPECT_NEAR(perFlop(odd, KernelFamily::FusecWgmma), perFlop(aligned, KernelFamily::FusecWgmma),
              0.05 * perFlop(aligned, KernelFamily::FusecWgmma));
}
