//===- GemmConfigTest.cpp - tile configuration strings (tuning-cache values) ===//
//
// A configuration is stored in gemm-tuning.json as its string; every kind
// must read back as itself, and a damaged or impossible value must be
// refused (the compile then keeps the heuristic's choice).
//
//===----------------------------------------------------------------------===//
#include "compiler/schedule/GemmConfig.h"

#include <gtest/gtest.h>

using fusec::codegen::GemmConfig;

TEST(GemmConfig, EveryKindReadsBackAsItself) {
  for (const char *text : {"128x128x32 w64x32 s4 k1", "64x64x32 w32x32 s4 k8", "gemv c2 w8",
                           "wg 128x256x64 s4", "wg 128x128x64 s6 pp", "wg 128x256x64 s4 c2",
                           "wg 64x128x64 s6", "gemv t2 w8 k1 s4", "gemv t1 w4 k3 s6",
                           "wgv r64 s16", "wgv r8 s2", "wgv r128 s12"}) {
    GemmConfig c;
    ASSERT_TRUE(GemmConfig::parse(text, c)) << text;
    EXPECT_EQ(c.str(), text);
  }
  GemmConfig c;
  ASSERT_TRUE(GemmConfig::parse("wg 128x256x64 s4 c2", c));
  EXPECT_TRUE(c.wgmma);
  EXPECT_EQ(c.cluster, 2);
  EXPECT_FALSE(c.pingpong);
  ASSERT_TRUE(GemmConfig::parse("wg 128x128x64 s6 pp", c));
  EXPECT_TRUE(c.pingpong);
  EXPECT_EQ(c.cluster, 1);
  EXPECT_EQ(c.threads(), 384);
  ASSERT_TRUE(GemmConfig::parse("gemv t2 w4 k3 s6", c));
  EXPECT_TRUE(c.gemv);
  EXPECT_EQ(c.gemvTiles, 2);
  EXPECT_EQ(c.gemvSplit, 3);
  EXPECT_EQ(c.stages, 6);
  EXPECT_EQ(c.threads(), 128);
  ASSERT_TRUE(GemmConfig::parse("wgv r96 s13", c));
  EXPECT_TRUE(c.wgv);
  EXPECT_FALSE(c.gemv || c.wgmma);
  EXPECT_EQ(c.wgvRows, 96);
  EXPECT_EQ(c.stages, 13);
  EXPECT_EQ(c.threads(), 160);  // a consumer warpgroup and a producer warp
}

TEST(GemmConfig, DamagedOrImpossibleValuesAreRefused) {
  for (const char *text : {"", "wg", "wg 128x256x64", "wg 128x256x64 s4 c3",
                           "wg 128x256x64 s4 pp c2", "wg 128x256x64 s4 c2 pp",
                           "wg 128x256x64 s4 junk", "wg 128x256x32 s4", "wg 256x256x64 s4",
                           "wg 128x256x64 s1", "wg 128x256x64 s4 pp" /* 256 accumulators */,
                           "gemv c9 w8", "128x128x32 w48x32 s4 k1", "gemv t2 w8 k1",
                           "gemv t0 w8 k1 s4", "gemv t5 w8 k1 s4", "gemv t2 w8 k0 s4",
                           "gemv t2 w8 k1 s1", "wgv", "wgv r64", "wgv r0 s8", "wgv r12 s8",
                           "wgv r136 s8", "wgv r64 s1", "wgv r64 s17", "wgv r64 s8 c2",
                           // split-K and tiles past what any kernel takes (a hand-edited
                           // tuning cache once asked for k2147483647)
                           "16x16x16 w16x16 s2 k2147483647", "16x16x16 w16x16 s2 k513",
                           "512x64x32 w64x64 s4 k1", "64x64x256 w32x32 s4 k1", "64x64x32 w32x32 s9 k1"}) {
    GemmConfig c;
    c.bm = 7;  // left alone when refused
    EXPECT_FALSE(GemmConfig::parse(text, c)) << "'" << text << "'";
    EXPECT_EQ(c.bm, 7) << text;
  }
}

// 9-64 rows: the tensor-core GEMV's first candidate takes the tiles per warp
// that fill the SMs' waves best (one block of 8 warps per SM), with the most
// stages that fit the GPU's shared memory.
TEST(GemmConfig, TensorCoreGemvTilesFillTheWaves) {
  using fusec::codegen::GemmShape;
  const fusec::DeviceProfile *h100 = fusec::findDeviceProfile("h100");
  const fusec::DeviceProfile *a100 = fusec::findDeviceProfile("a100");
  ASSERT_TRUE(h100 && a100);
  ASSERT_EQ(h100->smCount, 132);
  auto first = [](GemmShape s, const fusec::DeviceProfile &p) {
    auto c = fusec::codegen::gemmCandidates(s, p, true);
    return c.empty() ? std::string() : c.front().str();
  };
  // 6144 wide: 384 tiles of 16 rows; 3 per warp make 128 blocks, one wave
  // (2 per warp would make 192: 1.45 waves).
  EXPECT_EQ(first({32, 6144, 4096, 1}, *h100), "gemv t3 w8 k1 s4");
  // 4096 wide: 2 per warp, 128 blocks; 1 would need two waves.
  EXPECT_EQ(first({32, 4096, 4096, 1}, *h100), "gemv t2 w8 k1 s4");
  EXPECT_EQ(first({32, 4096, 14336, 1}, *h100), "gemv t2 w8 k1 s4");
  // 1024 wide: fewer blocks than SMs either way; the fewest tiles per block.
  EXPECT_EQ(first({32, 1024, 4096, 1}, *h100), "gemv t1 w8 k1 s4");
  // 64 rows: the sums of 2 tiles would pass the 48 KB of static shared
  // memory, and an A100 fits 3 stages, not 4.
  EXPECT_EQ(first({64, 4096, 4096, 1}, *h100), "gemv t1 w8 k1 s4");
  EXPECT_EQ(first({64, 4096, 4096, 1}, *a100), "gemv t1 w8 k1 s3");
}
