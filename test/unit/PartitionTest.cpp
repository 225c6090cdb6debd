//===- PartitionTest.cpp - a graph split over ranks computes the whole graph -===//
//
// Random graphs (pointwise and reductions, matmuls with epilogues and
// prologues, attention) with random arguments split along random dims over
// 2, 3 or 4 ranks: the split program, planned as `fusec compile --ranks`
// plans it (collectives outlined as steps of their own), run rank by rank
// in the interpreter, gives the whole graph's results on every rank. Sums
// that the split turns into partial sums round once per rank before they are
// added, so the comparison allows the dtype's rounding; everything else is
// computed from the same elements.
//
//===----------------------------------------------------------------------===//
#include "compiler/dialect/FusecDialect.h"
#include "compiler/interp/Interpreter.h"
#include "compiler/interp/Ranks.h"
#include "compiler/pipeline/Compile.h"
#include "compiler/transforms/Passes.h"
#include "frontends/json/GraphReader.h"
#include "test/common/RandomGraph.h"
#include "test/unit/PlanTestUtil.h"

#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace fusec;

namespace {

/// ||got - want|| / max(||want||, tiny) over every element.
double normwiseError(const HostTensor &got, const HostTensor &want) {
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    double w = want.get(i), g = got.get(i);
    if (std::isnan(w) && std::isnan(g))
      continue;
    diff += (g - w) * (g - w);
    norm += w * w;
  }
  return std::sqrt(diff) / std::max(std::sqrt(norm), 1e-30);
}

double tolerance(DType t) {
  return t == DType::BF16 ? 2e-2 : t == DType::F16 ? 4e-3 : isFloat(t) ? 1e-5 : 0;
}

struct Counts {
  int graphs = 0, split = 0, collectives = 0;
};

/// Splits `text` over `ranks` by random shards (seeded), plans it, and
/// expects every rank's outputs to match the whole decomposed graph's.
void expectSplitMatches(const std::string &text, uint64_t seed, int ranks, Counts &counts) {
  mlir::MLIRContext ctx;
  auto module = importGraphText(text, "random.json", ctx);
  ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
  mlir::PassManager pm(&ctx);
  buildDecomposePipeline(pm);
  ASSERT_TRUE(mlir::succeeded(pm.run(**module)));
  mlir::func::FuncOp whole = graphFunction(**module);

  mlir::OwningOpRef<mlir::ModuleOp> split = (*module)->clone();
  mlir::func::FuncOp f = graphFunction(*split);
  fusec::test::Rng rng{seed};
  mlir::Builder b(&ctx);
  bool any = false;
  for (unsigned i = 0; i < f.getNumArguments(); ++i) {
    llvm::ArrayRef<int64_t> s = shapeOf(f.getArgument(i));
    std::vector<int64_t> dims;
    for (size_t d = 0; d < s.size(); ++d)
      if (s[d] % ranks == 0)
        dims.push_back(int64_t(d));
    if (dims.empty() || rng.pick(3) == 0)
      continue;
    f.setArgAttr(i, kShardAttr, b.getI64IntegerAttr(rng.of(dims)));
    any = true;
  }
  if (!any)
    return;
  CompileOptions o;
  o.ranks = ranks;
  o.gemm = "fusec";
  ASSERT_FALSE(bool(fuseModule(*split, o))) << text;
  f = graphFunction(*split);
  ++counts.graphs;
  bool local = false;
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    local |= shapeOf(f.getArgument(i)) != shapeOf(whole.getArgument(i));
  counts.split += local;
  f.walk([&](mlir::Operation *op) { counts.collectives += isCollective(op); });

  std::vector<HostTensor> in = fusec::testing::randomInputs(whole, seed * 31);
  auto want = interpret(whole, in);
  ASSERT_TRUE(bool(want)) << llvm::toString(want.takeError());
  auto got = interpretRanks(f, argumentsPerRank(f, in), {});
  ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError()) << "\n" << text;
  ASSERT_EQ(got->size(), size_t(ranks));
  for (int r = 0; r < ranks; ++r) {
    ASSERT_EQ((*got)[r].size(), want->size());
    for (size_t k = 0; k < want->size(); ++k) {
      const HostTensor &w = (*want)[k], &g = (*got)[r][k];
      ASSERT_EQ(g.shape(), w.shape());
      // The graph's least precise dtype bounds a partial sum's rounding.
      double tol = tolerance(w.dtype());
      for (const HostTensor &t : in)
        tol = std::max(tol, tolerance(t.dtype()));
      double err = normwiseError(g, w);
      EXPECT_LE(err, tol) << "seed " << seed << ", " << ranks << " ranks, rank " << r
                          << ", output " << k << "\n" << text;
    }
  }
}

TEST(Partition, RandomGraphsSplitOverRanksComputeTheWholeGraph) {
  Counts c;
  for (uint64_t seed = 0; seed < 60; ++seed)
    expectSplitMatches(fusec::test::randomGraph(seed, 1 << 14), seed, 2 + int(seed % 3), c);
  // Not a test of nothing: most graphs were split, and some needed collectives.
  EXPECT_GE(c.graphs, 25);
  EXPECT_GE(c.split, c.graphs / 2);
  EXPECT_GE(c.collectives, c.graphs);
}

TEST(Partition, RandomMatmulGraphsSplitOverRanksComputeTheWholeGraph) {
  Counts c;
  for (uint64_t seed = 0; seed < 30; ++seed)
    expectSplitMatches(fusec::test::randomMatmulGraph(seed), seed, 2 + int(seed % 2), c);
  EXPECT_GE(c.graphs, 15);
  EXPECT_GE(c.split, c.graphs / 2);
}

TEST(Partition, RandomAttentionGraphsSplitOverRanksComputeTheWholeGraph) {
  Counts c;
  for (uint64_t seed = 0; seed < 8; ++seed)
    expectSplitMatches(fusec::test::randomAttentionGraph(seed), seed, 2, c);
  for (uint64_t seed = 0; seed < 8; ++seed)
    expectSplitMatches(fusec::test::randomDecodeAttentionGraph(seed), seed, 2, c);
  EXPECT_GE(c.graphs, 8);
}

} // namespace
