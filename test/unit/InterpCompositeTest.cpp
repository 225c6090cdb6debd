//===- InterpCompositeTest.cpp - composites by hand and vs -fusec-decompose -===//
//
// Two kinds of checks: small composites against values worked out by hand,
// and every composite evaluated directly against its decomposition (after
// the decompose pipeline) on random inputs, for each float dtype and in
// fp64 mode. The second kind is how a change to DecomposeComposites.cpp or
// to the interpreter that alters semantics gets caught.
//
//===----------------------------------------------------------------------===//
#include "InterpTestUtil.h"

#include "compiler/dialect/FusecDialect.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Pass/PassManager.h"

#include <cmath>
#include <limits>
#include <regex>

using namespace fusec;
using namespace fusec::testing;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
const DType kFloats[] = {DType::F32, DType::F16, DType::BF16};

double tolFor(DType t) { return t == DType::F32 ? 1e-6 : t == DType::F16 ? 1e-3 : 8e-3; }

//===----------------------------------------------------------------------===//
// Hand-computed values
//===----------------------------------------------------------------------===//

TEST_F(InterpTest, SoftmaxAndLogSoftmax) {
  for (DType t : kFloats) {
    SCOPED_TRACE(dtypeName(t));
    HostTensor x = tensor(t, {3}, {1, 2, 3});
    // e^(x - 3) / (e^-2 + e^-1 + 1)
    expectTensor(unary("softmax", x, "axis = 0 : i64"), t, {3},
                 {0.09003057317038046, 0.24472847105479764, 0.6652409557748218}, tolFor(t));
    expectTensor(unary("log_softmax", x, "axis = 0 : i64"), t, {3},
                 {-2.40760596444438, -1.4076059644443804, -0.40760596444438046}, tolFor(t));
    // Along the outer axis: columns (1, 1), (2, 4), (3, 3).
    HostTensor y = tensor(t, {2, 3}, {1, 2, 3, 1, 4, 3});
    expectTensor(unary("softmax", y, "axis = 0 : i64"), t, {2, 3},
                 {0.5, 0.11920292202211755, 0.5, 0.5, 0.8807970779778823, 0.5}, tolFor(t));
  }
  HostTensor masked = tensor(DType::F32, {2, 2}, {0, -kInf, -kInf, -kInf});
  expectTensor(unary("softmax", masked, "axis = 1 : i64"), DType::F32, {2, 2},
               {1, 0, kNaN, kNaN});
}

TEST_F(InterpTest, LayerNorm) {
  // Row [1, 2, 3, 4]: mean 2.5, variance 1.25, so (x - 2.5) / sqrt(1.25 + 1e-5);
  // a constant row normalizes to 0.
  const Values plain = {-1.3416354199689269, -0.447211806656309, 0.447211806656309,
                        1.3416354199689269, 0, 0, 0, 0};
  const Values affine = {-1.3416354199689269, -0.894423613312618, 1.447211806656309,
                         1.3416354199689269, 0, 0, 1, 0};
  for (DType t : kFloats) {
    SCOPED_TRACE(dtypeName(t));
    std::string T = std::string(dtypeName(t));
    HostTensor x = tensor(t, {2, 4}, {1, 2, 3, 4, 2, 2, 2, 2});
    HostTensor w = tensor(t, {4}, {1, 2, 1, 1}), b = tensor(t, {4}, {0, 0, 1, 0});
    std::vector<HostTensor> r = run(
        "func.func @f(%x: tensor<2x4x" + T + ">, %w: tensor<4x" + T + ">, %b: tensor<4x" + T +
            ">) -> (tensor<2x4x" + T + ">, tensor<2x4x" + T + ">) {\n"
            "  %0 = fusec.layer_norm %x {axis = 1 : i64, eps = 1.0e-05 : f64} : (tensor<2x4x" +
            T + ">) -> tensor<2x4x" + T + ">\n"
            "  %1 = fusec.layer_norm %x weight(%w) bias(%b) {axis = 1 : i64, eps = 1.0e-05 : "
            "f64} : (tensor<2x4x" + T + ">, tensor<4x" + T + ">, tensor<4x" + T +
            ">) -> tensor<2x4x" + T + ">\n"
            "  return %0, %1 : tensor<2x4x" + T + ">, tensor<2x4x" + T + ">\n}\n",
        {x, w, b});
    ASSERT_EQ(r.size(), 2u);
    expectTensor(r[0], t, {2, 4}, plain, tolFor(t));
    expectTensor(r[1], t, {2, 4}, affine, tolFor(t));
  }
  // Normalizing over the last two dims of [2, 2, 2] is the same computation.
  HostTensor x3 = tensor(DType::F32, {2, 2, 2}, {1, 2, 3, 4, 2, 2, 2, 2});
  expectTensor(unary("layer_norm", x3, "axis = 1 : i64, eps = 1.0e-05 : f64"), DType::F32,
               {2, 2, 2}, plain, 1e-6);
}

TEST_F(InterpTest, RmsNorm) {
  for (DType t : kFloats) {
    SCOPED_TRACE(dtypeName(t));
    // Row [3, 4]: mean square 12.5, so x / sqrt(12.5 + 1e-6).
    HostTensor x = tensor(t, {2, 2}, {3, 4, 0, 0});
    HostTensor w = tensor(t, {2}, {2, 0.5});
    expectTensor(unary("rms_norm", x, "eps = 1.0e-06 : f64"), t, {2, 2},
                 {0.8485281034827337, 1.1313708046436448, 0, 0}, tolFor(t));
    std::string T = std::string(dtypeName(t));
    std::vector<HostTensor> r = run(
        "func.func @f(%x: tensor<2x2x" + T + ">, %w: tensor<2x" + T + ">) -> tensor<2x2x" + T +
            "> {\n  %0 = fusec.rms_norm %x weight(%w) {eps = 1.0e-06 : f64} : (tensor<2x2x" +
            T + ">, tensor<2x" + T + ">) -> tensor<2x2x" + T + ">\n  return %0 : tensor<2x2x" +
            T + ">\n}\n",
        {x, w});
    ASSERT_EQ(r.size(), 1u);
    expectTensor(r[0], t, {2, 2}, {1.6970562069654673, 0.5656854023218224, 0, 0}, tolFor(t));
  }
}

TEST_F(InterpTest, Linear) {
  for (DType t : kFloats) {
    SCOPED_TRACE(dtypeName(t));
    std::string T = std::string(dtypeName(t));
    HostTensor x = tensor(t, {1, 2, 3}, {1, 2, 3, 4, 5, 6});
    HostTensor w = tensor(t, {2, 3}, {1, 0, -1, 0.5, 0.5, 0.5});
    HostTensor b = tensor(t, {2}, {10, 20});
    // x @ w^T = [[1 - 3, 3], [4 - 6, 7.5]].
    std::vector<HostTensor> r = run(
        "func.func @f(%x: tensor<1x2x3x" + T + ">, %w: tensor<2x3x" + T + ">, %b: tensor<2x" +
            T + ">) -> (tensor<1x2x2x" + T + ">, tensor<1x2x2x" + T + ">) {\n"
            "  %0 = fusec.linear %x, %w : (tensor<1x2x3x" + T + ">, tensor<2x3x" + T +
            ">) -> tensor<1x2x2x" + T + ">\n"
            "  %1 = fusec.linear %x, %w bias(%b) : (tensor<1x2x3x" + T + ">, tensor<2x3x" + T +
            ">, tensor<2x" + T + ">) -> tensor<1x2x2x" + T + ">\n"
            "  return %0, %1 : tensor<1x2x2x" + T + ">, tensor<1x2x2x" + T + ">\n}\n",
        {x, w, b});
    ASSERT_EQ(r.size(), 2u);
    expectTensor(r[0], t, {1, 2, 2}, {-2, 3, -2, 7.5});
    expectTensor(r[1], t, {1, 2, 2}, {8, 23, 8, 27.5});
  }
}

/// q = I (2 x 2), k = [[1, 0], [0, 1], [0, 0]], v = [1, 2, 3] as a column.
class AttentionTest : public InterpTest {
protected:
  std::string text(DType t, const std::string &extra, const std::string &attrs,
                   const std::string &maskType = "") {
    std::string T = std::string(dtypeName(t));
    std::string maskParam = maskType.empty() ? "" : ", %m: " + maskType;
    std::string maskUse = maskType.empty() ? "" : " mask(%m)";
    std::string maskTy = maskType.empty() ? "" : ", " + maskType;
    std::string q = "tensor<" + extra + "2x2x" + T + ">";
    std::string out = "tensor<" + extra + "2x1x" + T + ">";
    std::string kv = "tensor<1x3x2x" + T + ">, tensor<1x3x1x" + T + ">";
    return "func.func @f(%q: " + q + ", %k: tensor<1x3x2x" + T + ">, %v: tensor<1x3x1x" + T +
           ">" + maskParam + ") -> " + out + " {\n  %0 = fusec.scaled_dot_product_attention %q, "
           "%k, %v" + maskUse + " {" + attrs + "} : (" + q + ", " + kv + maskTy + ") -> " + out +
           "\n  return %0 : " + out + "\n}\n";
  }
  std::vector<HostTensor> inputs(DType t, int heads = 1) {
    Values q;
    for (int h = 0; h < heads; ++h)
      for (double v : {1, 0, 0, 1})
        q.push_back(v * (h + 1));
    return {tensor(t, {heads, 2, 2}, q), tensor(t, {1, 3, 2}, {1, 0, 0, 1, 0, 0}),
            tensor(t, {1, 3, 1}, {1, 2, 3})};
  }
};

TEST_F(AttentionTest, ScoresSoftmaxAndValues) {
  for (DType t : kFloats) {
    SCOPED_TRACE(dtypeName(t));
    // Scale 1: row 0 scores [1, 0, 0] give (e + 2 + 3) / (e + 2); row 1 scores
    // [0, 1, 0] give (1 + 2e + 3) / (e + 2) = 2.
    std::vector<HostTensor> r = run(text(t, "1x", "scale = 1.0 : f64"), inputs(t));
    ASSERT_EQ(r.size(), 1u);
    expectTensor(r[0], t, {1, 2, 1}, {1.6358246728512564, 2}, tolFor(t));
    // Default scale 1/sqrt(2).
    r = run(text(t, "1x", ""), inputs(t));
    ASSERT_EQ(r.size(), 1u);
    expectTensor(r[0], t, {1, 2, 1}, {1.7447652347731695, 2}, tolFor(t));
    // Causal: row 0 sees key 0 only; row 1 keys 0 and 1, (1 + 2e) / (1 + e).
    r = run(text(t, "1x", "causal = true, scale = 1.0 : f64"), inputs(t));
    ASSERT_EQ(r.size(), 1u);
    expectTensor(r[0], t, {1, 2, 1}, {1, 1.7310585786300048}, tolFor(t));
  }
}

TEST_F(AttentionTest, BoolAndFloatMasks) {
  for (DType t : kFloats) {
    SCOPED_TRACE(dtypeName(t));
    std::vector<HostTensor> args = inputs(t);
    args.push_back(tensor(DType::Bool, {2, 3}, {1, 0, 1, 0, 1, 1}));
    // Row 0 keeps keys 0 and 2 (scores 1, 0); row 1 keys 1 and 2 (scores 1, 0).
    std::vector<HostTensor> r = run(text(t, "1x", "scale = 1.0 : f64", "tensor<2x3xi1>"), args);
    ASSERT_EQ(r.size(), 1u);
    expectTensor(r[0], t, {1, 2, 1}, {1.5378828427399902, 2.2689414213699948}, tolFor(t));
    args[3] = tensor(t, {2, 3}, {0, 0, 1, 0, 0, -1});
    std::string maskType = "tensor<2x3x" + std::string(dtypeName(t)) + ">";
    // Additive: scores [1, 0, 1] and [0, 1, -1].
    r = run(text(t, "1x", "scale = 1.0 : f64", maskType), args);
    ASSERT_EQ(r.size(), 1u);
    expectTensor(r[0], t, {1, 2, 1}, {2, 1.8453021021155827}, tolFor(t));
  }
}

TEST_F(AttentionTest, BatchDimsBroadcast) {
  // Two query heads share one key/value head; head 1's queries are doubled.
  std::vector<HostTensor> r = run(text(DType::F32, "2x", ""), inputs(DType::F32, 2));
  ASSERT_EQ(r.size(), 1u);
  expectTensor(r[0], DType::F32, {2, 2, 1}, {1.7447652347731695, 2, 1.4907373024360346, 2}, 1e-6);
}

//===----------------------------------------------------------------------===//
// Direct evaluation vs the decomposition
//===----------------------------------------------------------------------===//

/// A function over element type ELT; every argument gets random values.
struct DecomposeCase {
  const char *name;
  const char *text;
};

const DecomposeCase kDecomposeCases[] = {
    {"softmax", R"(
func.func @f(%x: tensor<4x33xELT>, %y: tensor<3x5x7xELT>) -> (tensor<4x33xELT>, tensor<3x5x7xELT>) {
  %0 = fusec.softmax %x {axis = 1 : i64} : (tensor<4x33xELT>) -> tensor<4x33xELT>
  %1 = fusec.softmax %y {axis = 1 : i64} : (tensor<3x5x7xELT>) -> tensor<3x5x7xELT>
  return %0, %1 : tensor<4x33xELT>, tensor<3x5x7xELT>
})"},
    {"log_softmax", R"(
func.func @f(%x: tensor<4x33xELT>, %y: tensor<3x5x7xELT>) -> (tensor<4x33xELT>, tensor<3x5x7xELT>) {
  %0 = fusec.log_softmax %x {axis = 0 : i64} : (tensor<4x33xELT>) -> tensor<4x33xELT>
  %1 = fusec.log_softmax %y {axis = 2 : i64} : (tensor<3x5x7xELT>) -> tensor<3x5x7xELT>
  return %0, %1 : tensor<4x33xELT>, tensor<3x5x7xELT>
})"},
    {"layer_norm", R"(
func.func @f(%x: tensor<6x40xELT>, %w: tensor<40xELT>, %b: tensor<40xELT>, %y: tensor<3x4x5xELT>, %w2: tensor<4x5xELT>) -> (tensor<6x40xELT>, tensor<6x40xELT>, tensor<3x4x5xELT>) {
  %0 = fusec.layer_norm %x weight(%w) bias(%b) {axis = 1 : i64, eps = 1.0e-05 : f64} : (tensor<6x40xELT>, tensor<40xELT>, tensor<40xELT>) -> tensor<6x40xELT>
  %1 = fusec.layer_norm %x bias(%b) {axis = 1 : i64, eps = 1.0e-05 : f64} : (tensor<6x40xELT>, tensor<40xELT>) -> tensor<6x40xELT>
  %2 = fusec.layer_norm %y weight(%w2) {axis = 1 : i64, eps = 1.0e-03 : f64} : (tensor<3x4x5xELT>, tensor<4x5xELT>) -> tensor<3x4x5xELT>
  return %0, %1, %2 : tensor<6x40xELT>, tensor<6x40xELT>, tensor<3x4x5xELT>
})"},
    {"rms_norm", R"(
func.func @f(%x: tensor<5x64xELT>, %w: tensor<64xELT>, %y: tensor<2x3x8xELT>) -> (tensor<5x64xELT>, tensor<2x3x8xELT>) {
  %0 = fusec.rms_norm %x weight(%w) {eps = 1.0e-06 : f64} : (tensor<5x64xELT>, tensor<64xELT>) -> tensor<5x64xELT>
  %1 = fusec.rms_norm %y {eps = 1.0e-05 : f64} : (tensor<2x3x8xELT>) -> tensor<2x3x8xELT>
  return %0, %1 : tensor<5x64xELT>, tensor<2x3x8xELT>
})"},
    {"linear", R"(
func.func @f(%x: tensor<3x4x16xELT>, %w: tensor<8x16xELT>, %b: tensor<8xELT>, %y: tensor<16xELT>) -> (tensor<3x4x8xELT>, tensor<8xELT>) {
  %0 = fusec.linear %x, %w bias(%b) : (tensor<3x4x16xELT>, tensor<8x16xELT>, tensor<8xELT>) -> tensor<3x4x8xELT>
  %1 = fusec.linear %y, %w : (tensor<16xELT>, tensor<8x16xELT>) -> tensor<8xELT>
  return %0, %1 : tensor<3x4x8xELT>, tensor<8xELT>
})"},
    {"attention", R"(
func.func @f(%q: tensor<2x3x5x8xELT>, %k: tensor<2x3x7x8xELT>, %v: tensor<2x3x7x4xELT>) -> (tensor<2x3x5x4xELT>, tensor<2x3x5x4xELT>) {
  %0 = fusec.scaled_dot_product_attention %q, %k, %v : (tensor<2x3x5x8xELT>, tensor<2x3x7x8xELT>, tensor<2x3x7x4xELT>) -> tensor<2x3x5x4xELT>
  %1 = fusec.scaled_dot_product_attention %q, %k, %v {causal = true, scale = 0.5 : f64} : (tensor<2x3x5x8xELT>, tensor<2x3x7x8xELT>, tensor<2x3x7x4xELT>) -> tensor<2x3x5x4xELT>
  return %0, %1 : tensor<2x3x5x4xELT>, tensor<2x3x5x4xELT>
})"},
    {"attention_masks", R"(
func.func @f(%q: tensor<2x3x5x8xELT>, %k: tensor<2x1x7x8xELT>, %v: tensor<2x1x7x4xELT>, %m: tensor<5x7xi1>, %a: tensor<2x1x5x7xELT>) -> (tensor<2x3x5x4xELT>, tensor<2x3x5x4xELT>) {
  %0 = fusec.scaled_dot_product_attention %q, %k, %v mask(%m) : (tensor<2x3x5x8xELT>, tensor<2x1x7x8xELT>, tensor<2x1x7x4xELT>, tensor<5x7xi1>) -> tensor<2x3x5x4xELT>
  %1 = fusec.scaled_dot_product_attention %q, %k, %v mask(%a) {causal = true} : (tensor<2x3x5x8xELT>, tensor<2x1x7x8xELT>, tensor<2x1x7x4xELT>, tensor<2x1x5x7xELT>) -> tensor<2x3x5x4xELT>
  return %0, %1 : tensor<2x3x5x4xELT>, tensor<2x3x5x4xELT>
})"},
};

class DecomposeTest : public InterpTest,
                      public ::testing::WithParamInterface<std::tuple<int, DType, bool>> {};

TEST_P(DecomposeTest, DirectMatchesDecomposed) {
  auto [index, dtype, fp64] = GetParam();
  const DecomposeCase &c = kDecomposeCases[index];
  std::string text = std::regex_replace(c.text, std::regex("ELT"), std::string(dtypeName(dtype)));
  mlir::OwningOpRef<mlir::ModuleOp> direct = parse(text), decomposed = parse(text);
  ASSERT_TRUE(direct && decomposed);

  mlir::PassManager pm(&context);
  buildDecomposePipeline(pm);
  ASSERT_TRUE(mlir::succeeded(pm.run(*decomposed)));
  bool anyComposite = false, anyLeft = false;
  direct->walk([&](mlir::Operation *op) { anyComposite |= isComposite(op); });
  decomposed->walk([&](mlir::Operation *op) { anyLeft |= isComposite(op); });
  ASSERT_TRUE(anyComposite);
  ASSERT_FALSE(anyLeft) << "the pipeline left a composite op";

  auto f = direct->lookupSymbol<mlir::func::FuncOp>("f");
  std::vector<HostTensor> args;
  for (auto [i, type] : llvm::enumerate(f.getFunctionType().getInputs())) {
    auto tensorType = mlir::cast<mlir::RankedTensorType>(type);
    args.push_back(randomTensor(*toDType(tensorType.getElementType()),
                                std::vector<int64_t>(tensorType.getShape().begin(),
                                                     tensorType.getShape().end()),
                                100 + i));
  }
  InterpOptions opts;
  opts.fp64 = fp64;
  auto want = interpret(f, args, opts);
  ASSERT_TRUE(static_cast<bool>(want)) << llvm::toString(want.takeError());
  auto got = interpret(decomposed->lookupSymbol<mlir::func::FuncOp>("f"), args, opts);
  ASSERT_TRUE(static_cast<bool>(got)) << llvm::toString(got.takeError());
  ASSERT_EQ(got->size(), want->size());

  // Relative error, measured against at least the tensor's RMS magnitude:
  // where a result cancels (an affine norm's w * z + b near 0) the rounding
  // error of the decomposition's separately rounded terms scales with the
  // terms, not with the small result.
  const double tol = dtype == DType::F32 ? 1e-5 : 2e-2;
  for (size_t r = 0; r < want->size(); ++r) {
    SCOPED_TRACE("result " + std::to_string(r));
    const HostTensor &w = (*want)[r];
    Values expected = values(w);
    double sumSquares = 0;
    size_t finite = 0;
    for (double v : expected) {
      if (!std::isfinite(v))
        continue;
      sumSquares += v * v;
      ++finite;
    }
    ASSERT_GT(finite, expected.size() / 2) << "too few finite values to compare";
    double rms = std::sqrt(sumSquares / static_cast<double>(finite));
    expectTensor((*got)[r], w.dtype(), w.shape(), expected, tol, std::max(1.0, rms));
  }
}

std::string caseName(const ::testing::TestParamInfo<std::tuple<int, DType, bool>> &info) {
  auto [index, dtype, fp64] = info.param;
  return std::string(kDecomposeCases[index].name) + "_" + std::string(dtypeName(dtype)) +
         (fp64 ? "_fp64" : "");
}

INSTANTIATE_TEST_SUITE_P(
    Composites, DecomposeTest,
    ::testing::Combine(::testing::Range(0, static_cast<int>(std::size(kDecomposeCases))),
                       ::testing::Values(DType::F32, DType::F16, DType::BF16),
                       ::testing::Bool()),
    caseName);

} // namespace
