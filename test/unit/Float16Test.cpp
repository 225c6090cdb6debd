//===- Float16Test.cpp - bf16 and IEEE half conversions -------------------===//
#include "compiler/support/Float16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace fusec;

namespace {

float fromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

bool isHalfNaN(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0; }
bool isBF16NaN(uint16_t h) { return (h & 0x7F80) == 0x7F80 && (h & 0x007F) != 0; }

const float kInf = std::numeric_limits<float>::infinity();

//===----------------------------------------------------------------------===//
// IEEE half
//===----------------------------------------------------------------------===//

TEST(HalfTest, ExactValues) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(floatToHalf(0.5f), 0x3800);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7BFF); // largest finite
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(halfToFloat(0x3C00), 1.0f);
  EXPECT_EQ(halfToFloat(0xC000), -2.0f);
  EXPECT_EQ(halfToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(halfToFloat(0x3555), 0.333251953125f); // 1365 / 4096, 1/3 rounded
  EXPECT_TRUE(std::signbit(halfToFloat(0x8000)));
}

TEST(HalfTest, RoundsToNearest) {
  // 0.1 lies between 0x2E66 (0.0999755859375) and 0x2E67 (0.10003662109375).
  EXPECT_EQ(floatToHalf(0.1f), 0x2E66);
  EXPECT_EQ(floatToHalf(1.0f / 3.0f), 0x3555);
  EXPECT_EQ(floatToHalf(-1.0f / 3.0f), 0xB555);
}

TEST(HalfTest, TiesGoToEven) {
  // 1 + 2^-11 is halfway between 1 (0x3C00, even) and 1 + 2^-10 (0x3C01).
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f), 0x3C00);
  // 1 + 3 * 2^-11 is halfway between 0x3C01 (odd) and 0x3C02 (even).
  EXPECT_EQ(floatToHalf(1.0f + 3 * 0x1p-11f), 0x3C02);
  // Just above a tie rounds up.
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f + 0x1p-20f), 0x3C01);
}

TEST(HalfTest, TiesGoToEvenForEveryFinitePair) {
  // Every midpoint between neighbouring positive finite halves, in double.
  for (uint32_t h = 0; h < 0x7BFF; ++h) {
    double mid = (double(halfToFloat(h)) + double(halfToFloat(h + 1))) / 2;
    uint16_t even = (h & 1) ? h + 1 : h;
    ASSERT_EQ(doubleToHalf(mid), even) << "between 0x" << std::hex << h;
    ASSERT_EQ(doubleToHalf(std::nextafter(mid, 0.0)), h);
    ASSERT_EQ(doubleToHalf(std::nextafter(mid, 1e9)), h + 1);
  }
}

TEST(HalfTest, OverflowGoesToInf) {
  // 65520 is halfway between 65504 (odd fraction) and 2^16 (not finite): rounds up.
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00);
  EXPECT_EQ(floatToHalf(65519.0f), 0x7BFF);
  EXPECT_EQ(floatToHalf(1e6f), 0x7C00);
  EXPECT_EQ(floatToHalf(-1e6f), 0xFC00);
  EXPECT_EQ(doubleToHalf(1e300), 0x7C00);
}

TEST(HalfTest, InfAndNaN) {
  EXPECT_EQ(floatToHalf(kInf), 0x7C00);
  EXPECT_EQ(floatToHalf(-kInf), 0xFC00);
  EXPECT_EQ(halfToFloat(0x7C00), kInf);
  EXPECT_EQ(halfToFloat(0xFC00), -kInf);
  EXPECT_TRUE(isHalfNaN(floatToHalf(std::numeric_limits<float>::quiet_NaN())));
  // A NaN whose payload sits only in the low fraction bits must not become Inf.
  uint16_t low = floatToHalf(fromBits(0x7F800001));
  EXPECT_TRUE(isHalfNaN(low));
  EXPECT_TRUE(isHalfNaN(floatToHalf(fromBits(0xFFC00000))));
  EXPECT_EQ(floatToHalf(fromBits(0xFFC00000)) & 0x8000, 0x8000); // sign kept
  EXPECT_TRUE(std::isnan(halfToFloat(0x7E00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7C01)));
}

TEST(HalfTest, Subnormals) {
  EXPECT_EQ(floatToHalf(0x1p-24f), 0x0001); // smallest subnormal
  EXPECT_EQ(floatToHalf(0x1p-14f), 0x0400); // smallest normal
  EXPECT_EQ(floatToHalf(1023 * 0x1p-24f), 0x03FF); // largest subnormal
  EXPECT_EQ(halfToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(halfToFloat(0x03FF), 1023 * 0x1p-24f);
  EXPECT_EQ(halfToFloat(0x8001), -0x1p-24f);
  // 2^-25 is halfway between 0 and 2^-24: ties to even gives 0.
  EXPECT_EQ(floatToHalf(0x1p-25f), 0x0000);
  EXPECT_EQ(floatToHalf(-0x1p-25f), 0x8000);
  EXPECT_EQ(floatToHalf(1.5f * 0x1p-25f), 0x0001);
  // 3 * 2^-25 is halfway between 0x0001 and 0x0002 (even).
  EXPECT_EQ(floatToHalf(3 * 0x1p-25f), 0x0002);
  // Rounding the largest subnormal's neighbourhood up carries into the exponent.
  EXPECT_EQ(floatToHalf(1023.5f * 0x1p-24f), 0x0400);
  EXPECT_EQ(floatToHalf(1e-10f), 0x0000);
}

TEST(HalfTest, EveryPatternRoundTrips) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    float f = halfToFloat(static_cast<uint16_t>(h));
    if (isHalfNaN(static_cast<uint16_t>(h))) {
      ASSERT_TRUE(std::isnan(f));
      ASSERT_TRUE(isHalfNaN(floatToHalf(f)));
      continue;
    }
    ASSERT_EQ(floatToHalf(f), h) << "pattern 0x" << std::hex << h;
  }
}

TEST(HalfTest, DoubleRoundsOnce) {
  // Above the tie by 2^-40: a double rounds up, but going through float first
  // would drop the 2^-40 and then round the tie down to even.
  double v = 1.0 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(doubleToHalf(v), 0x3C01);
  EXPECT_EQ(floatToHalf(static_cast<float>(v)), 0x3C00);
}

//===----------------------------------------------------------------------===//
// bfloat16
//===----------------------------------------------------------------------===//

TEST(BF16Test, ExactValues) {
  EXPECT_EQ(floatToBF16(1.0f), 0x3F80);
  EXPECT_EQ(floatToBF16(-2.0f), 0xC000);
  EXPECT_EQ(floatToBF16(0.0f), 0x0000);
  EXPECT_EQ(floatToBF16(-0.0f), 0x8000);
  EXPECT_EQ(bf16ToFloat(0x3F80), 1.0f);
  EXPECT_EQ(bf16ToFloat(0x4049), 3.140625f);
  EXPECT_EQ(bf16ToFloat(0x7F7F), fromBits(0x7F7F0000)); // largest finite
}

TEST(BF16Test, RoundsToNearestEven) {
  EXPECT_EQ(floatToBF16(fromBits(0x40490FDB)), 0x4049); // pi: low half < 0x8000
  EXPECT_EQ(floatToBF16(fromBits(0x3F808000)), 0x3F80); // tie, even below
  EXPECT_EQ(floatToBF16(fromBits(0x3F818000)), 0x3F82); // tie, even above
  EXPECT_EQ(floatToBF16(fromBits(0x3F808001)), 0x3F81); // just above the tie
  EXPECT_EQ(floatToBF16(fromBits(0x3F807FFF)), 0x3F80); // just below the tie
  EXPECT_EQ(floatToBF16(fromBits(0xBF818000)), 0xBF82); // negative tie
  EXPECT_EQ(floatToBF16(1.0f / 3.0f), 0x3EAB);          // 0x3EAAAAAB rounds up
}

TEST(BF16Test, OverflowGoesToInf) {
  EXPECT_EQ(floatToBF16(fromBits(0x7F7FFFFF)), 0x7F80); // float max rounds past bf16 max
  EXPECT_EQ(floatToBF16(fromBits(0x7F7F7FFF)), 0x7F7F);
  EXPECT_EQ(floatToBF16(fromBits(0xFF7FFFFF)), 0xFF80);
  EXPECT_EQ(doubleToBF16(1e39), 0x7F80);
}

TEST(BF16Test, InfAndNaN) {
  EXPECT_EQ(floatToBF16(kInf), 0x7F80);
  EXPECT_EQ(floatToBF16(-kInf), 0xFF80);
  EXPECT_EQ(bf16ToFloat(0xFF80), -kInf);
  EXPECT_EQ(floatToBF16(fromBits(0x7FC00000)), 0x7FC0);
  // Payload only in the bits that are cut off: must stay NaN, not become Inf.
  EXPECT_TRUE(isBF16NaN(floatToBF16(fromBits(0x7F800001))));
  EXPECT_TRUE(isBF16NaN(floatToBF16(fromBits(0xFF800001))));
  EXPECT_EQ(floatToBF16(fromBits(0xFF800001)) & 0x8000, 0x8000);
  EXPECT_TRUE(std::isnan(bf16ToFloat(0x7F81)));
}

TEST(BF16Test, Subnormals) {
  EXPECT_EQ(floatToBF16(fromBits(0x00010000)), 0x0001); // 2^-133
  EXPECT_EQ(bf16ToFloat(0x0001), fromBits(0x00010000));
  EXPECT_EQ(floatToBF16(fromBits(0x00008000)), 0x0000); // tie with 0
  EXPECT_EQ(floatToBF16(fromBits(0x00018000)), 0x0002); // tie, even above
  EXPECT_EQ(floatToBF16(fromBits(0x007FFFFF)), 0x0080); // carries into the smallest normal
  EXPECT_EQ(doubleToBF16(0x1p-134), 0x0000);             // below float's range, a tie
  EXPECT_EQ(doubleToBF16(1.5 * 0x1p-134), 0x0001);
  EXPECT_EQ(doubleToBF16(-1e-45), 0x8000);
}

TEST(BF16Test, EveryPatternRoundTrips) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    float f = bf16ToFloat(static_cast<uint16_t>(h));
    if (isBF16NaN(static_cast<uint16_t>(h))) {
      ASSERT_TRUE(std::isnan(f));
      ASSERT_TRUE(isBF16NaN(floatToBF16(f)));
      continue;
    }
    ASSERT_EQ(floatToBF16(f), h) << "pattern 0x" << std::hex << h;
    ASSERT_EQ(doubleToBF16(f), h);
  }
}

TEST(BF16Test, TiesGoToEvenForEveryFinitePair) {
  for (uint32_t h = 0; h < 0x7F7F; ++h) {
    double mid = (double(bf16ToFloat(h)) + double(bf16ToFloat(h + 1))) / 2;
    uint16_t even = (h & 1) ? h + 1 : h;
    ASSERT_EQ(doubleToBF16(mid), even) << "between 0x" << std::hex << h;
    ASSERT_EQ(doubleToBF16(-mid), even | 0x8000);
  }
}

} // namespace
