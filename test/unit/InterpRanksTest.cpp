//===- InterpRanksTest.cpp - collectives and the ranks of a split program -===//
//
// The collectives against values worked out by hand (sums in rank order,
// blocks joined and cut along an axis), a collective outside a split run,
// and a rank that fails before a collective: the others are told, and the
// run ends instead of waiting for it.
//
//===----------------------------------------------------------------------===//
#include "InterpTestUtil.h"

#include "compiler/interp/Ranks.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace fusec;
using namespace fusec::testing;

namespace {

class InterpRanksTest : public InterpTest {
protected:
  /// Rank r's results of @f of `text`, run over args.size() ranks.
  std::vector<std::vector<HostTensor>> runRanks(const std::string &text,
                                                const std::vector<std::vector<HostTensor>> &args) {
    auto module = parse(text);
    if (!module)
      return {};
    auto func = module->lookupSymbol<mlir::func::FuncOp>("f");
    auto out = interpretRanks(func, args, {});
    if (!out) {
      ADD_FAILURE() << llvm::toString(out.takeError());
      return {};
    }
    return *out;
  }
};

TEST_F(InterpRanksTest, AllReduceSumsMaxesAndMinsAcrossRanks) {
  const std::string text = R"(
func.func @f(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %s = fusec.all_reduce %x {kind = "sum", ranks = 2 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  %m = fusec.all_reduce %x {kind = "max", ranks = 2 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  %n = fusec.all_reduce %x {kind = "min", ranks = 2 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  return %s, %m, %n : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
})";
  auto out = runRanks(text, {{tensor(DType::F32, {3}, {1, -2, 0.5})},
                             {tensor(DType::F32, {3}, {10, 3, -4})}});
  ASSERT_EQ(out.size(), 2u);
  for (const auto &rank : out) {
    ASSERT_EQ(rank.size(), 3u);
    expectTensor(rank[0], DType::F32, {3}, {11, 1, -3.5});
    expectTensor(rank[1], DType::F32, {3}, {10, 3, 0.5});
    expectTensor(rank[2], DType::F32, {3}, {1, -2, -4});
  }
}

TEST_F(InterpRanksTest, AllGatherJoinsAndReduceScatterCutsAlongTheAxis) {
  const std::string text = R"(
func.func @f(%x: tensor<2x2xi32>) -> (tensor<2x4xi32>, tensor<1x2xi32>) {
  %g = fusec.all_gather %x {axis = 1 : i64, ranks = 2 : i64} : (tensor<2x2xi32>) -> tensor<2x4xi32>
  %r = fusec.reduce_scatter %x {axis = 0 : i64, ranks = 2 : i64} : (tensor<2x2xi32>) -> tensor<1x2xi32>
  return %g, %r : tensor<2x4xi32>, tensor<1x2xi32>
})";
  auto out = runRanks(text, {{tensor(DType::I32, {2, 2}, {1, 2, 3, 4})},
                             {tensor(DType::I32, {2, 2}, {5, 6, 7, 8})}});
  ASSERT_EQ(out.size(), 2u);
  for (const auto &rank : out)
    expectTensor(rank[0], DType::I32, {2, 4}, {1, 2, 5, 6, 3, 4, 7, 8});
  // The sum is [[6, 8], [10, 12]]: rank 0 keeps its first row, rank 1 its second.
  expectTensor(out[0][1], DType::I32, {1, 2}, {6, 8});
  expectTensor(out[1][1], DType::I32, {1, 2}, {10, 12});
}

TEST_F(InterpRanksTest, CollectiveOutsideASplitRunIsAnError) {
  const std::string text = R"(
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %s = fusec.all_reduce %x {kind = "sum", ranks = 2 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  return %s : tensor<3xf32>
})";
  EXPECT_NE(runError(text, {tensor(DType::F32, {3}, {1, 2, 3})})
                .find("the program is split over 2 ranks; evaluate it with --ranks 2"),
            std::string::npos);
}

TEST_F(InterpRanksTest, ARankThatFailsStopsTheOthers) {
  auto module = parse(R"(
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %s = fusec.all_reduce %x {kind = "sum", ranks = 3 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  %t = fusec.all_reduce %s {kind = "sum", ranks = 3 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  return %t : tensor<3xf32>
})");
  ASSERT_TRUE(module);
  auto func = module->lookupSymbol<mlir::func::FuncOp>("f");
  // Rank 2's argument has the wrong shape: it fails before the first
  // collective, where ranks 0 and 1 wait for it.
  HostTensor good = tensor(DType::F32, {3}, {1, 2, 3});
  auto out = interpretRanks(func, {{good}, {good}, {tensor(DType::F32, {2}, {1, 2})}}, {});
  ASSERT_FALSE(out);
  std::string message = llvm::toString(out.takeError());
  EXPECT_NE(message.find("rank 2: "), std::string::npos) << message;
  EXPECT_NE(message.find("has dtype f32 and shape [2]"), std::string::npos) << message;
}

TEST(RankBlocks, BlocksOfASplitDimJoinBackIntoTheTensor) {
  HostTensor t(DType::BF16, {2, 4, 3});
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set(i, double(i));
  std::vector<HostTensor> blocks;
  for (int r = 0; r < 4; ++r)
    blocks.push_back(rankBlock(t, 1, r, 4));
  ASSERT_EQ(blocks[1].shape(), (std::vector<int64_t>{2, 1, 3}));
  // Rank 1's block along dim 1: elements (b, 1, c) = 3 + 12 b + c.
  expectTensor(blocks[1], DType::BF16, {2, 1, 3}, {3, 4, 5, 15, 16, 17});
  EXPECT_EQ(joinBlocks(blocks, 1), t);
}

} // namespace
