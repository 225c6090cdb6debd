//===- InterpElementwiseTest.cpp - elementwise ops against hand values ----===//
//
// Expected values are worked out by hand (or are textbook constants such as
// e and erf(1)), never produced by the code under test.
//
//===----------------------------------------------------------------------===//
#include "InterpTestUtil.h"

#include <cmath>
#include <limits>

using namespace fusec;
using namespace fusec::testing;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
const DType kFloats[] = {DType::F32, DType::F16, DType::BF16};
const DType kNumeric[] = {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64};

/// Tolerance for a value computed in fp32 and rounded to `t`.
double tolFor(DType t) {
  switch (t) {
  case DType::F16: return 1e-3;
  case DType::BF16: return 8e-3;
  default: return 1e-6;
  }
}

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

TEST_F(InterpTest, NegAbsReluOnEveryNumericDtype) {
  for (DType t : kNumeric) {
    SCOPED_TRACE(dtypeName(t));
    HostTensor x = tensor(t, {2, 2}, {1.5, -2, 0, -0.25});
    if (!isFloat(t))
      x = tensor(t, {2, 2}, {3, -4, 0, -1});
    Values neg = isFloat(t) ? Values{-1.5, 2, 0, 0.25} : Values{-3, 4, 0, 1};
    Values abs = isFloat(t) ? Values{1.5, 2, 0, 0.25} : Values{3, 4, 0, 1};
    Values relu = isFloat(t) ? Values{1.5, 0, 0, 0} : Values{3, 0, 0, 0};
    expectTensor(unary("neg", x), t, {2, 2}, neg);
    expectTensor(unary("abs", x), t, {2, 2}, abs);
    expectTensor(unary("relu", x), t, {2, 2}, relu);
  }
}

TEST_F(InterpTest, UnaryEdgeCases) {
  HostTensor x = tensor(DType::F32, {3}, {kNaN, -kInf, kInf});
  expectTensor(unary("relu", x), DType::F32, {3}, {kNaN, 0, kInf});
  expectTensor(unary("abs", x), DType::F32, {3}, {kNaN, kInf, kInf});
  // Integer negation wraps like the GPU's: -INT32_MIN is INT32_MIN.
  HostTensor i = tensor(DType::I32, {1}, {-2147483648.0});
  expectTensor(unary("neg", i), DType::I32, {1}, {-2147483648.0});
  expectTensor(unary("abs", i), DType::I32, {1}, {-2147483648.0});
}

struct FloatUnaryCase {
  const char *op;
  const char *attrs;
  Values in, out;
};

TEST_F(InterpTest, FloatUnaryOpsOnEveryFloatDtype) {
  const FloatUnaryCase cases[] = {
      {"exp", "", {0, 1, -1, kNaN}, {1, 2.718281828459045, 0.36787944117144233, kNaN}},
      {"log", "", {1, 0.5, 4, 0, -1}, {0, -0.6931471805599453, 1.3862943611198906, -kInf, kNaN}},
      {"sqrt", "", {4, 2, 0, -1}, {2, 1.4142135623730951, 0, kNaN}},
      {"rsqrt", "", {4, 0.25, 0}, {0.5, 2, kInf}},
      {"reciprocal", "", {2, -0.5, 0}, {0.5, -2, kInf}},
      {"tanh", "", {0, 1, -0.5}, {0, 0.7615941559557649, -0.46211715726000974}},
      {"sigmoid", "", {0, 2, -2}, {0.5, 0.8807970779778823, 0.11920292202211755}},
      {"silu", "", {0, 2, -2}, {0, 1.7615941559557646, -0.2384058440442351}},
      {"sin", "", {0, 1, -0.5}, {0, 0.8414709848078965, -0.479425538604203}},
      {"cos", "", {0, 1, 2}, {1, 0.5403023058681398, -0.4161468365471424}},
      {"erf", "", {0, 1, -0.5}, {0, 0.8427007929497149, -0.5204998778130465}},
      // 0.5 x (1 + erf(x / sqrt 2)): x = 1 gives 0.5 (1 + 0.6826894921) etc.
      {"gelu", "", {1, -1, 0, 2},
       {0.8413447460685429, -0.15865525393145707, 0, 1.9544997361036416}},
      {"gelu", "approximate = \"none\"", {1}, {0.8413447460685429}},
      {"gelu", "approximate = \"tanh\"", {1, -1, 0, 2},
       {0.8411919906082768, -0.15880800939172324, 0, 1.954597694087775}},
  };
  for (DType t : kFloats) {
    for (const FloatUnaryCase &c : cases) {
      SCOPED_TRACE(std::string(c.op) + " " + c.attrs + " on " + std::string(dtypeName(t)));
      int64_t n = static_cast<int64_t>(c.in.size());
      expectTensor(unary(c.op, tensor(t, {n}, c.in), c.attrs), t, {n}, c.out, tolFor(t));
    }
  }
}

TEST_F(InterpTest, SixteenBitResultsRoundOnce) {
  // e rounds to 2.71875 in both bf16 (1 + 46/128) and f16 (1 + 368/1024).
  expectTensor(unary("exp", tensor(DType::BF16, {1}, {1})), DType::BF16, {1}, {2.71875});
  expectTensor(unary("exp", tensor(DType::F16, {1}, {1})), DType::F16, {1}, {2.71875});
  // sqrt(2) = 1.41421...: bf16 1 + 53/128 = 1.4140625, f16 1 + 424/1024 = 1.4140625.
  expectTensor(unary("sqrt", tensor(DType::BF16, {1}, {2})), DType::BF16, {1}, {1.4140625});
  expectTensor(unary("sqrt", tensor(DType::F16, {1}, {2})), DType::F16, {1}, {1.4140625});
}

TEST_F(InterpTest, Fp64ModeComputesInDouble) {
  // sigmoid(-100) = 1 / (1 + e^100) = e^-100 = 3.72e-44 = 26.55 * 2^-149, a
  // float subnormal. In fp32, e^100 overflows to Inf and the result is 0; in
  // fp64 it survives and rounds once to 27 * 2^-149.
  HostTensor x = tensor(DType::F32, {2}, {-100, 0});
  InterpOptions fp64;
  fp64.fp64 = true;
  expectTensor(unary("sigmoid", x), DType::F32, {2}, {0, 0.5});
  expectTensor(unary("sigmoid", x, "", fp64), DType::F32, {2}, {27 * 0x1p-149, 0.5});
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

struct CastCase {
  DType from, to;
  Values in, out;
};

TEST_F(InterpTest, CastFollowsTheConversionRules) {
  const double i64Min = -9223372036854775808.0;
  const CastCase cases[] = {
      // 0.1 -> 0x3DCD; 1 + 2^-8 ties to 1; 1 + 3 * 2^-8 ties to 1 + 2^-6.
      {DType::F32, DType::BF16, {0.1, 1.00390625, 1.01171875}, {0.10009765625, 1, 1.015625}},
      {DType::F32, DType::F16, {0.1, 65520, -1e-8}, {0.0999755859375, kInf, 0}},
      {DType::F32, DType::I32, {2.7, -2.7, 3e9, kNaN, -kInf}, {2, -2, 2147483647, 0, -2147483648.0}},
      {DType::F32, DType::I64, {-1e19, 1e19, -0.9}, {i64Min, -i64Min, 0}},
      {DType::F32, DType::Bool, {0, -0.0, 0.5, kNaN}, {0, 0, 1, 1}},
      {DType::F16, DType::F32, {1.0 / 3}, {0.333251953125}},
      {DType::BF16, DType::F16, {3.140625}, {3.140625}},
      {DType::BF16, DType::I32, {-3.5, 300}, {-3, 300}},
      {DType::I32, DType::F16, {2049, 70000, -7}, {2048, kInf, -7}},
      {DType::I32, DType::Bool, {0, -5}, {0, 1}},
      {DType::I32, DType::I64, {-2147483648.0, 5}, {-2147483648.0, 5}},
      {DType::I64, DType::I32, {4294967303.0, -1, 2147483648.0}, {7, -1, -2147483648.0}},
      {DType::I64, DType::BF16, {257, -1000}, {256, -1000}},
      {DType::Bool, DType::F32, {1, 0}, {1, 0}},
      {DType::Bool, DType::I64, {1, 0}, {1, 0}},
      {DType::F32, DType::F32, {0.25, -1}, {0.25, -1}},
  };
  for (const CastCase &c : cases) {
    SCOPED_TRACE(std::string(dtypeName(c.from)) + " -> " + std::string(dtypeName(c.to)));
    int64_t n = static_cast<int64_t>(c.in.size());
    expectTensor(unary("cast", tensor(c.from, {n}, c.in), c.to, {n}), c.to, {n}, c.out);
  }
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

TEST_F(InterpTest, AddBroadcastsARow) {
  for (DType t : kNumeric) {
    SCOPED_TRACE(dtypeName(t));
    HostTensor a = tensor(t, {2, 3}, {1, 2, 3, 4, 5, 6});
    HostTensor b = tensor(t, {3}, {10, 20, 30});
    expectTensor(binary("add", a, b, t, {2, 3}), t, {2, 3}, {11, 22, 33, 14, 25, 36});
  }
}

TEST_F(InterpTest, SubBroadcastsBothSides) {
  for (DType t : kNumeric) {
    SCOPED_TRACE(dtypeName(t));
    HostTensor a = tensor(t, {2, 1}, {1, 2});
    HostTensor b = tensor(t, {1, 3}, {10, 20, 30});
    expectTensor(binary("sub", a, b, t, {2, 3}), t, {2, 3}, {-9, -19, -29, -8, -18, -28});
  }
}

TEST_F(InterpTest, MulWithAScalarAndRounding) {
  for (DType t : kNumeric) {
    SCOPED_TRACE(dtypeName(t));
    HostTensor a = tensor(t, {2, 2}, {1, -2, 3, 4});
    HostTensor s = tensor(t, {}, {3});
    expectTensor(binary("mul", s, a, t, {2, 2}), t, {2, 2}, {3, -6, 9, 12});
  }
  // 3 * bf16(1/3) = 3 * 0.333984375 = 1.001953125 = 1 + 2^-9, below bf16's
  // half-ulp at 1 (2^-8): rounds to 1.
  HostTensor third = tensor(DType::BF16, {1}, {1.0 / 3});
  HostTensor three = tensor(DType::BF16, {1}, {3});
  expectTensor(binary("mul", third, three, DType::BF16, {1}), DType::BF16, {1}, {1});
}

TEST_F(InterpTest, DivFloatAndInteger) {
  HostTensor a = tensor(DType::F32, {4}, {1, -1, 0, 7});
  HostTensor b = tensor(DType::F32, {4}, {0, 0, 0, 2});
  expectTensor(binary("div", a, b, DType::F32, {4}), DType::F32, {4}, {kInf, -kInf, kNaN, 3.5});
  for (DType t : {DType::I32, DType::I64}) {
    SCOPED_TRACE(dtypeName(t));
    // Truncation toward zero; x / 0 = 0.
    HostTensor x = tensor(t, {6}, {7, -7, 7, -7, 5, 0});
    HostTensor y = tensor(t, {6}, {2, 2, -2, -2, 0, 0});
    expectTensor(binary("div", x, y, t, {6}), t, {6}, {3, -3, -3, 3, 0, 0});
  }
  // The one overflowing quotient wraps.
  HostTensor m = tensor(DType::I32, {1}, {-2147483648.0});
  HostTensor n = tensor(DType::I32, {1}, {-1});
  expectTensor(binary("div", m, n, DType::I32, {1}), DType::I32, {1}, {-2147483648.0});
  HostTensor m64(DType::I64, {1}), n64 = tensor(DType::I64, {1}, {-1});
  m64.setInt(0, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(binary("div", m64, n64, DType::I64, {1}).getInt(0),
            std::numeric_limits<int64_t>::min());
}

TEST_F(InterpTest, IntegerAddWraps) {
  HostTensor a = tensor(DType::I32, {2}, {2147483647, -2147483648.0});
  HostTensor b = tensor(DType::I32, {2}, {1, -1});
  expectTensor(binary("add", a, b, DType::I32, {2}), DType::I32, {2},
               {-2147483648.0, 2147483647});
  HostTensor c(DType::I64, {1}), one = tensor(DType::I64, {1}, {1});
  c.setInt(0, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(binary("add", c, one, DType::I64, {1}).getInt(0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(binary("mul", c, c, DType::I64, {1}).getInt(0), 1); // (2^63 - 1)^2 mod 2^64
}

TEST_F(InterpTest, Pow) {
  for (DType t : kFloats) {
    SCOPED_TRACE(dtypeName(t));
    HostTensor a = tensor(t, {4}, {2, 9, 2, -8});
    HostTensor b = tensor(t, {4}, {3, 0.5, -1, 0.5});
    expectTensor(binary("pow", a, b, t, {4}), t, {4}, {8, 3, 0.5, kNaN}, tolFor(t));
  }
}

TEST_F(InterpTest, MaximumMinimumPropagateNaN) {
  for (DType t : kFloats) {
    SCOPED_TRACE(dtypeName(t));
    HostTensor a = tensor(t, {4}, {1, kNaN, -1, -kInf});
    HostTensor b = tensor(t, {4}, {2, 0, kNaN, 5});
    expectTensor(binary("maximum", a, b, t, {4}), t, {4}, {2, kNaN, kNaN, 5});
    expectTensor(binary("minimum", a, b, t, {4}), t, {4}, {1, kNaN, kNaN, -kInf});
  }
  for (DType t : {DType::I32, DType::I64}) {
    SCOPED_TRACE(dtypeName(t));
    HostTensor a = tensor(t, {2, 2}, {1, -5, 7, 0});
    HostTensor b = tensor(t, {2}, {3, -6});
    expectTensor(binary("maximum", a, b, t, {2, 2}), t, {2, 2}, {3, -5, 7, 0});
    expectTensor(binary("minimum", a, b, t, {2, 2}), t, {2, 2}, {1, -6, 3, -6});
  }
}

//===----------------------------------------------------------------------===//
// Comparisons and where
//===----------------------------------------------------------------------===//

TEST_F(InterpTest, ComparisonsOnFloatsWithNaN) {
  for (DType t : kFloats) {
    SCOPED_TRACE(dtypeName(t));
    HostTensor a = tensor(t, {4}, {1, 2, kNaN, 3});
    HostTensor b = tensor(t, {4}, {1, 3, kNaN, 2});
    expectTensor(binary("eq", a, b, DType::Bool, {4}), DType::Bool, {4}, {1, 0, 0, 0});
    expectTensor(binary("ne", a, b, DType::Bool, {4}), DType::Bool, {4}, {0, 1, 1, 1});
    expectTensor(binary("lt", a, b, DType::Bool, {4}), DType::Bool, {4}, {0, 1, 0, 0});
    expectTensor(binary("le", a, b, DType::Bool, {4}), DType::Bool, {4}, {1, 1, 0, 0});
    expectTensor(binary("gt", a, b, DType::Bool, {4}), DType::Bool, {4}, {0, 0, 0, 1});
    expectTensor(binary("ge", a, b, DType::Bool, {4}), DType::Bool, {4}, {1, 0, 0, 1});
  }
}

TEST_F(InterpTest, ComparisonsOnIntegersAndBoolBroadcast) {
  for (DType t : {DType::I32, DType::I64}) {
    SCOPED_TRACE(dtypeName(t));
    HostTensor a = tensor(t, {2, 1}, {1, 5});
    HostTensor b = tensor(t, {3}, {0, 1, 9});
    expectTensor(binary("lt", a, b, DType::Bool, {2, 3}), DType::Bool, {2, 3},
                 {0, 0, 1, 0, 0, 1});
    expectTensor(binary("ge", a, b, DType::Bool, {2, 3}), DType::Bool, {2, 3},
                 {1, 1, 0, 1, 1, 0});
  }
  HostTensor p = tensor(DType::Bool, {2}, {1, 0}), q = tensor(DType::Bool, {2, 2}, {1, 1, 0, 0});
  expectTensor(binary("eq", p, q, DType::Bool, {2, 2}), DType::Bool, {2, 2}, {1, 0, 0, 1});
  expectTensor(binary("gt", p, q, DType::Bool, {2, 2}), DType::Bool, {2, 2}, {0, 0, 1, 0});
  // i64 values that differ only past 2^53 compare as integers.
  HostTensor big(DType::I64, {1}), bigger(DType::I64, {1});
  big.setInt(0, (int64_t(1) << 53));
  bigger.setInt(0, (int64_t(1) << 53) + 1);
  expectTensor(binary("eq", big, bigger, DType::Bool, {1}), DType::Bool, {1}, {0});
  expectTensor(binary("lt", big, bigger, DType::Bool, {1}), DType::Bool, {1}, {1});
}

TEST_F(InterpTest, WhereBroadcastsAllThree) {
  HostTensor cond = tensor(DType::Bool, {2, 1}, {1, 0});
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dtypeName(t));
    HostTensor a = tensor(t, {2, 3}, {1, 0, 1, 0, 1, 1});
    HostTensor b = tensor(t, {}, {0});
    expectTensor(nary("where", {cond, a, b}, t, {2, 3}), t, {2, 3}, {1, 0, 1, 0, 0, 0});
  }
  HostTensor c3 = tensor(DType::Bool, {3}, {0, 1, 0});
  HostTensor x = tensor(DType::F32, {3}, {kNaN, kNaN, 2.5});
  HostTensor y = tensor(DType::F32, {1}, {-kInf});
  expectTensor(nary("where", {c3, x, y}, DType::F32, {3}), DType::F32, {3}, {-kInf, kNaN, -kInf});
  HostTensor big(DType::I64, {1});
  big.setInt(0, (int64_t(1) << 60) + 1);
  HostTensor one = tensor(DType::Bool, {1}, {1});
  EXPECT_EQ(nary("where", {one, big, big}, DType::I64, {1}).getInt(0), (int64_t(1) << 60) + 1);
}

//===----------------------------------------------------------------------===//
// Constant and iota
//===----------------------------------------------------------------------===//

TEST_F(InterpTest, ConstantConvertsItsValueLikeCast) {
  expectTensor(nullary("constant", "value = 1.5 : f64", DType::F32, {2, 2}), DType::F32, {2, 2},
               {1.5, 1.5, 1.5, 1.5});
  expectTensor(nullary("constant", "value = 0.1 : f64", DType::BF16, {3}), DType::BF16, {3},
               {0.10009765625, 0.10009765625, 0.10009765625});
  expectTensor(nullary("constant", "value = 2.7 : f64", DType::I32, {2}), DType::I32, {2}, {2, 2});
  expectTensor(nullary("constant", "value = -3.9 : f64", DType::I64, {}), DType::I64, {}, {-3});
  expectTensor(nullary("constant", "value = 0.0 : f64", DType::Bool, {2}), DType::Bool, {2},
               {0, 0});
  expectTensor(nullary("constant", "value = 3.0 : f64", DType::Bool, {1}), DType::Bool, {1}, {1});
  expectTensor(nullary("constant", "value = 0xFFF0000000000000 : f64", DType::F16, {2}),
               DType::F16, {2}, {-kInf, -kInf});
  expectTensor(nullary("constant", "value = 1.0 : f64", DType::F32, {0}), DType::F32, {0}, {});
}

TEST_F(InterpTest, IotaCountsAlongOneDim) {
  expectTensor(nullary("iota", "dim = 0 : i64", DType::I32, {2, 3}), DType::I32, {2, 3},
               {0, 0, 0, 1, 1, 1});
  expectTensor(nullary("iota", "dim = 1 : i64", DType::I32, {2, 3}), DType::I32, {2, 3},
               {0, 1, 2, 0, 1, 2});
  expectTensor(nullary("iota", "dim = 1 : i64", DType::I64, {2, 2, 2}), DType::I64, {2, 2, 2},
               {0, 0, 1, 1, 0, 0, 1, 1});
  expectTensor(nullary("iota", "dim = 0 : i64", DType::BF16, {3}), DType::BF16, {3}, {0, 1, 2});
  expectTensor(nullary("iota", "dim = 0 : i64", DType::F32, {4, 1}), DType::F32, {4, 1},
               {0, 1, 2, 3});
}

} // namespace

namespace {

/// A function of `outputs` results, each x + c of one input of n elements.
std::string manyOutputs(int64_t n, int outputs) {
  std::string t = "tensor<" + std::to_string(n) + "xf32>";
  std::string s = "func.func @f(%x: " + t + ") -> (";
  for (int i = 0; i < outputs; ++i)
    s += (i ? ", " : "") + t;
  s += ") {\n";
  for (int i = 0; i < outputs; ++i)
    s += "  %" + std::to_string(i) + " = fusec.exp %x : (" + t + ") -> " + t + "\n";
  s += "  return";
  for (int i = 0; i < outputs; ++i)
    s += std::string(i ? "," : "") + " %" + std::to_string(i);
  s += " : ";
  for (int i = 0; i < outputs; ++i)
    s += (i ? ", " : "") + t;
  return s + "\n}\n";
}

} // namespace

// Every value fits in half the machine's memory, but not all of them at once:
// refused before anything is allocated, the point of the peak named. One
// output fits.
TEST_F(InterpTest, WholeGraphMemoryIsCheckedBeforeEvaluation) {
  const double machine = hostMemoryBytes();
  if (machine <= 0)
    GTEST_SKIP() << "this machine's memory is unknown";
  const int64_t n = static_cast<int64_t>(machine / 2 / 8 * 0.3);  // 30% of the limit each
  mlir::OwningOpRef<mlir::ModuleOp> big = parse(manyOutputs(n, 4));
  ASSERT_TRUE(big);
  auto f = *big->getOps<mlir::func::FuncOp>().begin();
  llvm::Error err = checkInterpreterFits(f);
  ASSERT_TRUE(bool(err));
  std::string msg = llvm::toString(std::move(err));
  EXPECT_NE(msg.find("at once (its inputs and, at the outputs, the values still to be read)"),
            std::string::npos)
      << msg;
  // One output: the input, the result and its copy at the return, 90%.
  mlir::OwningOpRef<mlir::ModuleOp> small = parse(manyOutputs(n, 1));
  ASSERT_TRUE(small);
  llvm::Error fits = checkInterpreterFits(*small->getOps<mlir::func::FuncOp>().begin());
  EXPECT_FALSE(bool(fits));
  llvm::consumeError(std::move(fits));
}
