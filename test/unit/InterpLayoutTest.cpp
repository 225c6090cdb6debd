//===- InterpLayoutTest.cpp - reductions, layout ops, matmul, the driver --===//
#include "InterpTestUtil.h"

#include <cmath>
#include <limits>

using namespace fusec;
using namespace fusec::testing;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

/// "axes = array<i64: 0, 1>, keepdims = true"
std::string axes(const std::string &list, bool keepdims = false) {
  return "axes = array<i64" + (list.empty() ? "" : ": " + list) + ">" +
         (keepdims ? ", keepdims = true" : "");
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

TEST_F(InterpTest, ReductionsOverEachAxis) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64}) {
    SCOPED_TRACE(dtypeName(t));
    HostTensor x = tensor(t, {2, 3}, {1, 2, 3, 4, 5, 6});
    expectTensor(unary("sum", x, t, {2}, axes("1")), t, {2}, {6, 15});
    expectTensor(unary("sum", x, t, {2, 1}, axes("1", true)), t, {2, 1}, {6, 15});
    expectTensor(unary("sum", x, t, {3}, axes("0")), t, {3}, {5, 7, 9});
    expectTensor(unary("sum", x, t, {}, axes("0, 1")), t, {}, {21});
    expectTensor(unary("sum", x, t, {1, 1}, axes("0, 1", true)), t, {1, 1}, {21});
    expectTensor(unary("max", x, t, {3}, axes("0")), t, {3}, {4, 5, 6});
    expectTensor(unary("min", x, t, {2}, axes("1")), t, {2}, {1, 4});
    expectTensor(unary("max", x, t, {}, axes("0, 1")), t, {}, {6});
    // No axes: nothing is reduced.
    expectTensor(unary("sum", x, t, {2, 3}, axes("")), t, {2, 3}, {1, 2, 3, 4, 5, 6});
    if (isFloat(t)) {
      expectTensor(unary("mean", x, t, {2}, axes("1")), t, {2}, {2, 5});
      expectTensor(unary("mean", x, t, {1, 1}, axes("0, 1", true)), t, {1, 1}, {3.5});
    }
  }
}

TEST_F(InterpTest, ReductionsOverInnerAndOuterAxesOfRank3) {
  Values iota12;
  for (int i = 0; i < 12; ++i)
    iota12.push_back(i);
  HostTensor x = tensor(DType::F32, {2, 3, 2}, iota12);
  // x[i][j][k] = 6i + 2j + k.
  expectTensor(unary("sum", x, DType::F32, {2, 2}, axes("1")), DType::F32, {2, 2},
               {6, 9, 24, 27});
  expectTensor(unary("sum", x, DType::F32, {1, 3, 1}, axes("0, 2", true)), DType::F32,
               {1, 3, 1}, {14, 22, 30});
  expectTensor(unary("min", x, DType::F32, {3}, axes("0, 2")), DType::F32, {3}, {0, 2, 4});
}

TEST_F(InterpTest, ReductionsAccumulateWideAndRoundOnce) {
  // 256 + 1 + 1 + 1 = 259, a tie between the bf16 values 258 and 260 (even).
  // Accumulating in bf16 would give 256 (each 256 + 1 ties back to 256).
  HostTensor x = tensor(DType::BF16, {4}, {256, 1, 1, 1});
  expectTensor(unary("sum", x, DType::BF16, {}, axes("0")), DType::BF16, {}, {260});
  // 259 / 4 = 64.75, a tie between the bf16 values 64.5 and 65 (even).
  expectTensor(unary("mean", x, DType::BF16, {}, axes("0")), DType::BF16, {}, {65});
  // Integer sums wrap only when stored.
  HostTensor i = tensor(DType::I32, {3}, {2147483647, 1, -1});
  expectTensor(unary("sum", i, DType::I32, {}, axes("0")), DType::I32, {}, {2147483647});
  HostTensor j = tensor(DType::I32, {2}, {2147483647, 1});
  expectTensor(unary("sum", j, DType::I32, {}, axes("0")), DType::I32, {}, {-2147483648.0});
}

TEST_F(InterpTest, ReductionsPropagateNaN) {
  HostTensor x = tensor(DType::F32, {2, 3}, {1, kNaN, 3, 4, 5, -kInf});
  expectTensor(unary("sum", x, DType::F32, {2}, axes("1")), DType::F32, {2}, {kNaN, -kInf});
  expectTensor(unary("max", x, DType::F32, {2}, axes("1")), DType::F32, {2}, {kNaN, 5});
  expectTensor(unary("min", x, DType::F32, {2}, axes("1")), DType::F32, {2}, {kNaN, -kInf});
  expectTensor(unary("mean", x, DType::F32, {3}, axes("0")), DType::F32, {3}, {2.5, kNaN, -kInf});
}

TEST_F(InterpTest, EmptyReductionsGiveTheIdentity) {
  HostTensor x(DType::F32, {2, 0});
  expectTensor(unary("sum", x, DType::F32, {2}, axes("1")), DType::F32, {2}, {0, 0});
  expectTensor(unary("mean", x, DType::F32, {2}, axes("1")), DType::F32, {2}, {kNaN, kNaN});
  expectTensor(unary("max", x, DType::F32, {2}, axes("1")), DType::F32, {2}, {-kInf, -kInf});
  expectTensor(unary("min", x, DType::F32, {2}, axes("1")), DType::F32, {2}, {kInf, kInf});
  HostTensor i(DType::I32, {0, 2});
  expectTensor(unary("max", i, DType::I32, {2}, axes("0")), DType::I32, {2},
               {-2147483648.0, -2147483648.0});
  expectTensor(unary("min", i, DType::I32, {2}, axes("0")), DType::I32, {2},
               {2147483647, 2147483647});
  HostTensor l(DType::I64, {0});
  EXPECT_EQ(unary("min", l, DType::I64, {}, axes("0")).getInt(0),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(unary("sum", l, DType::I64, {}, axes("0")).getInt(0), 0);
}

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

TEST_F(InterpTest, Reshape) {
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dtypeName(t));
    HostTensor x = tensor(t, {2, 3}, {1, 0, 1, 1, 0, 0});
    expectTensor(unary("reshape", x, t, {3, 2}), t, {3, 2}, {1, 0, 1, 1, 0, 0});
    expectTensor(unary("reshape", x, t, {6, 1, 1}), t, {6, 1, 1}, {1, 0, 1, 1, 0, 0});
  }
}

TEST_F(InterpTest, TransposeSwapsAndPermutes) {
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dtypeName(t));
    HostTensor x = tensor(t, {2, 3}, {1, 0, 0, 1, 1, 0});
    expectTensor(unary("transpose", x, t, {3, 2}, "perm = array<i64: 1, 0>"), t, {3, 2},
                 {1, 1, 0, 1, 0, 0});
  }
  Values v;
  for (int i = 0; i < 24; ++i)
    v.push_back(i);
  // x[i][j][k] = 12i + 4j + k; y = transpose(x, [2, 0, 1]): y[k][i][j] = x[i][j][k].
  HostTensor x = tensor(DType::I32, {2, 3, 4}, v);
  HostTensor y = unary("transpose", x, DType::I32, {4, 2, 3}, "perm = array<i64: 2, 0, 1>");
  expectTensor(y, DType::I32, {4, 2, 3},
               {0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21,
                2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23});
  // Batched swap of the last two dims: z[b][k][j] = x[b][j][k].
  HostTensor z = unary("transpose", x, DType::I32, {2, 4, 3}, "perm = array<i64: 0, 2, 1>");
  expectTensor(z, DType::I32, {2, 4, 3},
               {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11,
                12, 16, 20, 13, 17, 21, 14, 18, 22, 15, 19, 23});
}

TEST_F(InterpTest, TransposeOfALargeMatrixCrossesTiles) {
  const int64_t rows = 70, cols = 131;
  HostTensor x(DType::I32, {rows, cols});
  for (int64_t i = 0; i < x.numel(); ++i)
    x.setInt(i, i);
  HostTensor y = unary("transpose", x, DType::I32, {cols, rows}, "perm = array<i64: 1, 0>");
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{cols, rows}));
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r)
      ASSERT_EQ(y.getInt(c * rows + r), r * cols + c) << "at " << c << ", " << r;
}

TEST_F(InterpTest, BroadcastTo) {
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dtypeName(t));
    expectTensor(unary("broadcast_to", tensor(t, {3}, {1, 0, 1}), t, {2, 3}), t, {2, 3},
                 {1, 0, 1, 1, 0, 1});
    expectTensor(unary("broadcast_to", tensor(t, {2, 1}, {0, 1}), t, {2, 3}), t, {2, 3},
                 {0, 0, 0, 1, 1, 1});
    expectTensor(unary("broadcast_to", tensor(t, {}, {1}), t, {2, 2}), t, {2, 2}, {1, 1, 1, 1});
  }
}

TEST_F(InterpTest, SliceWithSteps) {
  Values v;
  for (int i = 0; i < 20; ++i)
    v.push_back(i);
  HostTensor x = tensor(DType::F32, {4, 5}, v);
  // Rows 1 and 3, columns 0, 2 and 4.
  expectTensor(unary("slice", x, DType::F32, {2, 3},
                     "starts = array<i64: 1, 0>, limits = array<i64: 4, 5>, "
                     "steps = array<i64: 2, 2>"),
               DType::F32, {2, 3}, {5, 7, 9, 15, 17, 19});
  // Column window [1, 3) of every row.
  expectTensor(unary("slice", x, DType::F32, {4, 2},
                     "starts = array<i64: 0, 1>, limits = array<i64: 4, 3>, "
                     "steps = array<i64: 1, 1>"),
               DType::F32, {4, 2}, {1, 2, 6, 7, 11, 12, 16, 17});
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dtypeName(t));
    HostTensor y = tensor(t, {7}, {1, 0, 0, 1, 1, 0, 1});
    expectTensor(unary("slice", y, t, {3},
                       "starts = array<i64: 1>, limits = array<i64: 7>, steps = array<i64: 2>"),
                 t, {3}, {0, 1, 0});
    expectTensor(unary("slice", y, t, {0},
                       "starts = array<i64: 4>, limits = array<i64: 4>, steps = array<i64: 1>"),
                 t, {0}, {});
  }
}

TEST_F(InterpTest, Concat) {
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dtypeName(t));
    HostTensor a = tensor(t, {1, 2}, {1, 0}), b = tensor(t, {2, 2}, {0, 1, 1, 1});
    expectTensor(nary("concat", {a, b}, t, {3, 2}, "axis = 0 : i64"), t, {3, 2},
                 {1, 0, 0, 1, 1, 1});
  }
  HostTensor a = tensor(DType::I64, {2, 1}, {1, 2});
  HostTensor b = tensor(DType::I64, {2, 2}, {3, 4, 5, 6});
  HostTensor e(DType::I64, {2, 0});
  HostTensor c = tensor(DType::I64, {2, 1}, {7, 8});
  expectTensor(nary("concat", {a, b, e, c}, DType::I64, {2, 4}, "axis = 1 : i64"), DType::I64,
               {2, 4}, {1, 3, 4, 7, 2, 5, 6, 8});
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

TEST_F(InterpTest, Matmul2DAnd1D) {
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    SCOPED_TRACE(dtypeName(t));
    HostTensor a = tensor(t, {2, 2}, {1, 2, 3, 4}), b = tensor(t, {2, 2}, {5, 6, 7, 8});
    expectTensor(binary("matmul", a, b, t, {2, 2}), t, {2, 2}, {19, 22, 43, 50});
    HostTensor row = tensor(t, {2}, {1, 2}), col = tensor(t, {2}, {5, 6});
    expectTensor(binary("matmul", row, b, t, {2}), t, {2}, {19, 22});
    expectTensor(binary("matmul", a, col, t, {2}), t, {2}, {17, 39});
    HostTensor u = tensor(t, {3}, {1, 2, 3}), v = tensor(t, {3}, {4, 5, 6});
    expectTensor(binary("matmul", u, v, t, {}), t, {}, {32});
  }
}

TEST_F(InterpTest, MatmulBatchedAndBroadcast) {
  HostTensor a = tensor(DType::F32, {2, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 2});
  HostTensor b = tensor(DType::F32, {2, 2, 2}, {1, 2, 3, 4, 1, 1, 1, 1});
  expectTensor(binary("matmul", a, b, DType::F32, {2, 2, 2}), DType::F32, {2, 2, 2},
               {1, 2, 3, 4, 2, 2, 2, 2});
  // Batch dims [2, 1] and [3] broadcast to [2, 3]: lhs batch i is the row
  // [i + 1, 1], rhs batch j the column [j, 10], so out[i][j] = (i + 1) j + 10.
  HostTensor p = tensor(DType::F32, {2, 1, 1, 2}, {1, 1, 2, 1});
  HostTensor q = tensor(DType::F32, {3, 2, 1}, {0, 10, 1, 10, 2, 10});
  expectTensor(binary("matmul", p, q, DType::F32, {2, 3, 1, 1}), DType::F32, {2, 3, 1, 1},
               {10, 11, 12, 10, 12, 14});
  // A 1-D lhs against a batch: [1, 1] @ [[k, 1], [2, k]] = [k + 2, k + 1].
  HostTensor ones = tensor(DType::F32, {2}, {1, 1});
  HostTensor batch = tensor(DType::F32, {3, 2, 2}, {0, 1, 2, 0, 1, 1, 2, 1, 2, 1, 2, 2});
  expectTensor(binary("matmul", ones, batch, DType::F32, {3, 2}), DType::F32, {3, 2},
               {2, 1, 3, 2, 4, 3});
}

TEST_F(InterpTest, MatmulRoundsOnceAndFp64Accumulates) {
  // 256 + 1 + 1 + 1 = 259 accumulates exactly in fp32 and rounds to bf16 260.
  HostTensor ones = tensor(DType::BF16, {1, 4}, {1, 1, 1, 1});
  HostTensor col = tensor(DType::BF16, {4, 1}, {256, 1, 1, 1});
  expectTensor(binary("matmul", ones, col, DType::BF16, {1, 1}), DType::BF16, {1, 1}, {260});
  // 2^24 + 1 - 2^24: fp32 accumulation loses the 1, fp64 keeps it.
  HostTensor a = tensor(DType::F32, {1, 3}, {16777216, 1, -16777216});
  HostTensor b = tensor(DType::F32, {3, 1}, {1, 1, 1});
  InterpOptions fp64;
  fp64.fp64 = true;
  expectTensor(binary("matmul", a, b, DType::F32, {1, 1}), DType::F32, {1, 1}, {0});
  expectTensor(binary("matmul", a, b, DType::F32, {1, 1}, "", fp64), DType::F32, {1, 1}, {1});
}

TEST_F(InterpTest, MatmulTilesMatchASequentialLoop) {
  // Sizes that leave partial tiles in every dimension (64 rows, 128 columns,
  // 256-deep blocks). The kernel adds the K products in order, so it must
  // equal a plain loop bit for bit, in both precisions.
  const int64_t m = 70, k = 300, n = 130;
  HostTensor a = randomTensor(DType::F32, {m, k}, 1), b = randomTensor(DType::F32, {k, n}, 2);
  for (bool useDouble : {false, true}) {
    SCOPED_TRACE(useDouble ? "fp64" : "fp32");
    InterpOptions opts;
    opts.fp64 = useDouble;
    HostTensor c = binary("matmul", a, b, DType::F32, {m, n}, "", opts);
    ASSERT_EQ(c.numel(), m * n);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        float accF = 0;
        double accD = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          accF += static_cast<float>(a.get(i * k + kk)) * static_cast<float>(b.get(kk * n + j));
          accD += a.get(i * k + kk) * b.get(kk * n + j);
        }
        double want = useDouble ? static_cast<double>(static_cast<float>(accD)) : accF;
        ASSERT_EQ(c.get(i * n + j), want) << "at " << i << ", " << j;
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// The driver
//===----------------------------------------------------------------------===//

TEST_F(InterpTest, ChainsOpsReusesValuesAndReturnsSeveral) {
  const char *text = R"mlir(
func.func @f(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0 = fusec.add %x, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = fusec.mul %0, %0 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = fusec.sub %1, %0 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %2, %x, %0 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
)mlir";
  std::vector<HostTensor> r =
      run(text, {tensor(DType::F32, {3}, {1, 2, 3}), tensor(DType::F32, {3}, {1, 0, -3})});
  ASSERT_EQ(r.size(), 3u);
  // s = x + y = [2, 2, 0]; s * s - s = [2, 2, 0].
  expectTensor(r[0], DType::F32, {3}, {2, 2, 0});
  expectTensor(r[1], DType::F32, {3}, {1, 2, 3});
  expectTensor(r[2], DType::F32, {3}, {2, 2, 0});
}

TEST_F(InterpTest, FusionBodiesEvaluateAsBlocks) {
  const char *text = R"mlir(
func.func @f(%x: tensor<2x2xf32>, %b: tensor<2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>) {
  %y:2 = fusec.fusion "pointwise" (%x, %b) : (tensor<2x2xf32>, tensor<2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>) {
  ^bb0(%a: tensor<2x2xf32>, %c: tensor<2xf32>):
    %h = fusec.add %a, %c : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
    %n = fusec.neg %c : (tensor<2xf32>) -> tensor<2xf32>
    fusec.yield %h, %n : tensor<2x2xf32>, tensor<2xf32>
  }
  %z = fusec.mul %y#0, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %y#0, %y#1, %z : tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>
}
)mlir";
  std::vector<HostTensor> r =
      run(text, {tensor(DType::F32, {2, 2}, {1, 2, 3, 4}), tensor(DType::F32, {2}, {10, 20})});
  ASSERT_EQ(r.size(), 3u);
  expectTensor(r[0], DType::F32, {2, 2}, {11, 22, 13, 24});
  expectTensor(r[1], DType::F32, {2}, {-10, -20});
  expectTensor(r[2], DType::F32, {2, 2}, {11, 44, 39, 96});
}

TEST_F(InterpTest, InterpretBlockBindsArguments) {
  mlir::OwningOpRef<mlir::ModuleOp> module = parse(R"mlir(
func.func @f(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = fusec.neg %x : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}
)mlir");
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<mlir::func::FuncOp>("f");
  std::vector<HostTensor> args{tensor(DType::I32, {2}, {4, -5})};
  llvm::Expected<std::vector<HostTensor>> r = interpretBlock(f.front(), args, {});
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
  ASSERT_EQ(r->size(), 1u);
  expectTensor((*r)[0], DType::I32, {2}, {-4, 5});
  llvm::Expected<std::vector<HostTensor>> bad = interpretBlock(f.front(), {}, {});
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()), "block has 1 arguments but 0 tensors were given");
}

TEST_F(InterpTest, ArgumentMismatchesNameTheArgument) {
  const char *text = R"mlir(
func.func @f(%x: tensor<2xf32>, %y: tensor<2x3xbf16>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
)mlir";
  HostTensor x(DType::F32, {2});
  EXPECT_EQ(runError(text, {x, HostTensor(DType::F16, {2, 3})}),
            "interpret @f: argument 1 has dtype f16 and shape [2, 3], expected bf16 and shape "
            "[2, 3]");
  EXPECT_EQ(runError(text, {x, HostTensor(DType::BF16, {3, 2})}),
            "interpret @f: argument 1 has dtype bf16 and shape [3, 2], expected bf16 and shape "
            "[2, 3]");
  EXPECT_EQ(runError(text, {x}), "interpret @f: expected 2 arguments, got 1");
  EXPECT_EQ(runError(text, {x, HostTensor(DType::BF16, {2, 3})}), "");
}

TEST_F(InterpTest, UnknownOpsAreReported) {
  const char *text = R"mlir(
func.func private @g(tensor<2xf32>) -> tensor<2xf32>
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @g(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
)mlir";
  std::string message = runError(text, {HostTensor(DType::F32, {2})});
  EXPECT_NE(message.find("func.call: the interpreter does not support this op"),
            std::string::npos)
      << message;
}

} // namespace
