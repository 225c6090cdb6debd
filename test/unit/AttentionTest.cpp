//===- AttentionTest.cpp - the streamed softmax between two products ------===//
//
// Attention from primitives and from the composite becomes one attention
// kernel, keeps its values in the interpreter (fused against unfused), and
// every generated attention kernel compiles with NVRTC for sm_90a and sm_80.
//
//===----------------------------------------------------------------------===//
#include "compiler/cost/DeviceProfile.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/families/KernelFamily.h"
#include "compiler/schedule/AttentionForm.h"
#include "compiler/plan/PlanDesc.h"
#include "runtime/Nvrtc.h"
#include "test/common/RandomGraph.h"
#include "test/unit/PlanTestUtil.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <string>

namespace fusec {
namespace {

using testing::expectKernelsCompile;
using testing::expectSameResults;
using testing::planFor;

/// Inputs q [2, 3, L, D], k and v [2, 3, S, D] of `dtype`, as JSON.
std::string qkvInputs(int L, int S, int D, const char *dtype) {
  auto input = [&](const char *name, int rows) {
    return std::string("{\"name\": \"") + name + "\", \"dtype\": \"" + dtype +
           "\", \"shape\": [2, 3, " + std::to_string(rows) + ", " + std::to_string(D) + "]}";
  };
  return input("q", L) + "," + input("k", S) + "," + input("v", S);
}

/// scaled_dot_product_attention over [B, H, L, D] x [B, H, S, D].
std::string sdpaGraph(int L, int S, int D, const char *dtype, bool causal) {
  return "{\"fusec\": 1, \"name\": \"sdpa\", \"inputs\": [" + qkvInputs(L, S, D, dtype) +
         "], \"nodes\": [{\"name\": \"o\", \"op\": \"scaled_dot_product_attention\", "
         "\"inputs\": [\"q\", \"k\", \"v\"], \"attrs\": {\"causal\": " +
         (causal ? "true" : "false") + "}}], \"outputs\": [\"o\"]}";
}

/// The same from primitives, with a scale, an additive mask over keys and
/// softmax written out: what the composite decomposes into, so that the
/// interpreter computes the two modules op for op.
std::string primitivesGraph(int L, int S, int D, const char *dtype, bool upcast = false) {
  std::string t = std::string("\"") + dtype + "\"";
  // With `upcast`, the scores are cast to f32 for the softmax and the
  // probabilities back to `dtype` for the product (as models that upcast
  // their softmax are exported).
  std::string st = upcast ? "\"f32\"" : t;
  return "{\"fusec\": 1, \"name\": \"prims\", \"inputs\": [" + qkvInputs(L, S, D, dtype) +
         ", {\"name\": \"mask\", \"dtype\": " + t + ", \"shape\": [2, 1, 1, " + std::to_string(S) +
         "]}], \"nodes\": ["
         "{\"name\": \"kt\", \"op\": \"transpose\", \"inputs\": [\"k\"], \"attrs\": {\"perm\": [0, 1, 3, 2]}},"
         "{\"name\": \"s16\", \"op\": \"matmul\", \"inputs\": [\"q\", \"kt\"]},"
         "{\"name\": \"s\", \"op\": \"cast\", \"inputs\": [\"s16\"], \"attrs\": {\"dtype\": " + st + "}},"
         "{\"name\": \"c\", \"op\": \"constant\", \"attrs\": {\"value\": 0.25, \"dtype\": " + st + "}},"
         "{\"name\": \"mc\", \"op\": \"cast\", \"inputs\": [\"mask\"], \"attrs\": {\"dtype\": " + st + "}},"
         "{\"name\": \"sc\", \"op\": \"mul\", \"inputs\": [\"s\", \"c\"]},"
         "{\"name\": \"x\", \"op\": \"add\", \"inputs\": [\"sc\", \"mc\"]},"
         "{\"name\": \"m\", \"op\": \"max\", \"inputs\": [\"x\"], \"attrs\": {\"axes\": -1, \"keepdims\": true}},"
         "{\"name\": \"d\", \"op\": \"sub\", \"inputs\": [\"x\", \"m\"]},"
         "{\"name\": \"e\", \"op\": \"exp\", \"inputs\": [\"d\"]},"
         "{\"name\": \"l\", \"op\": \"sum\", \"inputs\": [\"e\"], \"attrs\": {\"axes\": -1, \"keepdims\": true}},"
         "{\"name\": \"p32\", \"op\": \"div\", \"inputs\": [\"e\", \"l\"]},"
         "{\"name\": \"p\", \"op\": \"cast\", \"inputs\": [\"p32\"], \"attrs\": {\"dtype\": " + t + "}},"
         "{\"name\": \"o\", \"op\": \"matmul\", \"inputs\": [\"p\", \"v\"]}],"
         "\"outputs\": [\"o\"]}";
}

/// The plan's one attention kernel, or a failure.
const PlanKernel *attentionKernel(const PlanDesc &plan) {
  const PlanKernel *found = nullptr;
  for (const PlanStep &st : plan.steps)
    if (st.kind == PlanStep::Kind::Kernel && st.kernel.family == "attention")
      found = &st.kernel;
  return found;
}

TEST(Attention, CompositeAndPrimitivesBecomeOneKernel) {
  for (bool upcast : {false, true}) {
    mlir::MLIRContext ctx;
    auto plan =
        planFor(ctx, primitivesGraph(77, 100, 64, "bf16", upcast), "prims.json", true, "sm_90a");
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    ASSERT_EQ(plan->steps.size(), 1u) << "upcast " << upcast;
    ASSERT_NE(attentionKernel(*plan), nullptr);
    if (llvm::Error err = loadNvrtc())
      llvm::consumeError(std::move(err));
    else
      expectKernelsCompile(upcast ? "upcast softmax" : "primitives", *plan);
  }
  for (bool causal : {false, true}) {
    mlir::MLIRContext ctx;
    auto plan = planFor(ctx, sdpaGraph(200, 100, 64, "bf16", causal), "sdpa.json", true, "sm_90a");
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    ASSERT_EQ(plan->steps.size(), 1u) << "causal " << causal;
    const PlanKernel *k = attentionKernel(*plan);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->grid, 2u);   // 200 queries: two tiles of 128
    EXPECT_EQ(k->gridY, 6u);  // 2 x 3 heads
    EXPECT_NE(k->schedule.find("the scores never leave the SM"), std::string::npos);
    // A causal mask is recognized from its iotas: its tiles are skipped.
    EXPECT_EQ(k->schedule.find("skipped (causal)") != std::string::npos, causal);
  }
}

// The fused module's attention group holds the primitives of the unfused
// one, which the interpreter evaluates op for op.
TEST(Attention, KeepsItsValuesInTheInterpreter) {
  for (const char *dtype : {"bf16", "f16", "upcast"}) {
    mlir::MLIRContext ctx;
    mlir::OwningOpRef<mlir::ModuleOp> fused;
    bool upcast = std::string(dtype) == "upcast";
    expectSameResults(primitivesGraph(70, 65, 32, upcast ? "bf16" : dtype, upcast), 11, true,
                      &fused, &ctx);
    ASSERT_TRUE(fused);
    int attention = 0;
    fused->walk([&](FusionOp f) { attention += f.getKind() == "attention"; });
    EXPECT_EQ(attention, 1) << dtype;
  }
}

// A few query rows a head against many keys take the decode form: the keys
// split over blocks, the splits' partials in the scratch.
TEST(Attention, DecodeSizedQueriesSplitTheKeys) {
  for (const char *arch : {"sm_80", "sm_90a"}) {
    mlir::MLIRContext ctx;
    auto plan = planFor(ctx, sdpaGraph(4, 4096, 64, "bf16", false), "sdpa.json", true, arch);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    ASSERT_EQ(plan->steps.size(), 1u) << arch;
    const PlanKernel *k = attentionKernel(*plan);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->schedule.rfind("attention decode", 0), 0u) << k->schedule;
    EXPECT_GT(k->grid, 1u);   // splits of the 4096 keys
    EXPECT_EQ(k->gridY, 6u);  // 2 x 3 heads, each its own K/V
    EXPECT_GT(k->scratchBytes, k->scratchZeroOnce);
    EXPECT_GT(k->scratchZeroOnce, 0u);
    if (llvm::Error err = loadNvrtc())
      llvm::consumeError(std::move(err));
    else
      expectKernelsCompile(std::string("decode ") + arch, *plan);
  }
}

// Repeated K/V heads (grouped-query attention) are read in place: batch
// entry b reads K/V entry b / 4, no copy runs first.
TEST(Attention, RepeatedHeadsAreReadInPlace) {
  for (const char *arch : {"sm_80", "sm_90a"}) {
    mlir::MLIRContext ctx;
    auto buffer = llvm::MemoryBuffer::getFile(FUSEC_SOURCE_DIR "/examples/attention_gqa.json");
    ASSERT_TRUE(bool(buffer));
    auto plan = planFor(ctx, (*buffer)->getBuffer(), "attention_gqa.json", true, arch);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    ASSERT_EQ(plan->steps.size(), 1u) << arch;
    const PlanKernel *k = attentionKernel(*plan);
    ASSERT_NE(k, nullptr);
    EXPECT_NE(k->schedule.find("4 heads a K/V head"), std::string::npos) << k->schedule;
    if (llvm::Error err = loadNvrtc())
      llvm::consumeError(std::move(err));
    else
      expectKernelsCompile(std::string("attention_gqa ") + arch, *plan);
  }
}

// A decode step's cache joined with its new rows (a concat only the repeat
// reads) is read in its pieces: the join belongs to the attention kernel,
// which reads both pieces' arguments, and nothing writes the joined cache.
TEST(Attention, JoinedCacheIsReadInPieces) {
  mlir::MLIRContext ctx;
  auto buffer =
      llvm::MemoryBuffer::getFile(FUSEC_SOURCE_DIR "/examples/gqa_decode_attention.json");
  ASSERT_TRUE(bool(buffer));
  auto plan = planFor(ctx, (*buffer)->getBuffer(), "gqa_decode_attention.json", true, "sm_90a");
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  ASSERT_EQ(plan->steps.size(), 1u);
  const PlanKernel *k = attentionKernel(*plan);
  ASSERT_NE(k, nullptr);
  EXPECT_NE(k->schedule.find("in 2 pieces along the keys"), std::string::npos) << k->schedule;
  EXPECT_NE(k->source.find("fz_gk1"), std::string::npos);
  EXPECT_NE(k->source.find("fz_gv1"), std::string::npos);
}

// Random shapes and masks (the GPU test's): every one with 64 query rows or
// more and a head dim the kernel takes becomes one attention kernel, the
// others are declined with a reason, and every attention kernel compiles.
TEST(Attention, RandomShapesAndMasks) {
  bool nvrtc = true;
  if (llvm::Error err = loadNvrtc()) {
    llvm::consumeError(std::move(err));
    nvrtc = false;
  }
  int streamed = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    mlir::MLIRContext ctx;
    std::string graph = fusec::test::randomAttentionGraph(seed);
    auto plan = planFor(ctx, graph, "random_attention.json", true, seed % 2 ? "sm_80" : "sm_90a");
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError()) << "\n" << graph;
    if (const PlanKernel *k = attentionKernel(*plan)) {
      ++streamed;
      if (nvrtc && seed % 6 == 0)  // NVRTC takes a second a kernel: a sample
        expectKernelsCompile("random attention " + std::to_string(seed), *plan);
    }
  }
  EXPECT_GT(streamed, 20);  // most shapes are the kernel's
}

// Random decode-sized shapes (the GPU test's): every one becomes one
// attention kernel of the decode form, no copy of the repeated or joined
// K/V before it, and a sample compiles.
TEST(Attention, RandomDecodeShapes) {
  bool nvrtc = true;
  if (llvm::Error err = loadNvrtc()) {
    llvm::consumeError(std::move(err));
    nvrtc = false;
  }
  for (uint64_t seed = 0; seed < 40; ++seed) {
    mlir::MLIRContext ctx;
    std::string graph = fusec::test::randomDecodeAttentionGraph(seed);
    auto plan = planFor(ctx, graph, "random_decode.json", true, seed % 2 ? "sm_80" : "sm_90a");
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError()) << "\n" << graph;
    const PlanKernel *k = attentionKernel(*plan);
    ASSERT_NE(k, nullptr) << graph;
    EXPECT_EQ(plan->steps.size(), 1u) << graph;
    EXPECT_EQ(k->schedule.rfind("attention decode", 0), 0u) << k->schedule;
    if (nvrtc && seed % 8 == 0)
      expectKernelsCompile("random decode attention " + std::to_string(seed), *plan);
  }
}

// Decode attention over a joined cache with grouped-query heads keeps its
// values in the interpreter (the fused module's body, concat included,
// against the decomposed composite).
TEST(Attention, DecodeKeepsItsValuesInTheInterpreter) {
  for (uint64_t seed : {3, 5, 12}) {
    mlir::MLIRContext ctx;
    mlir::OwningOpRef<mlir::ModuleOp> fused;
    expectSameResults(fusec::test::randomDecodeAttentionGraph(seed), seed, true, &fused, &ctx,
                      "auto", true);
    ASSERT_TRUE(fused);
    int attention = 0;
    fused->walk([&](FusionOp f) { attention += f.getKind() == "attention"; });
    EXPECT_EQ(attention, 1) << seed;
  }
}

// An output read only by a transpose back to tokens is written in that
// order by every form: no copy kernel follows, the values are the
// interpreter's, and the kernel's stores index [b, l, h, d].
TEST(Attention, OutputTransposeIsWrittenByTheKernel) {
  const std::string transposed = R"({"fusec": 1, "name": "t", "inputs": [
    {"name": "q", "dtype": "bf16", "shape": [2, 3, QUERIES, 64]},
    {"name": "k", "dtype": "bf16", "shape": [2, 3, 200, 64]},
    {"name": "v", "dtype": "bf16", "shape": [2, 3, 200, 64]}],
    "nodes": [{"name": "o", "op": "scaled_dot_product_attention", "inputs": ["q", "k", "v"]},
              {"name": "o_tokens", "op": "transpose", "inputs": ["o"], "attrs": {"perm": [0, 2, 1, 3]}},
              {"name": "o_flat", "op": "reshape", "inputs": ["o_tokens"], "attrs": {"shape": [-1, 192]}}],
    "outputs": ["o_flat"]})";
  for (const char *arch : {"sm_80", "sm_90a"})
    for (int queries : {5, 130}) {  // the decode form, then the portable or Hopper form
      SCOPED_TRACE(std::string(arch) + " queries " + std::to_string(queries));
      std::string text = transposed;
      text.replace(text.find("QUERIES"), 7, std::to_string(queries));
      mlir::MLIRContext ctx;
      auto plan = planFor(ctx, text, "t.json", true, arch);
      ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
      EXPECT_EQ(plan->steps.size(), 1u);  // no copy after the attention kernel
      const PlanKernel *k = attentionKernel(*plan);
      ASSERT_NE(k, nullptr);
      EXPECT_NE(k->schedule.find("the output written transposed, as [2, " +
                                 std::to_string(queries) + ", 3, 64]"),
                std::string::npos)
          << k->schedule;
      // Query i of head h in batch b starts at ((b * L + i) * 3 + h) * 64.
      EXPECT_NE(k->source.find(" * 192"), std::string::npos);
    }
  for (int queries : {5, 130}) {
    std::string text = transposed;
    text.replace(text.find("QUERIES"), 7, std::to_string(queries));
    expectSameResults(text, 7, true, nullptr, nullptr, "auto", true);
  }
}

// The price counts waves of blocks: one block more than the SM slots (the
// form's blocks an SM) takes a second round of key tiles; a causal mask
// prices only the tiles the kernel computes. On both forms.
TEST(Attention, PriceCountsWavesAndSkippedTiles) {
  for (const char *device : {"h200", "a100"}) {
  SCOPED_TRACE(device);
  DeviceProfile p = *measuredProfile(device, {});
  AttentionMatch m;
  m.queries = kAttentionRows;
  m.keys = 8 * kAttentionKeys;
  m.headDim = 64;
  m.batch = attentionTiles(m, p).blocksPerSm * p.smCount;
  double one = families::attentionSeconds(m, p) - p.launchSeconds;
  m.batch += 1;
  double two = families::attentionSeconds(m, p) - p.launchSeconds;
  EXPECT_NEAR(two / one, 2.0, 1e-9);
  m.batch = 64;  // enough blocks that the work, not the longest block, sets the time
  m.queries = 8 * kAttentionRows;
  m.keys = 8 * kAttentionRows;
  double full = families::attentionSeconds(m, p);
  m.causal = true;
  EXPECT_LT(families::attentionSeconds(m, p), full);
  }
}

// The decode form splits the keys the way its price is least: no split count
// it could take is priced lower than the one it takes. Where there are few
// K/V heads (batch 1), about one block an SM (13 splits of a 4097-key
// cache over 8 heads on the H200: fewer leave SMs idle, more put two blocks
// on some SMs, which stream no faster than one); where there are many
// (batch 32), one split, every SM busy already.
TEST(Attention, DecodeSplitsAtTheLeastPrice) {
  DeviceProfile p = *measuredProfile("h200", {});
  AttentionMatch m;
  m.queries = 1;
  m.repeat = 4;  // 4 query heads a K/V head: the 4 rows of a block
  m.headDim = 128;
  for (int64_t keys : {int64_t(4097), int64_t(8192), int64_t(2048), int64_t(65536)})
    for (int64_t kvHeads : {int64_t(8), int64_t(64), int64_t(256)}) {
      SCOPED_TRACE(std::to_string(kvHeads) + " K/V heads x " + std::to_string(keys) + " keys");
      m.keys = keys;
      m.batch = kvHeads * m.repeat;
      const AttentionTiles t = attentionTiles(m, p);
      ASSERT_TRUE(t.decode);
      const double chosen = decodeAttentionSeconds(m, t, p);
      EXPECT_NEAR(families::attentionSeconds(m, p), chosen, 1e-15);  // one price
      const int64_t tiles = (keys + t.keys - 1) / t.keys;
      for (int64_t per = 1; per <= tiles; ++per) {
        AttentionTiles other = t;
        other.splitTiles = per;
        other.splits = (tiles + per - 1) / per;
        const int64_t ld = m.headDim + 8;
        if (other.splits > (t.stages * 2 * t.keys * ld * 2 / 4 - 16) / 16)
          continue;  // more partials than the merge's buffers hold
        EXPECT_GE(decodeAttentionSeconds(m, other, p), chosen) << other.splits << " splits";
      }
      if (kvHeads == 8 && keys == 4097)
        EXPECT_EQ(t.splits, 13);
      if (kvHeads == 256)
        EXPECT_EQ(t.splits, 1);
    }
}

// The Hopper form takes head dims 64 and 128 read head-dim contiguous on
// sm_90a; other head dims, keys read along rows, other targets and devices
// without the wgmma kernels take the portable form.
TEST(Attention, HopperFormWhereItsTilesFit) {
  DeviceProfile h200 = *measuredProfile("h200", {}), a100 = *measuredProfile("a100", {});
  AttentionMatch m;
  m.queries = m.keys = 1024;
  for (int64_t d : {16, 64, 80, 96, 128, 256}) {
    m.headDim = d;
    AttentionTiles t = attentionTiles(m, h200);
    EXPECT_EQ(t.wgmma, d == 64 || d == 128) << d;
    EXPECT_LE(t.sharedBytes, h200.smemPerBlock) << d;
    EXPECT_FALSE(attentionTiles(m, a100).wgmma) << d;
    EXPECT_LE(attentionTiles(m, a100).sharedBytes, a100.smemPerBlock) << d;
  }
  // Head dim 256: one block an SM, of 128 rows on Hopper, of 64 rows and
  // 32-key tiles where shared memory is smaller.
  m.headDim = 256;
  EXPECT_EQ(attentionTiles(m, h200).rows, kAttentionRows);
  EXPECT_EQ(attentionTiles(m, h200).blocksPerSm, 1);
  EXPECT_EQ(attentionTiles(m, a100).rows, kAttentionRows / 2);
  EXPECT_EQ(attentionTiles(m, a100).keys, kAttentionKeys / 2);
  // The decode form keeps three buffers where they fit, else two.
  m.queries = 1;
  EXPECT_EQ(attentionTiles(m, h200).stages, 3);
  EXPECT_EQ(attentionTiles(m, a100).stages, 2);
  EXPECT_LE(attentionTiles(m, a100).sharedBytes, a100.smemPerBlock);
  m.headDim = 128;
  DeviceProfile sm80 = h200;
  sm80.arch = "sm_80";
  EXPECT_FALSE(attentionTiles(m, sm80).wgmma);
  m.keysContiguous = true;
  EXPECT_FALSE(attentionTiles(m, h200).wgmma);
}

TEST(Attention, KernelsCompileWithNvrtc) {
  if (llvm::Error err = loadNvrtc())
    GTEST_SKIP() << "NVRTC not available: " << llvm::toString(std::move(err));
  for (const char *arch : {"sm_90a", "sm_80"})
    for (int d : {64, 80, 96, 128, 256})
      for (bool causal : {false, true}) {
        mlir::MLIRContext ctx;
        std::string label = std::string(arch) + " head dim " + std::to_string(d) +
                            (causal ? " causal" : "");
        auto plan = planFor(ctx, sdpaGraph(130, 77, d, d == 96 ? "f16" : "bf16", causal),
                            "sdpa.json", true, arch);
        ASSERT_TRUE(bool(plan)) << label << ": " << llvm::toString(plan.takeError());
        const PlanKernel *k = attentionKernel(*plan);
        ASSERT_NE(k, nullptr) << label;
        const bool hopper = std::string(arch) == "sm_90a" && (d == 64 || d == 128);
        EXPECT_EQ(k->schedule.find("wgmma") != std::string::npos, hopper) << label;
        expectKernelsCompile(label, *plan);
      }
}

} // namespace
} // namespace fusec
