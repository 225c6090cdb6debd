//===- PickEarlyTest.cpp - picks moved past the row statistics, exactly ---===//
//
// -fusec-pick-early claims the moved pick gives what the pick gave, bit for
// bit: one term or none, and the sign of a zero as the sum gives it. The
// inputs are chosen at the edges (the picked element the row's max, so the
// term is a zero; labels before, past and at the ends of the row; a row of
// -inf) and the fused module's interpreted outputs compared byte for byte
// with the graph's.
//
//===----------------------------------------------------------------------===//
#include "compiler/interp/Interpreter.h"
#include "compiler/pipeline/Compile.h"
#include "frontends/json/GraphReader.h"
#include "test/unit/InterpTestUtil.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <limits>

namespace fusec {
namespace {

/// `-pick(-(x - max(x)))` and its reciprocal (the sign of a zero made
/// visible), and the log-softmax's pick, over x [4, 6] and labels t [4, 1].
const char *kGraph = R"({"fusec": 1, "name": "pick_signs",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [4, 6]},
             {"name": "t", "dtype": "i64", "shape": [4, 1]}],
  "nodes": [
    {"name": "m", "op": "max", "inputs": ["x"], "attrs": {"axes": -1, "keepdims": true}},
    {"name": "d", "op": "sub", "inputs": ["x", "m"]},
    {"name": "n", "op": "neg", "inputs": ["d"]},
    {"name": "col", "op": "iota", "attrs": {"shape": [4, 6], "dim": 1, "dtype": "i64"}},
    {"name": "hit", "op": "eq", "inputs": ["col", "t"]},
    {"name": "zero", "op": "constant", "attrs": {"value": 0, "dtype": "f32"}},
    {"name": "w", "op": "where", "inputs": ["hit", "n", "zero"]},
    {"name": "p", "op": "sum", "inputs": ["w"], "attrs": {"axes": -1, "keepdims": true}},
    {"name": "one", "op": "constant", "attrs": {"value": 1, "dtype": "f32"}},
    {"name": "r", "op": "div", "inputs": ["one", "p"]},
    {"name": "lsm", "op": "log_softmax", "inputs": ["x"], "attrs": {"axis": -1}},
    {"name": "wl", "op": "where", "inputs": ["hit", "lsm", "zero"]},
    {"name": "pl", "op": "sum", "inputs": ["wl"], "attrs": {"axes": -1, "keepdims": false}}],
  "outputs": ["p", "r", "pl"]})";

TEST(PickEarly, KeepsEveryBitOfThePick) {
  const float inf = std::numeric_limits<float>::infinity();
  // Row 0 picks its max (a zero term), row 1 a label past the row, row 2 a
  // negative label, row 3 (all -inf) its first column.
  std::vector<HostTensor> in = {
      testing::tensor(DType::F32, {4, 6},
                      {1, 2, 3, 9, 4, 5, 0.5, -1, 2, 3, -4, 6, -3, 1, 7, 2, 2, 0,
                       -inf, -inf, -inf, -inf, -inf, -inf}),
      testing::tensor(DType::I64, {4, 1}, {3, 6, -1, 0})};
  mlir::MLIRContext ctx;
  auto module = importGraphText(kGraph, "pick_signs.json", ctx);
  ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
  mlir::OwningOpRef<mlir::ModuleOp> fused = (*module)->clone();
  CompileOptions o;
  ASSERT_FALSE(bool(fuseModule(*fused, o)));
  auto ref = interpret(graphFunction(**module), in);
  auto got = interpret(graphFunction(*fused), in);
  ASSERT_TRUE(bool(ref)) << llvm::toString(ref.takeError());
  ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
  ASSERT_EQ(ref->size(), 3u);
  ASSERT_EQ(got->size(), 3u);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_TRUE((*ref)[i] == (*got)[i]) << "output " << i;
  // What the reference gives, so that the comparison means something: +0
  // where the max is picked (1 / p = +inf), 0 where no column is picked.
  testing::Values r = testing::values((*ref)[1]);
  EXPECT_EQ(r[0], inf);
  EXPECT_EQ(r[1], inf);
}

} // namespace
} // namespace fusec
