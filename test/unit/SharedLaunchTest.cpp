//===- SharedLaunchTest.cpp - which neighbouring kernels share one launch --===//
//
// shareLaunches joins two neighbouring kernel steps only when neither reads
// or writes what the other writes, both are small, and their launch shapes
// and resources allow one kernel; every refusal here is one of those rules.
//
//===----------------------------------------------------------------------===//
#include "compiler/pipeline/SharedLaunch.h"

#include "compiler/codegen/KernelSpec.h"
#include "compiler/codegen/Prelude.h"

#include <gtest/gtest.h>

#include <string>

using namespace fusec;

namespace {

/// A kernel step reading buffers `ins` and writing `outs`, laid out as the
/// families lay out their kernels (KernelText), and printed.
PlanStep kernel(const std::string &name, std::vector<int> ins, std::vector<int> outs,
                const std::string &extraBody = "") {
  PlanStep s;
  s.kind = PlanStep::Kind::Kernel;
  s.name = name;
  KernelText &t = s.kernel.text;
  t.header = "// kernel " + name + " (pointwise)\n";
  t.helpers = "__device__ float fz_sq_" + name + "(float v) { return v * v; }\n";
  t.qualifiers = "__launch_bounds__(256)";
  for (size_t i = 0; i < ins.size(); ++i)
    t.params.push_back({"const float *__restrict__ ", "in" + std::to_string(i)});
  for (size_t i = 0; i < outs.size(); ++i)
    t.params.push_back({"float *__restrict__ ", "out" + std::to_string(i)});
  t.staticShared = !extraBody.empty();
  t.body = extraBody + "  const int i = blockIdx.x * 256 + threadIdx.x;\n" +
           "  if (i < gridDim.x * 256) out0[i] = fz_sq_" + name + "(in0[i]);\n";
  s.kernel.entry = codegen::entryName(name);
  s.kernel.source = codegen::compiledSource(t, s.kernel.entry);
  s.kernel.block = 256;
  s.kernel.grid = 4;
  s.kernel.args = ins;
  s.kernel.inputs = ins.size();
  s.kernel.args.insert(s.kernel.args.end(), outs.begin(), outs.end());
  s.cost.predictedUs = 4.2;
  return s;
}

PlanDesc planOf(std::vector<PlanStep> steps) {
  PlanDesc p;
  p.steps = std::move(steps);
  return p;
}

TEST(SharedLaunch, IndependentSmallKernelsJoin) {
  PlanDesc p = planOf({kernel("k0_a", {0}, {1}), kernel("k1_b", {0}, {2})});
  shareLaunches(p);
  ASSERT_EQ(p.steps.size(), 1u);
  const PlanStep &m = p.steps[0];
  EXPECT_EQ(m.name, "k0_a_k1_b");
  EXPECT_EQ(m.kernel.grid, 8u);
  EXPECT_EQ(m.kernel.args, (std::vector<int>{0, 1, 0, 2}));
  EXPECT_DOUBLE_EQ(m.cost.predictedUs, 4.2);
  ASSERT_EQ(p.sharedLaunches.size(), 1u);
  EXPECT_EQ(p.sharedLaunches[0].rfind("k0_a + k1_b: independent", 0), 0u) << p.sharedLaunches[0];
  // Each part runs its own body unchanged, under a block index and grid of
  // its own part of the launch; the wait comes once, first.
  const std::string &src = m.kernel.source;
  EXPECT_NE(src.find("if (blockIdx.x < 4u)"), std::string::npos) << src;
  EXPECT_NE(src.find("fz_part1(p1_in0, p1_out0, blockIdx.x - 4u);"), std::string::npos) << src;
  EXPECT_NE(src.find("void fz_part0(const float *__restrict__ in0, float *__restrict__ out0, "
                     "const unsigned fz_bx) {\n"
                     "  const uint3 blockIdx = make_uint3(fz_bx, ::blockIdx.y, ::blockIdx.z);\n"
                     "  const dim3 gridDim(4u, ::gridDim.y, ::gridDim.z);\n"
                     "  const int i = blockIdx.x * 256 + threadIdx.x;\n"),
            std::string::npos)
      << src;
  size_t wait = src.find("fz_after_prior();");
  ASSERT_NE(wait, std::string::npos);
  EXPECT_EQ(src.find("fz_after_prior();", wait + 1), std::string::npos) << src;
  // One prelude, each part's helpers once, in order; the entry and the
  // compiled source carry no plan position (the parts' headers, which do,
  // are for people).
  const std::string prelude = codegen::kernelPrelude();
  EXPECT_EQ(src.find(prelude), 0u);
  EXPECT_EQ(src.find(prelude, 1), std::string::npos);
  EXPECT_EQ(m.kernel.entry, "k_a_k_b");
  EXPECT_NE(src.find("\nk_a_k_b(const float *__restrict__ p0_in0"), std::string::npos) << src;
  size_t ha = src.find("__device__ float fz_sq_k0_a");
  size_t hb = src.find("__device__ float fz_sq_k1_b");
  ASSERT_NE(ha, std::string::npos) << src;
  ASSERT_NE(hb, std::string::npos) << src;
  EXPECT_LT(ha, hb);
  EXPECT_EQ(src.find("fz_sq_k0_a(float v)"), src.rfind("fz_sq_k0_a(float v)"));
  EXPECT_EQ(src.find("// kernel k0_a"), std::string::npos);
  std::string annotated = codegen::annotatedSource(m.kernel);
  size_t headers = annotated.find("// kernel k0_a (pointwise)\n// kernel k1_b (pointwise)\n"
                                  "// k0_a and k1_b read and write nothing of each other's");
  EXPECT_NE(headers, std::string::npos) << annotated;
  EXPECT_LT(headers, annotated.find("__device__ float fz_sq_k0_a"));
}

TEST(SharedLaunch, DependentOrLargeOrUnlikeKernelsStayApart) {
  auto stays = [](std::vector<PlanStep> steps, const char *why) {
    PlanDesc p = planOf(std::move(steps));
    size_t n = p.steps.size();
    shareLaunches(p);
    EXPECT_EQ(p.steps.size(), n) << why;
    EXPECT_TRUE(p.sharedLaunches.empty()) << why;
  };
  stays({kernel("k0_a", {0}, {1}), kernel("k1_b", {1}, {2})}, "b reads what a writes");
  stays({kernel("k0_a", {0}, {1}), kernel("k1_b", {3}, {0})}, "b writes what a reads");
  stays({kernel("k0_a", {0}, {1}), kernel("k1_b", {3}, {1})}, "both write one buffer");
  // An independent b that differs from a in one way.
  auto b = [&](auto change) {
    PlanStep s = kernel("k1_b", {0}, {2});
    change(s);
    return s;
  };
  stays({kernel("k0_a", {0}, {1}), b([](PlanStep &s) { s.cost.predictedUs = 25; })},
        "b is predicted past 10 us");
  stays({kernel("k0_a", {0}, {1}), b([](PlanStep &s) { s.kernel.block = 128; })},
        "other block sizes");
  stays({kernel("k0_a", {0}, {1}), b([](PlanStep &s) { s.kernel.gridY = 2; })},
        "other grid rows");
  stays({kernel("k0_a", {0}, {1}), b([](PlanStep &s) { s.kernel.sharedBytes = 1024; })},
        "dynamic shared memory");
  const std::string smem = "  __shared__ float fz_tile[256];\n";
  stays({kernel("k0_a", {0}, {1}, smem), kernel("k1_b", {0}, {2}, smem)},
        "static shared memory in both");
  auto buffers = [](int first) {
    std::vector<int> ids(40);
    for (int i = 0; i < 40; ++i)
      ids[i] = first + i;
    return ids;
  };
  stays({kernel("k0_a", buffers(10), {1}), kernel("k1_b", buffers(100), {2})},
        "over 64 buffers together");
  // Which buffers a kernel writes comes from the plan (PlanKernel::inputs),
  // not from its parameter text: here b's first buffer, a's input, counts
  // as written although its parameter is const.
  PlanStep writes = kernel("k1_b", {0}, {2});
  writes.kernel.inputs = 0;
  stays({kernel("k0_a", {0}, {1}), writes}, "b writes what a reads (by the plan)");
}

TEST(SharedLaunch, EachKernelJoinsAtMostOnce) {
  // Three independent small kernels: the first two join, the third stays.
  PlanDesc p = planOf(
      {kernel("k0_a", {0}, {1}), kernel("k1_b", {0}, {2}), kernel("k2_c", {0}, {3})});
  shareLaunches(p);
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].name, "k0_a_k1_b");
  EXPECT_EQ(p.steps[1].name, "k2_c");
}

} // namespace
