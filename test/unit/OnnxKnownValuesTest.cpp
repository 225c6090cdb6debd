//===- OnnxKnownValuesTest.cpp - shape arithmetic the ONNX importer folds -===//
#include "frontends/onnx/KnownValues.h"

#include <gtest/gtest.h>

#include <limits>

namespace fusec::onnx_import {
namespace {

Known ints(shape::Shape s, std::vector<double> v) {
  Known k;
  k.shape = std::move(s);
  k.values = std::move(v);
  return k;
}

TEST(OnnxKnownValues, ElementwiseBroadcastsAndDividesIntegersTowardZero) {
  std::string error;
  std::optional<Known> d = foldElementwise("Div", {ints({3}, {7, -7, 8}), ints({}, {2})}, error);
  ASSERT_TRUE(d) << error;
  EXPECT_EQ(d->shape, (shape::Shape{3}));
  EXPECT_EQ(d->values, (std::vector<double>{3, -3, 4}));
  // [2, 1] + [3] -> [2, 3]
  std::optional<Known> s = foldElementwise("Add", {ints({2, 1}, {10, 20}), ints({3}, {1, 2, 3})}, error);
  ASSERT_TRUE(s) << error;
  EXPECT_EQ(s->shape, (shape::Shape{2, 3}));
  EXPECT_EQ(s->values, (std::vector<double>{11, 12, 13, 21, 22, 23}));
  std::optional<Known> eq = foldElementwise("Equal", {ints({2}, {-1, 4}), ints({}, {-1})}, error);
  ASSERT_TRUE(eq) << error;
  EXPECT_EQ(eq->dtype, "bool");
  EXPECT_EQ(eq->values, (std::vector<double>{1, 0}));
  // A division by a zero it computes is an error, not a folded infinity.
  EXPECT_FALSE(foldElementwise("Div", {ints({1}, {4}), ints({1}, {0})}, error));
  EXPECT_FALSE(error.empty());
}

TEST(OnnxKnownValues, FillsStayFills) {
  std::string error;
  Known big;
  big.shape = {4096, 4096};
  big.values = {1};
  big.dtype = "f32";
  std::optional<Known> r = foldElementwise("Mul", {big, ints({}, {3})}, error);
  ASSERT_TRUE(r) << error;
  EXPECT_TRUE(r->fill());
  EXPECT_EQ(r->values[0], 3);
  EXPECT_EQ(r->shape, (shape::Shape{4096, 4096}));
  // Not a fill and too large: left to the graph, without an error.
  Known wide = ints({1, 1 << 12}, std::vector<double>(1 << 12, 0.0));
  wide.values[1] = 1;
  Known tall = ints({1 << 12, 1}, std::vector<double>(1 << 12, 0.0));
  EXPECT_FALSE(foldElementwise("Add", {wide, tall}, error));
  EXPECT_TRUE(error.empty());
}

TEST(OnnxKnownValues, GatherOfDimsAndNegativeIndices) {
  std::string error;
  Known shape = ints({3}, {2, 77, 64});
  std::optional<Known> one = foldGather(shape, ints({}, {-2}), 0, error);
  ASSERT_TRUE(one) << error;
  EXPECT_TRUE(one->shape.empty());
  EXPECT_EQ(one->values, (std::vector<double>{77}));
  std::optional<Known> two = foldGather(shape, ints({2}, {2, 0}), 0, error);
  ASSERT_TRUE(two) << error;
  EXPECT_EQ(two->values, (std::vector<double>{64, 2}));
  // Rows of a matrix.
  std::optional<Known> rows = foldGather(ints({2, 2}, {1, 2, 3, 4}), ints({1}, {1}), 0, error);
  ASSERT_TRUE(rows) << error;
  EXPECT_EQ(rows->shape, (shape::Shape{1, 2}));
  EXPECT_EQ(rows->values, (std::vector<double>{3, 4}));
  EXPECT_FALSE(foldGather(shape, ints({}, {3}), 0, error));
  EXPECT_NE(error.find("index 3"), std::string::npos);
}

TEST(OnnxKnownValues, SliceToTheEndAndConcat) {
  std::string error;
  const int64_t end = std::numeric_limits<int64_t>::max();
  std::optional<Known> tail = foldSlice(ints({4}, {5, 6, 7, 8}), {-2}, {end}, {}, {}, error);
  ASSERT_TRUE(tail) << error;
  EXPECT_EQ(tail->values, (std::vector<double>{7, 8}));
  std::optional<Known> cat = foldConcat({ints({1}, {1}), ints({2}, {2, 3})}, 0, error);
  ASSERT_TRUE(cat) << error;
  EXPECT_EQ(cat->values, (std::vector<double>{1, 2, 3}));
  // The INT64_MAX exporters write for "to the end" reads back exactly.
  Known k = ints({1}, {double(end)});
  EXPECT_EQ(k.ints()->at(0), end);
}

TEST(OnnxKnownValues, RangeReshapeTargetsAndProgressions) {
  std::string error;
  std::optional<Known> r = foldRange(ints({}, {2}), ints({}, {11}), ints({}, {3}), error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->values, (std::vector<double>{2, 5, 8}));
  std::optional<Progression> p = progressionOf(*r);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->start, 2);
  EXPECT_EQ(p->step, 3);
  EXPECT_EQ(p->dim, 0);
  // Expanded along rows, it still is one along dim 1.
  std::optional<Known> grid = foldExpand(*r, {2, 3}, error);
  ASSERT_TRUE(grid) << error;
  std::optional<Progression> g = progressionOf(*grid);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->dim, 1);
  EXPECT_FALSE(progressionOf(ints({3}, {3, 1, 2})));
  EXPECT_FALSE(foldRange(ints({}, {0}), ints({}, {4}), ints({}, {0}), error));
  // Reshape: 0 copies the input's dim, -1 takes the rest.
  std::optional<shape::Shape> s = reshapeTarget({2, 3, 8}, {0, 0, 2, -1}, false, error);
  ASSERT_TRUE(s) << error;
  EXPECT_EQ(*s, (shape::Shape{2, 3, 2, 4}));
  EXPECT_FALSE(reshapeTarget({2, 3}, {0, 0, 0}, false, error));
}

} // namespace
// The ops exporters use on a causal mask's positions (opset 18 dynamo
// exports of transformers' masks): running sums, index tuples, elements
// picked along an axis; Concat counting its axis from the end.
TEST(OnnxKnownValues, CumSumGatherNDGatherElementsAndNegativeConcatAxes) {
  std::string error;
  std::optional<Known> c = foldCumSum(ints({2, 3}, {1, 2, 3, 4, 5, 6}), -1, false, false, error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->values, (std::vector<double>{1, 3, 6, 4, 9, 15}));
  c = foldCumSum(ints({2, 3}, {1, 2, 3, 4, 5, 6}), 0, true, false, error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->values, (std::vector<double>{0, 0, 0, 1, 2, 3}));
  c = foldCumSum(ints({3}, {1, 2, 3}), 0, false, true, error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->values, (std::vector<double>{6, 5, 3}));
  EXPECT_FALSE(foldCumSum(ints({3}, {1, 2, 3}), 1, false, false, error));
  EXPECT_FALSE(error.empty());

  // data [2, 3]; tuples (1, 2) and (0, 0) -> [2]; a one-index tuple -> a row.
  Known data = ints({2, 3}, {10, 11, 12, 20, 21, 22});
  std::optional<Known> g = foldGatherND(data, ints({2, 2}, {1, 2, 0, 0}), 0, error);
  ASSERT_TRUE(g) << error;
  EXPECT_EQ(g->shape, (shape::Shape{2}));
  EXPECT_EQ(g->values, (std::vector<double>{22, 10}));
  g = foldGatherND(data, ints({1, 1}, {-1}), 0, error);
  ASSERT_TRUE(g) << error;
  EXPECT_EQ(g->shape, (shape::Shape{1, 3}));
  EXPECT_EQ(g->values, (std::vector<double>{20, 21, 22}));
  // batch_dims 1: each row's own index.
  g = foldGatherND(data, ints({2, 1}, {2, 0}), 1, error);
  ASSERT_TRUE(g) << error;
  EXPECT_EQ(g->values, (std::vector<double>{12, 20}));
  EXPECT_FALSE(foldGatherND(data, ints({1, 2}, {0, 3}), 0, error));
  EXPECT_NE(error.find("index 3"), std::string::npos) << error;

  std::optional<Known> e = foldGatherElements(data, ints({2, 2}, {2, 0, 1, -1}), 1, error);
  ASSERT_TRUE(e) << error;
  EXPECT_EQ(e->values, (std::vector<double>{12, 10, 21, 22}));
  EXPECT_FALSE(foldGatherElements(data, ints({1, 1}, {3}), 1, error));

  std::optional<Known> cat = foldConcat({ints({1, 2}, {1, 2}), ints({1, 1}, {3})}, -1, error);
  ASSERT_TRUE(cat) << error;
  EXPECT_EQ(cat->shape, (shape::Shape{1, 3}));
  EXPECT_EQ(cat->values, (std::vector<double>{1, 2, 3}));
}

} // namespace fusec::onnx_import
