//===- HostTensorTest.cpp - storage, conversion rules, random tensors -----===//
#include "compiler/support/HostTensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

using namespace fusec;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(HostTensorTest, ShapeSizesAndZeroFill) {
  HostTensor t(DType::BF16, {2, 3, 4});
  EXPECT_EQ(t.dtype(), DType::BF16);
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(t.rank(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.nbytes(), 48);
  for (int64_t i = 0; i < t.nbytes(); ++i)
    ASSERT_EQ(t.data()[i], 0);

  HostTensor scalar(DType::I64, {});
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.nbytes(), 8);
  HostTensor empty(DType::F32, {3, 0});
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_EQ(empty.nbytes(), 0);
  HostTensor flags(DType::Bool, {5});
  EXPECT_EQ(flags.nbytes(), 5);
}

TEST(HostTensorTest, StorageIsTheDtypesOwnFormat) {
  HostTensor h(DType::F16, {1});
  h.set(0, 1.0);
  EXPECT_EQ(h.data()[0], 0x00); // little-endian 0x3C00
  EXPECT_EQ(h.data()[1], 0x3C);
  HostTensor b(DType::BF16, {1});
  b.set(0, -2.0);
  EXPECT_EQ(b.data()[0], 0x00);
  EXPECT_EQ(b.data()[1], 0xC0);
  HostTensor i(DType::I32, {1});
  i.setInt(0, 0x01020304);
  EXPECT_EQ(i.data()[0], 0x04);
  EXPECT_EQ(i.data()[3], 0x01);
  HostTensor f(DType::Bool, {2});
  f.set(1, 7.0);
  EXPECT_EQ(f.data()[0], 0);
  EXPECT_EQ(f.data()[1], 1);
}

TEST(HostTensorTest, FloatStoresRoundToNearestEven) {
  HostTensor f32(DType::F32, {1}), f16(DType::F16, {1}), bf16(DType::BF16, {1});
  f32.set(0, 0.1);
  EXPECT_EQ(f32.get(0), static_cast<double>(0.1f));
  f16.set(0, 1.0 / 3.0);
  EXPECT_EQ(f16.get(0), 0.333251953125);
  bf16.set(0, 1.0 / 3.0);
  EXPECT_EQ(bf16.get(0), 0.333984375); // 0x3EAB
  // Ties: 2049 lies between the halves 2048 and 2050; 2051 between 2050 and 2052.
  f16.setInt(0, 2049);
  EXPECT_EQ(f16.get(0), 2048.0);
  f16.setInt(0, 2051);
  EXPECT_EQ(f16.get(0), 2052.0);
  bf16.setInt(0, 257);
  EXPECT_EQ(bf16.get(0), 256.0);
  f16.set(0, 70000.0);
  EXPECT_EQ(f16.get(0), kInf);
  f32.set(0, kNaN);
  EXPECT_TRUE(std::isnan(f32.get(0)));
  bf16.set(0, -kInf);
  EXPECT_EQ(bf16.get(0), -kInf);
}

TEST(HostTensorTest, IntegerStoresTruncateAndSaturate) {
  HostTensor i32(DType::I32, {1}), i64(DType::I64, {1});
  const std::pair<double, int64_t> cases32[] = {
      {2.9, 2}, {-2.9, -2}, {0.5, 0}, {-0.5, 0}, {3e9, 2147483647},
      {-3e9, -2147483648LL}, {kNaN, 0}, {kInf, 2147483647}, {-kInf, -2147483648LL},
      {2147483647.5, 2147483647}, {-2147483648.9, -2147483648LL}};
  for (auto [in, expected] : cases32) {
    i32.set(0, in);
    EXPECT_EQ(i32.getInt(0), expected) << "set(" << in << ")";
  }
  const std::pair<double, int64_t> cases64[] = {
      {1e19, std::numeric_limits<int64_t>::max()},
      {-1e19, std::numeric_limits<int64_t>::min()},
      {9223372036854775808.0, std::numeric_limits<int64_t>::max()}, // 2^63
      {-9223372036854775808.0, std::numeric_limits<int64_t>::min()},
      {kNaN, 0},
      {-7.99, -7},
      {4503599627370497.0, 4503599627370497LL}}; // 2^52 + 1, exact
  for (auto [in, expected] : cases64) {
    i64.set(0, in);
    EXPECT_EQ(i64.getInt(0), expected) << "set(" << in << ")";
  }
}

TEST(HostTensorTest, BoolStoresAreNonZero) {
  HostTensor b(DType::Bool, {1});
  const std::pair<double, int64_t> cases[] = {
      {0.0, 0}, {-0.0, 0}, {0.5, 1}, {-3.0, 1}, {kNaN, 1}, {kInf, 1}};
  for (auto [in, expected] : cases) {
    b.set(0, in);
    EXPECT_EQ(b.getInt(0), expected) << "set(" << in << ")";
    EXPECT_EQ(b.get(0), static_cast<double>(expected));
  }
  b.setInt(0, -3);
  EXPECT_EQ(b.getInt(0), 1);
  b.setInt(0, 0);
  EXPECT_EQ(b.getInt(0), 0);
}

TEST(HostTensorTest, SetIntWrapsI32AndConvertsFloats) {
  HostTensor i32(DType::I32, {1}), i64(DType::I64, {1}), f32(DType::F32, {1});
  i32.setInt(0, int64_t(1) << 31);
  EXPECT_EQ(i32.getInt(0), -2147483648LL);
  i32.setInt(0, (int64_t(1) << 32) + 5);
  EXPECT_EQ(i32.getInt(0), 5);
  i32.setInt(0, -1);
  EXPECT_EQ(i32.getInt(0), -1);
  i64.setInt(0, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(i64.getInt(0), std::numeric_limits<int64_t>::min());
  f32.setInt(0, 16777217); // 2^24 + 1: a tie between 2^24 and 2^24 + 2
  EXPECT_EQ(f32.get(0), 16777216.0);
  // getInt on floats truncates toward zero.
  f32.set(0, -3.75);
  EXPECT_EQ(f32.getInt(0), -3);
}

TEST(HostTensorTest, RandomTensorsAreReproducible) {
  for (DType t : kAllDTypes) {
    HostTensor a = randomTensor(t, {3, 17}, 42), b = randomTensor(t, {3, 17}, 42);
    HostTensor c = randomTensor(t, {3, 17}, 43);
    EXPECT_EQ(a, b) << dtypeName(t);
    EXPECT_NE(a, c) << dtypeName(t);
  }
}

TEST(HostTensorTest, RandomTensorsFollowSplitMix64) {
  // splitmix64 with seed 0 yields 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4,
  // 0x06C45D188009454F first; integers are (top 4 bits) - 8, bool the top bit.
  HostTensor ints = randomTensor(DType::I32, {3}, 0);
  EXPECT_EQ(ints.getInt(0), 0xE - 8);
  EXPECT_EQ(ints.getInt(1), 0x6 - 8);
  EXPECT_EQ(ints.getInt(2), 0x0 - 8);
  HostTensor flags = randomTensor(DType::Bool, {3}, 0);
  EXPECT_EQ(flags.getInt(0), 1);
  EXPECT_EQ(flags.getInt(1), 0);
  EXPECT_EQ(flags.getInt(2), 0);
  // f32: -2 + (top 25 bits) * 2^-23.
  HostTensor floats = randomTensor(DType::F32, {1}, 0);
  EXPECT_EQ(floats.get(0), -2.0 + static_cast<double>(0xE220A8397B1DCDAFull >> 39) * 0x1p-23);
}

TEST(HostTensorTest, RandomTensorsStayInRange) {
  for (DType t : kAllDTypes) {
    HostTensor r = randomTensor(t, {4096}, 7);
    std::set<int64_t> seen;
    double lo = 1e9, hi = -1e9;
    for (int64_t i = 0; i < r.numel(); ++i) {
      lo = std::min(lo, r.get(i));
      hi = std::max(hi, r.get(i));
      seen.insert(r.getInt(i));
    }
    if (isFloat(t)) {
      EXPECT_GE(lo, -2.0) << dtypeName(t);
      EXPECT_LT(hi, 2.0) << dtypeName(t);
      EXPECT_LT(lo, -1.9) << dtypeName(t);
      EXPECT_GT(hi, 1.9) << dtypeName(t);
    } else if (t == DType::Bool) {
      EXPECT_EQ(seen, (std::set<int64_t>{0, 1}));
    } else {
      EXPECT_EQ(lo, -8.0) << dtypeName(t);
      EXPECT_EQ(hi, 7.0) << dtypeName(t);
      EXPECT_EQ(seen.size(), 16u) << dtypeName(t);
    }
  }
}

TEST(HostTensorTest, SummaryIsOneLine) {
  HostTensor t(DType::F32, {2, 3});
  const double values[] = {1.0, -0.5, kNaN, 3.0, kInf, 2.0};
  for (int i = 0; i < 6; ++i)
    t.set(i, values[i]);
  EXPECT_EQ(summary(t),
            "f32 [2, 3] min=-0.5 max=3 mean=1.375 nan=1 inf=1 first=[1, -0.5, nan, 3, ...]");
  HostTensor i(DType::I32, {2});
  i.setInt(0, -4);
  i.setInt(1, 9);
  EXPECT_EQ(summary(i), "i32 [2] min=-4 max=9 mean=2.5 nan=0 inf=0 first=[-4, 9]");
  EXPECT_EQ(summary(HostTensor(DType::BF16, {0})),
            "bf16 [0] min=- max=- mean=- nan=0 inf=0 first=[]");
}

} // namespace
