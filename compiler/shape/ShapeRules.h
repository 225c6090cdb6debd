//===- ShapeRules.h - shape inference shared by frontend and verifiers ---===//
//
// Each rule computes a result shape or returns a message saying why it cannot.
// The JSON frontend calls them to report errors in graph terms (node, field);
// the dialect verifiers call the very same rules, so both agree by construction.
// A rule returns an empty string on success. Messages are lowercase, LLVM-style.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fusec::shape {

using Shape = std::vector<int64_t>;

/// Largest element count fusec accepts for one tensor (2^40).
inline constexpr int64_t kMaxElements = int64_t(1) << 40;

/// "[8192, 4096]"
std::string str(llvm::ArrayRef<int64_t> shape);

/// Rejects negative dims and element counts past kMaxElements.
std::string checkDims(llvm::ArrayRef<int64_t> shape);
int64_t numElements(llvm::ArrayRef<int64_t> shape);

/// NumPy broadcasting of any number of shapes.
std::string broadcast(llvm::ArrayRef<Shape> shapes, Shape &out);
/// Whether `from` broadcasts to exactly `to`.
std::string broadcastTo(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to);

/// Maps a possibly negative axis into [0, rank).
std::string normalizeAxis(int64_t axis, int64_t rank, int64_t &out);
/// Normalizes, sorts and rejects duplicates. Empty `axes` means all axes.
std::string normalizeAxes(llvm::ArrayRef<int64_t> axes, int64_t rank,
                          std::vector<int64_t> &out);
/// `axes` must be normalized (sorted, unique, in range).
std::string reduce(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> axes,
                   bool keepdims, Shape &out);

std::string transpose(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> perm,
                      Shape &out);
/// `target` may hold one -1 (inferred) and zeros are taken literally.
std::string reshape(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> target,
                    Shape &out);

/// A reshape's dims in row-major groups of equal element counts: `a`'s dims
/// [aBegin, aEnd) hold what `b`'s [bBegin, bEnd) hold ([32, 32, 4097] and
/// [32, 8, 4, 4097]: {32}, {32 | 8, 4}, {4097}). A dim of 1 joins the group
/// before it where the other shape has none there, so groups stay as small
/// as can be. Empty where the shapes hold no element or differ in count.
struct ReshapeGroup {
  size_t aBegin, aEnd, bBegin, bEnd;
};
std::vector<ReshapeGroup> reshapeGroups(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// A slice normalized to one (start, limit, step) per dimension, step > 0.
struct SliceSpec {
  std::vector<int64_t> starts, limits, steps;
};
/// ONNX/NumPy-style slicing: negative indices count from the end and are clamped.
/// `axes` empty means 0..n-1; `steps` empty means all ones.
std::string normalizeSlice(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> starts,
                           llvm::ArrayRef<int64_t> ends, llvm::ArrayRef<int64_t> axes,
                           llvm::ArrayRef<int64_t> steps, SliceSpec &out);
/// Checks an already normalized slice and computes its result shape.
std::string slice(llvm::ArrayRef<int64_t> in, const SliceSpec &spec, Shape &out);

std::string concat(llvm::ArrayRef<Shape> shapes, int64_t axis, Shape &out);

/// ONNX Gather: `data` with dim `axis` (may be negative) replaced by `indices`'s dims.
std::string gather(llvm::ArrayRef<int64_t> data, llvm::ArrayRef<int64_t> indices, int64_t axis,
                   Shape &out);

/// NumPy matmul: 1-D operands are promoted and the added dim removed afterwards,
/// batch dims broadcast.
std::string matmul(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b, Shape &out);

} // namespace fusec::shape
