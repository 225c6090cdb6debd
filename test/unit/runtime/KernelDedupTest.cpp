//===- KernelDedupTest.cpp - one compile per distinct kernel body --------===//
#include "runtime/KernelDedup.h"
#include "runtime/Nvrtc.h"

#include "test/unit/runtime/RuntimeTestUtil.h"

#include <gtest/gtest.h>

using namespace fusec;

namespace {

/// A kernel as the code generator writes one: the prelude, the header
/// comment naming the graph nodes, a static shared array, the entry.
std::string layerKernel(const std::string &name, const std::string &node) {
  return "// ---- prelude ----\n"
         "__device__ __forceinline__ float twice(float v) { return 2.f * v; }\n"
         "// ---- end of prelude ----\n\n"
         "// kernel " + name + " (pointwise)\n"
         "//   graph nodes: " + node + "\n"
         "//   HBM bytes: 8192 fused; predicted 1.00 us\n"
         "extern \"C\" __global__ void __launch_bounds__(128)\n" + name +
         "(const float *__restrict__ in0, float *__restrict__ out0) {\n"
         "  __shared__ float stage[128];\n"
         "  stage[threadIdx.x] = twice(in0[blockIdx.x * 128 + threadIdx.x]);\n"
         "  __syncthreads();\n"
         "  out0[blockIdx.x * 128 + threadIdx.x] = stage[127 - threadIdx.x];\n"
         "}\n";
}

TEST(KernelDedup, CanonicalNameDropsThePlanPosition) {
  EXPECT_EQ(canonicalKernelName("k12_matmul_add"), "k_matmul_add");
  EXPECT_EQ(canonicalKernelName("k0_max_sub_exp_sum_etc"), "k_max_sub_exp_sum_etc");
  // Not a planned kernel's name: kept.
  EXPECT_EQ(canonicalKernelName("kx_mul"), "kx_mul");
  EXPECT_EQ(canonicalKernelName("k12"), "k12");
  EXPECT_EQ(canonicalKernelName("axpy"), "axpy");
}

TEST(KernelDedup, TwoLayersKernelsHaveOneCanonicalForm) {
  CanonicalKernel a = canonicalKernel("k3_mul", layerKernel("k3_mul", "l0_y"));
  CanonicalKernel b = canonicalKernel("k15_mul", layerKernel("k15_mul", "l1_y"));
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.entry, "k_mul");
  EXPECT_EQ(b.entry, "k_mul");
  EXPECT_EQ(a.source.find("graph nodes"), std::string::npos);
  EXPECT_EQ(a.source.find("k3_mul"), std::string::npos);
  EXPECT_NE(a.source.find("k_mul(const float"), std::string::npos);
  // The prelude and the body stay as written.
  EXPECT_NE(a.source.find("// ---- end of prelude ----\n\nextern \"C\""), std::string::npos);
}

TEST(KernelDedup, ReplacesTheNameOnlyAsAWholeIdentifier) {
  std::string src = "// kernel k1 (pointwise)\n//   graph nodes: y\n"
                    "__device__ int k10, fz_k1, k1_x;\nextern \"C\" __global__ void k1(int *p) { *p = k10; }\n";
  std::string src2 = "// kernel k1_x (pointwise)\n//   graph nodes: y\n"
                     "__device__ int k10, fz_k1_x, k1_xy;\nextern \"C\" __global__ void k1_x(int *p) { *p = k10; }\n";
  CanonicalKernel c = canonicalKernel("k1_x", src2);
  EXPECT_EQ(c.entry, "k_x");
  EXPECT_EQ(c.source, "__device__ int k10, fz_k1_x, k1_xy;\nextern \"C\" __global__ void k_x(int *p) { *p = k10; }\n");
  // A name with no plan position is kept; the header still goes.
  CanonicalKernel d = canonicalKernel("k1", src);
  EXPECT_EQ(d.entry, "k1");
  EXPECT_EQ(d.source, "__device__ int k10, fz_k1, k1_x;\nextern \"C\" __global__ void k1(int *p) { *p = k10; }\n");
}

TEST(KernelDedup, KeepsTheNameWhereTheCanonicalOneIsTaken) {
  std::string src = "// kernel k2_y (pointwise)\n//   graph nodes: y\n"
                    "__device__ int k_y;\nextern \"C\" __global__ void k2_y(int *p) { *p = k_y; }\n";
  CanonicalKernel c = canonicalKernel("k2_y", src);
  EXPECT_EQ(c.entry, "k2_y");
  EXPECT_EQ(c.source, "__device__ int k_y;\nextern \"C\" __global__ void k2_y(int *p) { *p = k_y; }\n");
}

TEST(KernelDedup, KeepsCommentsThatAreNotTheHeader) {
  // A "//   " line not under the header, and a header of another name.
  std::string src = "// kernel k9 (pointwise)\n//   graph nodes: z\nint a;\n//   indented note\n";
  EXPECT_EQ(canonicalKernel("k1", src).source, src);
}

TEST(KernelDedup, GroupsEqualBodies) {
  KernelBodies b = distinctBodies({{"k0_mul", layerKernel("k0_mul", "l0_y")},
                                   {"k1_add", "extern \"C\" __global__ void k1_add() {}\n"},
                                   {"k2_mul", layerKernel("k2_mul", "l1_y")}});
  ASSERT_EQ(b.distinct.size(), 2u);
  EXPECT_EQ(b.of, (std::vector<size_t>{0, 1, 0}));
  EXPECT_EQ(b.first, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(b.entry, (std::vector<std::string>{"k_mul", "k_add"}));
}

TEST(KernelDedup, RenamedPtxEqualsThePtxOfTheNamedSource) {
  FUSEC_REQUIRE_NVRTC();
  // The named kernel compiled as written, and its canonical form compiled
  // and renamed: the same PTX, entry, parameters and the static shared
  // array's mangled name included.
  std::string named = layerKernel("k15_mul", "l1_y");
  auto direct = compile({"k15_mul", named, "sm_90a", {}, true});
  ASSERT_TRUE(bool(direct)) << llvm::toString(direct.takeError());
  CanonicalKernel c = canonicalKernel("k15_mul", named);
  auto canonical = compile({"k15_mul", c.source, "sm_90a", {}, true});
  ASSERT_TRUE(bool(canonical)) << llvm::toString(canonical.takeError());
  EXPECT_NE(canonical->ptx, direct->ptx);
  EXPECT_NE(direct->ptx.find("_ZZ7k15_mulE5stage"), std::string::npos);
  EXPECT_EQ(renameCanonicalPtx(canonical->ptx, c.entry, "k15_mul"), direct->ptx);
}

} // namespace
