//===- WgmmaPlanTest.cpp - the Hopper GEMM kernels a plan asks for --------===//
//
// Plans of matmul groups on sm_90a: the tensor maps, tiles and shared memory
// of the TMA + wgmma kernel (a TMA-loaded residual, the dual product, products
// side by side, the large-shape candidates), and that every kernel compiles
// with NVRTC.
//
//===----------------------------------------------------------------------===//
#include "compiler/pipeline/Compile.h"
#include "frontends/json/GraphReader.h"
#include "runtime/Nvrtc.h"
#include "test/common/RandomGraph.h"
#include "test/unit/PlanTestUtil.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <set>

using namespace fusec;
using fusec::testing::expectKernelsCompile;
using fusec::testing::planFor;

namespace {

// A residual [M, N] beside a TMA-stored output: the TMA loads it into the
// output's boxes (a fourth tensor map) for every wgmma candidate but the
// ping-pong one, with a box per 64 columns where they fit (3 stages) and two
// in turn otherwise; every kernel compiles.
TEST(Fusion, ResidualRidesInTheOutputBoxes) {
  if (llvm::Error err = loadNvrtc())
    GTEST_SKIP() << "NVRTC not available: " << llvm::toString(std::move(err));
  for (int cand = 0; cand < 5; ++cand) {
    mlir::MLIRContext ctx;
    std::string label = "candidate " + std::to_string(cand);
    auto plan = planFor(ctx, fusec::test::linearGeluGraph(2000, 2200, 200, "bf16", true),
                        "gemm_tiles.json", true, "sm_90a", "fusec", cand);
    ASSERT_TRUE(bool(plan)) << label << ": " << llvm::toString(plan.takeError());
    ASSERT_EQ(plan->steps.size(), 1u) << label;
    const PlanKernel &k = plan->steps[0].kernel;
    bool boxed = cand != 2;
    ASSERT_EQ(k.tensorMaps.size(), boxed ? 4u : 2u) << label << ": " << k.gemmConfig;
    EXPECT_EQ(k.schedule.find("TMA-loaded residual") != std::string::npos, boxed) << label;
    if (boxed) {
      EXPECT_EQ(k.tensorMaps[3].arg, 3);  // x, w, b, r
      EXPECT_EQ(k.tensorMaps[3].rows, 2000u);
      EXPECT_EQ(k.tensorMaps[3].cols, 2200u);
      // Boxes of 8 KB per consumer after the stages: 2, or 4 with 3 stages.
      int stages = cand == 1 ? 3 : cand == 3 ? 6 : 4, bn = cand == 3 ? 128 : 256;
      int slots = cand == 1 ? 4 : 2;
      EXPECT_EQ(k.sharedBytes, unsigned((128 + bn) * 128 * stages + 1024 + 2 * slots * 8192))
          << label;
    }
    expectKernelsCompile(label, *plan);
  }
}

// SwiGLU's gate and up (one A, two weights of one shape) on Hopper: one dual
// product, its weights' two tensor maps beside A's and the output's, both
// candidates of 128 x 128 tiles with two B tiles a stage, and every kernel
// compiles. For sm_80 there is no dual kernel: up is a matmul of its own.
TEST(Fusion, GateAndUpShareOneDualProduct) {
  if (llvm::Error err = loadNvrtc())
    GTEST_SKIP() << "NVRTC not available: " << llvm::toString(std::move(err));
  for (int cand = 0; cand < 2; ++cand) {
    mlir::MLIRContext ctx;
    std::string label = "candidate " + std::to_string(cand);
    auto plan = planFor(ctx, fusec::test::swigluGraph(1000, 776, 200, "bf16"), "swiglu.json",
                        true, "sm_90a", "auto", cand);
    ASSERT_TRUE(bool(plan)) << label << ": " << llvm::toString(plan.takeError());
    ASSERT_EQ(plan->steps.size(), 1u) << label;
    const PlanKernel &k = plan->steps[0].kernel;
    EXPECT_NE(k.schedule.find("dual product"), std::string::npos) << k.schedule;
    EXPECT_EQ(k.gemmConfig, cand == 0 ? "wg 128x128x64 s4" : "wg 128x128x64 s3");
    EXPECT_NE(k.gemmKey.find(" dual"), std::string::npos) << k.gemmKey;
    ASSERT_EQ(k.tensorMaps.size(), 4u);  // A, w_gate, w_up, the output
    EXPECT_EQ(k.tensorMaps[0].rows, 1000u);
    EXPECT_EQ(k.tensorMaps[1].rows, 776u);
    EXPECT_EQ(k.tensorMaps[2].rows, 776u);
    EXPECT_NE(k.tensorMaps[1].arg, k.tensorMaps[2].arg);
    EXPECT_EQ(k.tensorMaps[3].cols, 776u);
    int stages = cand == 0 ? 4 : 3;
    EXPECT_EQ(k.sharedBytes, unsigned((128 + 2 * 128) * 128 * stages + 1024 + 2 * 2 * 8192))
        << label;
    expectKernelsCompile(label, *plan);
  }
  mlir::MLIRContext ctx;
  auto ampere = planFor(ctx, fusec::test::swigluGraph(1000, 776, 200, "bf16"), "swiglu.json",
                        true, "sm_80", "auto", -1);
  ASSERT_TRUE(bool(ampere)) << llvm::toString(ampere.takeError());
  EXPECT_EQ(ampere->steps.size(), 2u);
  // With a residual added: the TMA loads it too, a fifth tensor map.
  mlir::MLIRContext ctx2;
  auto res = planFor(ctx2, fusec::test::swigluGraph(1000, 776, 200, "bf16", true), "swiglu.json",
                     true, "sm_90a", "auto", -1);
  ASSERT_TRUE(bool(res)) << llvm::toString(res.takeError());
  ASSERT_EQ(res->steps.size(), 1u);
  EXPECT_NE(res->steps[0].kernel.schedule.find("TMA-loaded residual"), std::string::npos)
      << res->steps[0].kernel.schedule;
  EXPECT_EQ(res->steps[0].kernel.tensorMaps.size(), 5u);
  expectKernelsCompile("dual with a residual", *res);
}

// Q/K/V-like siblings written as they are (ragged M and N, widths that end
// mid-box) on Hopper: one kernel over their tiles side by side, a weight and
// an output tensor map per product, every candidate compiles. For sm_80 they
// stay three products.
TEST(Fusion, SiblingProductsRunSideBySide) {
  if (llvm::Error err = loadNvrtc())
    GTEST_SKIP() << "NVRTC not available: " << llvm::toString(std::move(err));
  const std::string graph = fusec::test::siblingProductsGraph(1000, {776, 200, 136}, 200, "bf16");
  for (int cand = 0; cand < 2; ++cand) {
    mlir::MLIRContext ctx;
    std::string label = "candidate " + std::to_string(cand);
    auto plan = planFor(ctx, graph, "siblings.json", true, "sm_90a", "auto", cand);
    ASSERT_TRUE(bool(plan)) << label << ": " << llvm::toString(plan.takeError());
    ASSERT_EQ(plan->steps.size(), 1u) << label;
    const PlanKernel &k = plan->steps[0].kernel;
    EXPECT_NE(k.schedule.find("3 products side by side"), std::string::npos) << k.schedule;
    EXPECT_NE(k.gemmKey.find(" parts 776 200 136"), std::string::npos) << k.gemmKey;
    ASSERT_EQ(k.tensorMaps.size(), 7u);  // A, three weights, three outputs
    EXPECT_EQ(k.tensorMaps[0].rows, 1000u);
    const unsigned widths[3] = {776, 200, 136};
    for (int p = 0; p < 3; ++p) {
      EXPECT_EQ(k.tensorMaps[1 + p].rows, widths[p]) << label << " weight " << p;
      EXPECT_EQ(k.tensorMaps[1 + p].cols, 200u) << label << " weight " << p;
      EXPECT_EQ(k.tensorMaps[4 + p].rows, 1000u) << label << " output " << p;
      EXPECT_EQ(k.tensorMaps[4 + p].cols, widths[p]) << label << " output " << p;
      EXPECT_EQ(k.tensorMaps[4 + p].rowStrideBytes, widths[p] * 2u) << label << " output " << p;
    }
    // Four distinct inputs (the group numbers them in its own order); part
    // p's output map is the group's result p (y0, y1, y2 in yield order),
    // which follows the 4 inputs.
    std::set<int> inputs;
    for (int t = 0; t < 4; ++t)
      inputs.insert(k.tensorMaps[t].arg);
    EXPECT_EQ(inputs, (std::set<int>{0, 1, 2, 3})) << label;
    ASSERT_EQ(k.args.size(), 7u) << label;
    for (int p = 0; p < 3; ++p) {
      int arg = k.tensorMaps[4 + p].arg;
      ASSERT_GE(arg, 4) << label << " output " << p;
      ASSERT_LT(arg, 7) << label << " output " << p;
      // The buffer that map writes has the part's width.
      EXPECT_EQ(plan->buffers[k.args[arg]].tensor.shape.back(), int64_t(widths[p]))
          << label << " output " << p;
    }
    expectKernelsCompile(label, *plan);
  }
  mlir::MLIRContext ctx;
  auto ampere = planFor(ctx, graph, "siblings.json", true, "sm_80", "auto", -1);
  ASSERT_TRUE(bool(ampere)) << llvm::toString(ampere.takeError());
  EXPECT_EQ(ampere->steps.size(), 3u);
  // A tuned configuration whose stages leave no room for the output boxes
  // (128 x 128, 7 stages: 224 KB) gives way to one that has it; it was a
  // compile error.
  {
    mlir::MLIRContext ctxT;
    auto module = importGraphText(graph, "siblings.json", ctxT);
    ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
    CompileOptions o;
    o.arch = "sm_90a";
    o.gemmTuning["sm_90a bf16 m1000 n1112 k200 b1 aK bK parts 776 200 136"] = "wg 128x128x64 s7";
    ASSERT_FALSE(bool(fuseModule(**module, o)));
    auto tuned = buildPlan(**module, o);
    ASSERT_TRUE(bool(tuned)) << llvm::toString(tuned.takeError());
    ASSERT_EQ(tuned->steps.size(), 1u);
    EXPECT_NE(tuned->steps[0].kernel.gemmConfig, "wg 128x128x64 s7");
    EXPECT_NE(tuned->steps[0].kernel.schedule.find("side by side"), std::string::npos);
  }
  // Decode-sized rows keep the dot-product kernel.
  mlir::MLIRContext ctx2;
  auto decode = planFor(ctx2, fusec::test::siblingProductsGraph(4, {776, 200, 136}, 200, "bf16"),
                        "siblings.json", true, "sm_90a", "auto", -1);
  ASSERT_TRUE(bool(decode)) << llvm::toString(decode.takeError());
  ASSERT_EQ(decode->steps.size(), 1u);
  EXPECT_EQ(decode->steps[0].kernel.schedule.find("side by side"), std::string::npos)
      << decode->steps[0].kernel.schedule;
}

// A residual of the other 16-bit type than the output (f16 cast into a bf16
// sum) rides in the output's boxes all the same: read back as its own type.
TEST(Fusion, ResidualOfAnotherSixteenBitTypeCompiles) {
  if (llvm::Error err = loadNvrtc())
    GTEST_SKIP() << "NVRTC not available: " << llvm::toString(std::move(err));
  const char *graph = R"({"fusec": 1, "name": "g", "inputs": [
      {"name": "x", "dtype": "bf16", "shape": [512, 256]},
      {"name": "w", "dtype": "bf16", "shape": [1024, 256]},
      {"name": "r", "dtype": "f16", "shape": [512, 1024]}],
    "nodes": [{"name": "h", "op": "linear", "inputs": ["x", "w"]},
      {"name": "rc", "op": "cast", "inputs": ["r"], "attrs": {"dtype": "bf16"}},
      {"name": "y", "op": "add", "inputs": ["h", "rc"]}], "outputs": ["y"]})";
  mlir::MLIRContext ctx;
  auto plan = planFor(ctx, graph, "g.json", true, "sm_90a", "fusec", 0);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  ASSERT_EQ(plan->steps.size(), 1u);
  const PlanKernel &k = plan->steps[0].kernel;
  EXPECT_NE(k.schedule.find("TMA-loaded residual"), std::string::npos) << k.schedule;
  ASSERT_EQ(k.tensorMaps.size(), 4u);
  EXPECT_FALSE(k.tensorMaps[3].bf16);  // the residual's map is f16
  EXPECT_NE(k.source.find("fz_load_shared<fz_f16, 2>(reinterpret_cast<const fz_f16 *>(fz_out0_tile)"),
            std::string::npos);
  expectKernelsCompile("f16 residual", *plan);
}

// Every tile configuration of a large GEMM compiles. On sm_90a the planner
// gives it to the TMA + wgmma kernel, whose configurations are the only
// candidates (tensor maps of both operands: 128 x 256 with 4 and 3 stages,
// 128 x 128 ping-pong, 128 x 128 and 128 x 256 in clusters of two sharing B
// tiles here, 128 x 128 and 64 x 128 on a shape of fewer tiles); a candidate
// index past them keeps the heuristic's first. Elsewhere the portable
// mma.sync GEMM's, never a wgmma one.
TEST(Fusion, LargeGemmCandidatesCompileWithNvrtc) {
  if (llvm::Error err = loadNvrtc())
    GTEST_SKIP() << "NVRTC not available: " << llvm::toString(std::move(err));
  for (const char *dtype : {"bf16", "f16"})
    for (const char *arch : {"sm_80", "sm_90a"})
      for (int n : {1500, 2200})
      for (int cand = 0; cand < (n == 1500 ? 2 : 10); ++cand) {
        mlir::MLIRContext ctx;
        std::string label = std::string(dtype) + " " + arch + " n " + std::to_string(n) +
                            " candidate " + std::to_string(cand);
        auto plan = planFor(ctx, fusec::test::linearGeluGraph(2000, n, 200, dtype),
                            "gemm_tiles.json", true, arch, "fusec", cand);
        ASSERT_TRUE(bool(plan)) << label << ": " << llvm::toString(plan.takeError());
        ASSERT_EQ(plan->steps.size(), 1u) << label;
        const PlanKernel &k = plan->steps[0].kernel;
        bool hopper = std::string(arch) == "sm_90a";
        // The configuration that runs: the candidate, or past the wgmma
        // kernel's the first.
        int ran = hopper && cand >= (n == 1500 ? 2 : 5) ? 0 : cand;
        bool clustered = hopper && n == 2200 && ran == 4;
        EXPECT_EQ(k.clusterX, clustered ? 2u : 1u) << label << ": " << k.gemmConfig;
        EXPECT_EQ(k.grid % k.clusterX, 0u) << label;
        // N = 2200 makes 16-byte output rows: the result leaves through TMA
        // stores (not from ping-pong kernels), a third tensor map.
        bool tmaStore = hopper && n == 2200 && ran != 2;
        EXPECT_EQ(k.tensorMaps.size(), hopper ? (tmaStore ? 3u : 2u) : 0u)
            << label << ": " << k.gemmConfig;
        EXPECT_EQ(k.schedule.find("TMA stores") != std::string::npos, tmaStore) << label;
        if (tmaStore) {
          EXPECT_EQ(k.tensorMaps[2].arg, 3);  // x, w, b, then the output
          EXPECT_EQ(k.tensorMaps[2].rows, 2000u);
          EXPECT_EQ(k.tensorMaps[2].cols, (uint64_t)n);
          EXPECT_EQ(k.tensorMaps[2].rowStrideBytes, 2u * n);
          EXPECT_EQ(k.tensorMaps[2].boxRows, 64u);
          EXPECT_EQ(k.tensorMaps[2].boxCols, 64u);
        }
        EXPECT_EQ(k.gemmConfig.rfind("wg ", 0) == 0, hopper) << label << ": " << k.gemmConfig;
        if (hopper) {
          EXPECT_EQ(k.tensorMaps[0].rows, 2000u);  // x: M rows of K
          EXPECT_EQ(k.tensorMaps[1].rows, (uint64_t)n);  // w: N rows of K
          EXPECT_EQ(k.tensorMaps[1].rowStrideBytes, 400u);
          // Each block of a cluster loads half of the B tile and multicasts it.
          EXPECT_EQ(k.tensorMaps[1].boxRows, clustered ? 128u : (n == 2200 && ran < 2 ? 256u : 128u))
              << label;
          EXPECT_EQ(k.tensorMaps[0].bf16, std::string(dtype) == "bf16");
        }
        expectKernelsCompile(label, *plan);
      }
}

} // namespace
