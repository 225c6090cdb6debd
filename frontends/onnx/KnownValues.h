//===- KnownValues.h - values the ONNX importer computes at import --------===//
//
// Exported models compute their shapes in the graph: Shape, Gather of one
// dim, Unsqueeze, Concat, arithmetic on sizes, ConstantOfShape, Range. Where
// the sizes are fixed, the importer computes those values itself (folds
// them) and reads them as the constant shapes and axes fusec's ops take;
// a folded value that a computing op reads becomes a fill (`constant`) or an
// index progression (`iota`). These are the folds, on small host tensors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/shape/ShapeRules.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fusec::onnx_import {

/// A tensor known at import: its shape, dtype (fusec's name) and values in
/// row-major order; a single value for more elements is a fill. Values are
/// doubles: integers are exact up to 2^53 (sizes are far below), and the
/// INT64 extremes exporters write for "to the end" read back as themselves.
struct Known {
  shape::Shape shape;
  std::vector<double> values;
  std::string dtype = "i64";

  int64_t numel() const;
  double at(int64_t i) const { return values.size() == 1 ? values[0] : values[size_t(i)]; }
  bool fill() const { return values.size() == 1; }
  bool integral() const { return dtype == "i64" || dtype == "i32" || dtype == "bool"; }
  /// Its values as integers (a shape, axes, indices), if it holds integers.
  std::optional<std::vector<int64_t>> ints() const;
};

/// The most elements a folded value holds unless it is a fill: larger ones
/// are computed by the graph instead.
constexpr int64_t kMaxFoldedElements = 1 << 16;

/// Folds return the value, or nullopt with `error` empty where the value is
/// left to the graph (an op it does not fold, a result too large), or with
/// `error` set where the node is malformed.

/// ONNX elementwise `op` (Add, Sub, Mul, Div, Mod, Neg, Abs, Equal, Less,
/// Greater, LessOrEqual, GreaterOrEqual, Not, And, Or, Where, Max, Min) of
/// known operands, broadcast as NumPy does.
std::optional<Known> foldElementwise(const std::string &op, const std::vector<Known> &in,
                                     std::string &error);
/// data[indices] along `axis` (ONNX Gather; negative indices count from the end).
std::optional<Known> foldGather(const Known &data, const Known &indices, int64_t axis,
                                std::string &error);
std::optional<Known> foldConcat(const std::vector<Known> &in, int64_t axis, std::string &error);
/// ONNX Slice on a known value (starts and ends clamped, positive steps).
std::optional<Known> foldSlice(const Known &x, const std::vector<int64_t> &starts,
                               const std::vector<int64_t> &ends, std::vector<int64_t> axes,
                               std::vector<int64_t> steps, std::string &error);
/// x broadcast to `shape` (ONNX Expand: each dim the larger of the two).
std::optional<Known> foldExpand(const Known &x, const shape::Shape &shape, std::string &error);
/// Values converted to `dtype` (integers truncate toward zero, bool is != 0).
Known castKnown(const Known &x, const std::string &dtype);
/// Running sums of x along `axis` (ONNX CumSum; `exclusive` leaves out the
/// element itself, `reverse` sums from the end).
std::optional<Known> foldCumSum(const Known &x, int64_t axis, bool exclusive, bool reverse,
                                std::string &error);
/// ONNX GatherND: slices of `data` at the index tuples in the last dim of
/// `indices`, the first `batchDims` dims shared.
std::optional<Known> foldGatherND(const Known &data, const Known &indices, int64_t batchDims,
                                  std::string &error);
/// ONNX GatherElements: out[i..] = data[i.. with indices[i..] along `axis`].
std::optional<Known> foldGatherElements(const Known &data, const Known &indices, int64_t axis,
                                        std::string &error);
/// start, start + delta, ... below `limit` (ONNX Range).
std::optional<Known> foldRange(const Known &start, const Known &limit, const Known &delta,
                               std::string &error);

/// The shape ONNX Reshape's `target` gives `in`: a 0 copies the input's dim
/// (unless `allowZero`), one -1 takes what is left; an error names the
/// mismatch.
std::optional<shape::Shape> reshapeTarget(const shape::Shape &in, std::vector<int64_t> target,
                                          bool allowZero, std::string &error);

/// An index progression: element (i0, ..., in) = start + step * i_dim (what
/// Range gives, and Expand of it). nullopt for anything else.
struct Progression {
  double start = 0, step = 0;
  int64_t dim = 0;
};
std::optional<Progression> progressionOf(const Known &k);

} // namespace fusec::onnx_import
