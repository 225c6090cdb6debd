//===- FusionTest.cpp - fusion preserves meaning; every kernel compiles ---===//
//
// CPU-side checks of the fusion pipeline: random graphs evaluate to the same
// values before and after fusion (the interpreter runs fusec.fusion bodies op
// by op, so the results must be identical), and every kernel generated for the
// examples and for random graphs compiles with NVRTC for sm_80 and sm_90a.
//
//===----------------------------------------------------------------------===//
#include "compiler/dialect/FusecDialect.h"
#include "compiler/interp/Interpreter.h"
#include "compiler/pipeline/Arena.h"
#include "compiler/pipeline/Compile.h"
#include "frontends/json/GraphReader.h"
#include "runtime/Nvrtc.h"
#include "test/common/RandomGraph.h"
#include "test/unit/PlanTestUtil.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

using namespace fusec;
using fusec::testing::expectKernelsCompile;
using fusec::testing::expectSameResults;
using fusec::testing::planFor;
using fusec::testing::randomInputs;

namespace {

/// Whether the fused kernel's body holds an op of kind OpT.
template <typename OpT> bool holds(FusionOp f) {
  bool found = false;
  f.getBodyBlock().walk([&](OpT) { found = true; });
  return found;
}

TEST(Fusion, RandomGraphsKeepTheirValues) {
  for (uint64_t seed = 0; seed < 60; ++seed)
    expectSameResults(fusec::test::randomGraph(seed, 1 << 16), seed, /*fuse=*/true);
}

TEST(Fusion, RandomGraphsKeepTheirValuesUnfused) {
  for (uint64_t seed = 100; seed < 130; ++seed)
    expectSameResults(fusec::test::randomGraph(seed, 1 << 16), seed, /*fuse=*/false);
}

// gelu(x + b) reduced over rows and over columns: the column kernel recomputes
// the chain from x and b (the cost model finds that cheaper than writing and
// re-reading it), and the results do not change.
TEST(Fusion, RecomputedIntermediatesKeepTheirValues) {
  const char *graph = R"({"fusec": 1, "name": "recompute",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [96, 80]},
               {"name": "b", "dtype": "f32", "shape": [80]}],
    "nodes": [{"name": "h", "op": "add", "inputs": ["x", "b"]},
              {"name": "g", "op": "gelu", "inputs": ["h"]},
              {"name": "rows", "op": "sum", "inputs": ["g"], "attrs": {"axes": [1], "keepdims": true}},
              {"name": "cols", "op": "sum", "inputs": ["g"], "attrs": {"axes": [0], "keepdims": true}}],
    "outputs": ["rows", "cols"]})";
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> fused;
  expectSameResults(graph, 5, /*fuse=*/true, &fused, &ctx);
  ASSERT_TRUE(bool(fused));
  mlir::func::FuncOp f = graphFunction(*fused);
  ASSERT_TRUE(f->hasAttr("fusec.recomputed"));
  int kernels = 0;
  f.walk([&](FusionOp op) {
    ++kernels;
    for (mlir::Value in : op.getInputs())  // both kernels read only graph inputs
      EXPECT_TRUE(mlir::isa<mlir::BlockArgument>(in));
  });
  EXPECT_EQ(kernels, 2);
}

// Decode-sized Q/K/V projections and SwiGLU's gate/up read the same normalized
// rows: one sibling kernel computes all five (gate and up meeting in
// silu(gate) * up), with the same values as op by op.
TEST(Fusion, SiblingDecodeMatmulsShareAKernelAndKeepTheirValues) {
  auto buffer = llvm::MemoryBuffer::getFile(FUSEC_SOURCE_DIR "/examples/decode_siblings.json");
  ASSERT_TRUE(bool(buffer));
  mlir::MLIRContext ctx;
  auto module = importGraphText((*buffer)->getBuffer(), "decode_siblings.json", ctx);
  ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
  // Against the unfused plan (composites such as linear decomposed the same
  // way, each op its own group), bit for bit.
  mlir::OwningOpRef<mlir::ModuleOp> fused = (*module)->clone(), unfused = (*module)->clone();
  CompileOptions o;
  ASSERT_FALSE(bool(fuseModule(*fused, o)));
  o.fuse = false;
  ASSERT_FALSE(bool(fuseModule(*unfused, o)));
  std::vector<HostTensor> in = randomInputs(graphFunction(*unfused), 7);
  auto ref = interpret(graphFunction(*unfused), in);
  auto got = interpret(graphFunction(*fused), in);
  ASSERT_TRUE(bool(ref)) << llvm::toString(ref.takeError());
  ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
  ASSERT_EQ(ref->size(), got->size());
  for (size_t i = 0; i < ref->size(); ++i)
    EXPECT_TRUE((*ref)[i] == (*got)[i]) << "output " << i;
  int siblings = 0;
  graphFunction(*fused).walk([&](FusionOp op) {
    int mms = 0;
    op.getBodyBlock().walk([&](MatmulOp) { ++mms; });
    if (mms > 1) {
      ++siblings;
      EXPECT_EQ(mms, 5);
      EXPECT_EQ(op.getNumResults(), 4u);  // q, k, v and silu(gate) * up
    }
  });
  EXPECT_EQ(siblings, 1);
}

// Elementwise ops that compute a matmul operand join its kernel as a
// prologue where the cost model says so: one kernel whose only result is the
// graph's, so the operand is never written, and the same values as unfused.
// A value the graph also returns stays in a kernel of its own.
TEST(Fusion, MatmulProloguesKeepTheirValuesAndAreNeverWritten) {
  struct Case {
    const char *file;
    int kernels;
    bool prologueInMatmul;
  };
  for (Case c : {Case{"/examples/decode_prologue.json", 1, true},
                 Case{"/examples/cast_scale_linear.json", 1, true},
                 Case{"/test/lit/fusion/Inputs/prologue-needed.json", 2, false}}) {
    auto buffer = llvm::MemoryBuffer::getFile(std::string(FUSEC_SOURCE_DIR) + c.file);
    ASSERT_TRUE(bool(buffer)) << c.file;
    mlir::MLIRContext ctx;
    mlir::OwningOpRef<mlir::ModuleOp> fused;
    expectSameResults((*buffer)->getBuffer().str(), 3, true, &fused, &ctx);
    ASSERT_TRUE(fused) << c.file;
    int kernels = 0;
    graphFunction(*fused).walk([&](FusionOp op) {
      ++kernels;
      if (!holds<MatmulOp>(op))
        return;
      bool prologue = holds<MulOp>(op) || holds<CastOp>(op) || holds<SiluOp>(op);
      EXPECT_EQ(prologue, c.prologueInMatmul) << c.file;
      EXPECT_EQ(op.getNumResults(), 1u) << c.file;  // the product's consumer, nothing before it
    });
    EXPECT_EQ(kernels, c.kernels) << c.file;
  }
}

// Two decode matmuls reading different halves of the same rows are not
// siblings: one kernel reads A through one view (a review found the halves
// merged and the second computed from the first half).
TEST(Fusion, MatmulsOnDifferentSlicesOfARowAreNotSiblings) {
  const char *graph = R"({"fusec": 1, "name": "halves",
    "inputs": [{"name": "h", "dtype": "bf16", "shape": [2, 512]},
               {"name": "w1", "dtype": "bf16", "shape": [64, 256]},
               {"name": "w2", "dtype": "bf16", "shape": [64, 256]}],
    "nodes": [{"name": "a", "op": "slice", "inputs": ["h"], "attrs": {"starts": [0], "ends": [256], "axes": [1]}},
              {"name": "b", "op": "slice", "inputs": ["h"], "attrs": {"starts": [256], "ends": [512], "axes": [1]}},
              {"name": "y1", "op": "linear", "inputs": ["a", "w1"]},
              {"name": "y2", "op": "linear", "inputs": ["b", "w2"]}],
    "outputs": ["y1", "y2"]})";
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> fused;
  expectSameResults(graph, 3, /*fuse=*/true, &fused, &ctx, "fusec");
  ASSERT_TRUE(bool(fused));
  graphFunction(*fused).walk([&](FusionOp op) {
    int mms = 0;
    op.getBodyBlock().walk([&](MatmulOp) { ++mms; });
    EXPECT_LE(mms, 1);
  });
}

// Grouped-query attention: the K/V heads repeated for the query heads are
// read once (the query heads of a group become rows of one matmul), with the
// same values. Decode (one query row): neither repeat is materialized. With
// several rows the queries are a transpose, so only V's repeat folds.
TEST(Fusion, RepeatedKvHeadsAreReadOnce) {
  auto graph = [](int rows, bool transposedQ) {
    std::string q = transposedQ ? R"({"name": "q_t", "dtype": "f32", "shape": [1, ROWS, 4, 16]})"
                                : R"({"name": "q", "dtype": "f32", "shape": [1, 4, ROWS, 16]})";
    std::string text = std::string(R"({"fusec": 1, "name": "gqa", "inputs": [)") + q + R"(,
      {"name": "k", "dtype": "f32", "shape": [1, 2, 5, 16]},
      {"name": "v", "dtype": "f32", "shape": [1, 2, 5, 16]}],
      "nodes": [)" + (transposedQ ? R"({"name": "q", "op": "transpose", "inputs": ["q_t"], "attrs": {"perm": [0, 2, 1, 3]}},)" : "") + R"(
      {"name": "k1", "op": "reshape", "inputs": ["k"], "attrs": {"shape": [1, 2, 1, 5, 16]}},
      {"name": "k2", "op": "broadcast_to", "inputs": ["k1"], "attrs": {"shape": [1, 2, 2, 5, 16]}},
      {"name": "kr", "op": "reshape", "inputs": ["k2"], "attrs": {"shape": [1, 4, 5, 16]}},
      {"name": "v1", "op": "reshape", "inputs": ["v"], "attrs": {"shape": [1, 2, 1, 5, 16]}},
      {"name": "v2", "op": "broadcast_to", "inputs": ["v1"], "attrs": {"shape": [1, 2, 2, 5, 16]}},
      {"name": "vr", "op": "reshape", "inputs": ["v2"], "attrs": {"shape": [1, 4, 5, 16]}},
      {"name": "o", "op": "scaled_dot_product_attention", "inputs": ["q", "kr", "vr"]}],
      "outputs": ["o"]})";
    size_t at;
    while ((at = text.find("ROWS")) != std::string::npos)
      text.replace(at, 4, std::to_string(rows));
    return text;
  };
  struct Case {
    int rows;
    bool transposedQ;
    int copies;  // repeats still materialized
  };
  for (Case c : {Case{1, false, 0}, Case{3, false, 0}, Case{3, true, 1}}) {
    std::string text = graph(c.rows, c.transposedQ);
    mlir::MLIRContext ctx;
    mlir::OwningOpRef<mlir::ModuleOp> fused;
    expectSameResults(text, 7, true, &fused, &ctx);
    ASSERT_TRUE(bool(fused)) << text;
    int matmuls = 0, repeats = 0;
    graphFunction(*fused).walk([&](FusionOp f) {
      matmuls += holds<MatmulOp>(f);
      repeats += holds<BroadcastToOp>(f) && !holds<MatmulOp>(f);  // a kernel writing a repeat out
    });
    EXPECT_EQ(matmuls, 2) << text;
    EXPECT_EQ(repeats, c.copies) << text;
  }
}

/// Decode attention over a grouped-query cache of 6 rows (2 K/V heads, 4
/// query heads), where K and/or V arrive as a 5-row cache with this step's
/// row appended (a concat), as a decode step builds them.
std::string appendedCacheGraph(bool appendK, bool appendV) {
  auto inputs = [](const char *name, bool appended) {
    return appended ? std::string(R"({"name": "cache_)") + name +
                          R"(", "dtype": "f32", "shape": [1, 2, 5, 16]},
      {"name": ")" + name + R"(_new", "dtype": "f32", "shape": [1, 2, 1, 16]})"
                    : std::string(R"({"name": ")") + name +
                          R"(", "dtype": "f32", "shape": [1, 2, 6, 16]})";
  };
  auto joined = [](const char *name, bool appended) {
    return appended ? std::string(R"({"name": ")") + name + R"(", "op": "concat", "inputs": ["cache_)" +
                          name + R"(", ")" + name + R"(_new"], "attrs": {"axis": 2}},)"
                    : std::string();
  };
  auto repeated = [](const char *name) {
    std::string n = name;
    return R"({"name": ")" + n + R"(1", "op": "reshape", "inputs": [")" + n +
           R"("], "attrs": {"shape": [1, 2, 1, 6, 16]}},
      {"name": ")" + n + R"(2", "op": "broadcast_to", "inputs": [")" + n +
           R"(1"], "attrs": {"shape": [1, 2, 2, 6, 16]}},
      {"name": ")" + n + R"(r", "op": "reshape", "inputs": [")" + n +
           R"(2"], "attrs": {"shape": [1, 4, 6, 16]}},)";
  };
  return R"({"fusec": 1, "name": "append", "inputs": [
      {"name": "q", "dtype": "f32", "shape": [1, 4, 1, 16]}, )" +
         inputs("k", appendK) + ", " + inputs("v", appendV) + R"(], "nodes": [)" +
         joined("k", appendK) + joined("v", appendV) + repeated("k") + repeated("v") +
         R"({"name": "o", "op": "scaled_dot_product_attention", "inputs": ["q", "kr", "vr"]}],
      "outputs": ["o"]})";
}

// The scores over an appended K are computed over the cache and the new row
// apart (joined in the softmax), and probabilities @ an appended V is the
// product over the cache plus the new row's outer product: neither joined
// cache is written, and the values are the graph's.
TEST(Fusion, AppendedCachesAreReadInTheirPieces) {
  struct Case {
    bool k, v;
    int matmuls;
  };
  // Scores (one product, or one per piece), then @ V (the new row a multiply).
  for (Case c : {Case{true, false, 3}, Case{false, true, 2}, Case{true, true, 3}}) {
    std::string text = appendedCacheGraph(c.k, c.v);
    mlir::MLIRContext ctx;
    mlir::OwningOpRef<mlir::ModuleOp> fused;
    expectSameResults(text, 5, true, &fused, &ctx);
    ASSERT_TRUE(bool(fused)) << text;
    int matmuls = 0, cachesWritten = 0;
    graphFunction(*fused).walk([&](FusionOp f) {
      matmuls += holds<MatmulOp>(f);
      cachesWritten += holds<ConcatOp>(f) && f.getKind() == "pointwise";
    });
    EXPECT_EQ(matmuls, c.matmuls) << text;
    EXPECT_EQ(cachesWritten, 0) << text;
  }
}

// Cases a review found: a 16-bit output of an f32 softmax over dim 0 (the
// online kernel stores 16-byte vectors of its tile, so it must not take it),
// a matrix-vector product with a 1-D B (no wgmma for one column), and a
// reshape between zero-size shapes (the index groups never close). Each plans
// and its kernels compile.
TEST(Fusion, OuterSoftmaxCastsMatVecAndEmptyReshapesCompile) {
  const char *graphs[] = {
      R"({"fusec": 1, "name": "cast", "inputs": [{"name": "x", "dtype": "f32", "shape": [256, 128]}],
          "nodes": [{"name": "s", "op": "softmax", "inputs": ["x"], "attrs": {"axis": 0}},
                    {"name": "y", "op": "cast", "inputs": ["s"], "attrs": {"dtype": "bf16"}}],
          "outputs": ["y"]})",
      R"({"fusec": 1, "name": "matvec", "inputs": [{"name": "a", "dtype": "bf16", "shape": [256, 4096]},
          {"name": "b", "dtype": "bf16", "shape": [4096]}],
          "nodes": [{"name": "y", "op": "matmul", "inputs": ["a", "b"]}], "outputs": ["y"]})",
      R"({"fusec": 1, "name": "empty", "inputs": [{"name": "x", "dtype": "f32", "shape": [0, 6]}],
          "nodes": [{"name": "r", "op": "reshape", "inputs": ["x"], "attrs": {"shape": [6, 0]}},
                    {"name": "y", "op": "exp", "inputs": ["r"]}], "outputs": ["y"]})"};
  for (const char *text : graphs)
    for (const char *gemm : {"auto", "fusec"}) {
      mlir::MLIRContext ctx;
      auto plan = planFor(ctx, text, "review.json", true, "sm_90a", gemm);
      ASSERT_TRUE(bool(plan)) << text << ": " << llvm::toString(plan.takeError());
      expectKernelsCompile(text, *plan);
      for (const PlanStep &s : plan->steps)
        if (s.kind == PlanStep::Kind::Kernel) {
          EXPECT_EQ(s.kernel.source.find("wgmma"), std::string::npos) << text;  // none is a tile's worth
          EXPECT_EQ(s.kernel.schedule.find("(online)"), std::string::npos) << text;
        }
    }
}

// Matmul + epilogue groups keep their values (the epilogue is applied to the
// product in the interpreter's fusion evaluation), and every GEMM kernel
// compiles for Ampere and Hopper.
TEST(Fusion, RandomMatmulGraphsKeepTheirValues) {
  for (uint64_t seed = 0; seed < 40; ++seed)
    expectSameResults(fusec::test::randomMatmulGraph(seed), seed, true, nullptr, nullptr, "fusec");
}

TEST(Fusion, RandomMatmulKernelsCompileWithNvrtc) {
  if (llvm::Error err = loadNvrtc())
    GTEST_SKIP() << "NVRTC not available: " << llvm::toString(std::move(err));
  int gemms = 0, prologues = 0, tensorCoreGemv = 0;
  for (uint64_t seed = 0; seed < 24; ++seed)
    for (const char *arch : {"sm_80", "sm_90a"}) {
      mlir::MLIRContext ctx;
      std::string text = fusec::test::randomMatmulGraph(seed);
      auto plan = planFor(ctx, text, "random_matmul.json", true, arch, "fusec");
      ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError()) << "\n" << text;
      for (const PlanStep &s : plan->steps)
        if (s.kind == PlanStep::Kind::Kernel && s.kernel.family == "matmul") {
          ++gemms;
          prologues += s.kernel.source.find("prologue") != std::string::npos;
          tensorCoreGemv += s.kernel.gemmConfig.rfind("gemv t", 0) == 0;
        }
      expectKernelsCompile("random matmul " + std::to_string(seed), *plan);
    }
  EXPECT_EQ(gemms, 48);  // one GEMM kernel per graph and architecture
  // Operands computed as they are loaded, on both kernels (GEMV and mma.sync).
  EXPECT_GE(prologues, 8);
  // 16-64 rows of A with K-contiguous operands: the dot-product kernel's
  // tensor-core form (their N is too narrow for the Hopper form's clusters).
  EXPECT_GE(tensorCoreGemv, 4);
  std::printf("random matmul kernels: %d, with a prologue %d, tensor-core GEMV %d\n", gemms,
              prologues, tensorCoreGemv);
}

// Epilogues cuBLASLt expresses (a scale by a constant, a residual, a bias,
// gelu(tanh)) become one library call with those settings, and the group keeps
// its values in the interpreter.
TEST(Fusion, LibraryEpiloguesBecomeOneCublasLtCall) {
  for (uint64_t seed = 0; seed < 40; ++seed) {
    std::string text = fusec::test::randomMatmulGraph(seed, true);
    expectSameResults(text, seed, true, nullptr, nullptr, "cublaslt");
    mlir::MLIRContext ctx;
    auto plan = planFor(ctx, text, "random_matmul.json", true, "sm_90a", "cublaslt");
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError()) << "\n" << text;
    ASSERT_EQ(plan->steps.size(), 1u) << text;
    const PlanStep &st = plan->steps[0];
    ASSERT_EQ(st.kind, PlanStep::Kind::Matmul) << text;
    const PlanMatmul &m = st.matmul;
    auto has = [&](const char *s) { return text.find(s) != std::string::npos; };
    EXPECT_EQ(m.desc.beta == 1, has("\"res\"")) << text;
    EXPECT_EQ(m.residual >= 0, has("\"res\"")) << text;
    EXPECT_EQ(m.desc.biasEpilogue, has("\"bias\"")) << text;
    EXPECT_EQ(m.bias >= 0, has("\"bias\"")) << text;
    EXPECT_EQ(m.desc.geluEpilogue, has("\"tanh\"")) << text;
    EXPECT_EQ(m.desc.alpha != 1, has("\"alpha\"")) << text;
    EXPECT_NE(m.residual, m.c);
  }
}

// A residual cuBLASLt reads as C may be an intermediate (the decoder block's
// second residual add reads the first's result): its arena slot must stay
// live until that call, not be reused after the last kernel reading it.
TEST(Fusion, LibraryEpilogueInputsStayLiveUntilTheirCall) {
  auto buffer = llvm::MemoryBuffer::getFile(FUSEC_SOURCE_DIR "/examples/llama_decoder_block.json");
  ASSERT_TRUE(bool(buffer));
  mlir::MLIRContext ctx;
  // On sm_80: on sm_90a fusec's Hopper dot-product kernel takes the down
  // projection with its residual.
  auto plan = planFor(ctx, (*buffer)->getBuffer(), "llama_decoder_block.json", true, "sm_80");
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  std::vector<std::pair<int, int>> life = bufferLifetimes(*plan);
  int temporaryResiduals = 0;
  for (size_t i = 0; i < plan->steps.size(); ++i) {
    const PlanStep &st = plan->steps[i];
    if (st.kind != PlanStep::Kind::Matmul)
      continue;
    for (int b : {st.matmul.residual, st.matmul.bias}) {
      if (b < 0)
        continue;
      temporaryResiduals += plan->buffers[b].kind == PlanBuffer::Kind::Temp;
      EXPECT_LE(life[b].first, (int)i) << st.name;
      EXPECT_GE(life[b].second, (int)i) << st.name << " reads buffer " << b
                                        << " after its slot may be reused";
    }
  }
  EXPECT_EQ(temporaryResiduals, 1);  // r1, read as C by the last matmul
}

// The GQA decode example's output is the P @ V product reshaped: the product's
// kernel writes the output buffer itself and no copy step runs. The decode
// block's new K/V rows are outputs (the K/V projections reshaped) that the
// attention also reads, from the output buffers then.
TEST(Fusion, OutputReshapesAreWrittenInPlace) {
  for (const char *example :
       {"examples/gqa_decode_attention.json", "bench/graphs/llama_block_decode_b1.json"}) {
    auto buffer = llvm::MemoryBuffer::getFile(std::string(FUSEC_SOURCE_DIR "/") + example);
    ASSERT_TRUE(bool(buffer));
    mlir::MLIRContext ctx;
    auto plan = planFor(ctx, (*buffer)->getBuffer(), example, true, "sm_90a");
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    std::set<int> written;
    for (const PlanStep &st : plan->steps) {
      EXPECT_EQ(st.name.find("_copy"), std::string::npos) << example << ": " << st.name;
      std::vector<int> touched = st.kind == PlanStep::Kind::Kernel   ? st.kernel.args
                                 : st.kind == PlanStep::Kind::Matmul ? std::vector<int>{st.matmul.c}
                                                                     : std::vector<int>{st.copy.dst};
      for (int b : touched)
        if (plan->buffers[b].kind == PlanBuffer::Kind::Output)
          written.insert(plan->buffers[b].index);
    }
    for (size_t o = 0; o < plan->outputs.size(); ++o)
      EXPECT_TRUE(written.count((int)o)) << example << ": output " << o << " written by no step";
  }
}

// A constant added to the product is index math, not memory cuBLASLt could
// read as its bias or C (planning it so crashed); a constant scale becomes
// alpha rounded to the dtype, as the reference rounds it.
TEST(Fusion, LibraryEpilogueConstants) {
  auto graph = [](const char *tail) {
    return std::string(R"({"fusec": 1, "name": "c", "inputs": [
      {"name": "x", "dtype": "bf16", "shape": [64, 32]},
      {"name": "w", "dtype": "bf16", "shape": [32, 128]}],
      "nodes": [{"name": "mm", "op": "matmul", "inputs": ["x", "w"]}, )") + tail + "]}";
  };
  for (const char *tail :
       {R"({"name": "b", "op": "constant", "attrs": {"value": 0.5, "dtype": "bf16", "shape": [128]}},
           {"name": "y", "op": "add", "inputs": ["mm", "b"]}], "outputs": ["y")",
        R"({"name": "b", "op": "constant", "attrs": {"value": 0.5, "dtype": "bf16", "shape": [64, 128]}},
           {"name": "y", "op": "add", "inputs": ["mm", "b"]}], "outputs": ["y")"}) {
    mlir::MLIRContext ctx;
    auto plan = planFor(ctx, graph(tail), "c.json", true, "sm_90a", "cublaslt");
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError()) << "\n" << tail;
    ASSERT_EQ(plan->steps.size(), 2u) << tail;
    EXPECT_EQ(plan->steps[0].matmul.residual, -1);
    EXPECT_FALSE(plan->steps[0].matmul.desc.biasEpilogue);
  }
  mlir::MLIRContext ctx;
  auto plan = planFor(ctx, graph(R"({"name": "s", "op": "constant", "attrs": {"value": 0.1, "dtype": "bf16"}},
      {"name": "y", "op": "mul", "inputs": ["mm", "s"]}], "outputs": ["y")"),
                      "c.json", true, "sm_90a", "cublaslt");
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  ASSERT_EQ(plan->steps.size(), 1u);
  EXPECT_EQ(plan->steps[0].matmul.desc.alpha, 0.10009765625f);  // 0.1 in bf16
}

// gelu's erf form, a per-row scale or an op after gelu: cuBLASLt cannot say
// that, so the product and the epilogue run apart, and explain says why.
TEST(Fusion, OtherEpiloguesStayApartFromCublasLt) {
  auto graph = [](const std::string &tail) {
    return std::string(R"({"fusec": 1, "name": "g", "inputs": [
      {"name": "x", "dtype": "bf16", "shape": [256, 64]},
      {"name": "w", "dtype": "bf16", "shape": [128, 64]},
      {"name": "b", "dtype": "bf16", "shape": [128]},
      {"name": "s", "dtype": "bf16", "shape": [256, 1]}],
      "nodes": [{"name": "h", "op": "linear", "inputs": ["x", "w", "b"]}, )") +
           tail + "]}";
  };
  for (const std::string &tail :
       {std::string(R"({"name": "y", "op": "gelu", "inputs": ["h"]}], "outputs": ["y")"),
        std::string(R"({"name": "y", "op": "mul", "inputs": ["h", "s"]}], "outputs": ["y")"),
        std::string(R"({"name": "g", "op": "gelu", "inputs": ["h"], "attrs": {"approximate": "tanh"}},
            {"name": "y", "op": "add", "inputs": ["g", "b"]}], "outputs": ["y")")}) {
    mlir::MLIRContext ctx;
    auto plan = planFor(ctx, graph(tail), "g.json", true, "sm_90a", "cublaslt");
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError()) << "\n" << tail;
    ASSERT_EQ(plan->steps.size(), 2u) << tail;
    EXPECT_EQ(plan->steps[0].kind, PlanStep::Kind::Matmul);
    EXPECT_FALSE(plan->steps[0].matmul.desc.geluEpilogue);
    EXPECT_EQ(plan->steps[0].matmul.residual, -1);
    EXPECT_EQ(plan->steps[1].kind, PlanStep::Kind::Kernel);
  }
}

TEST(Fusion, EveryExampleKernelCompilesWithNvrtc) {
  if (llvm::Error err = loadNvrtc())
    GTEST_SKIP() << "NVRTC not available: " << llvm::toString(std::move(err));
  std::vector<std::string> files = fusec::testing::graphFiles({FUSEC_SOURCE_DIR "/examples"});
  ASSERT_GE(files.size(), 10u);
  for (const std::string &f : files) {
    auto buffer = llvm::MemoryBuffer::getFile(f);
    ASSERT_TRUE(bool(buffer)) << f;
    for (bool fuse : {true, false})
      for (const char *arch : {"sm_80", "sm_90a"}) {
        mlir::MLIRContext ctx;
        auto plan = planFor(ctx, (*buffer)->getBuffer(), f, fuse, arch);
        ASSERT_TRUE(bool(plan)) << f << ": " << llvm::toString(plan.takeError());
        expectKernelsCompile(f, *plan);
      }
  }
}

// Every graph the GPU test runs plans on the CPU: the grouping once walked
// ops that recomputation had erased, and six of the 240 graphs crashed there.
TEST(Fusion, EveryGpuRandomGraphPlans) {
  for (uint64_t seed = 0; seed < 240; ++seed) {
    std::string text = fusec::test::randomGraph(seed);
    mlir::MLIRContext ctx;
    auto plan = planFor(ctx, text, "random.json", true, "sm_90a");
    ASSERT_TRUE(bool(plan)) << "seed " << seed << ": " << llvm::toString(plan.takeError());
    EXPECT_FALSE(plan->steps.empty()) << "seed " << seed;
  }
}

TEST(Fusion, RandomGraphKernelsCompileWithNvrtc) {
  if (llvm::Error err = loadNvrtc())
    GTEST_SKIP() << "NVRTC not available: " << llvm::toString(std::move(err));
  for (uint64_t seed = 0; seed < 25; ++seed) {
    std::string text = fusec::test::randomGraph(seed);
    for (const char *arch : {"sm_80", "sm_90a"}) {
      mlir::MLIRContext ctx;
      auto plan = planFor(ctx, text, "random.json", true, arch);
      ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError()) << "\n" << text;
      expectKernelsCompile("seed " + std::to_string(seed), *plan);
    }
  }
}

} // namespace

// Independent small kernels next to each other share one launch: two
// softmaxes of separate inputs read and write nothing of each other's. The
// joined kernel compiles.
TEST(Fusion, IndependentSmallKernelsShareOneLaunch) {
  if (llvm::Error err = loadNvrtc())
    GTEST_SKIP() << "NVRTC not available: " << llvm::toString(std::move(err));
  const std::string graph = R"({"fusec": 1, "name": "two_softmaxes", "inputs": [
      {"name": "a", "dtype": "f32", "shape": [64, 256]},
      {"name": "b", "dtype": "f32", "shape": [32, 512]}],
    "nodes": [{"name": "sa", "op": "softmax", "inputs": ["a"], "attrs": {"axis": -1}},
              {"name": "sb", "op": "softmax", "inputs": ["b"], "attrs": {"axis": -1}}],
    "outputs": ["sa", "sb"]})";
  for (const char *arch : {"sm_80", "sm_90a"}) {
    mlir::MLIRContext ctx;
    auto plan = planFor(ctx, graph, "two.json", true, arch, "auto");
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    int shared = 0;
    for (const PlanStep &s : plan->steps)
      if (s.kind == PlanStep::Kind::Kernel && s.kernel.schedule.rfind("one launch: ", 0) == 0) {
        ++shared;
        EXPECT_NE(s.kernel.source.find("if (blockIdx.x < "), std::string::npos);
      }
    EXPECT_EQ(shared, 1) << arch;
    expectKernelsCompile("two softmaxes", *plan);
  }
}
