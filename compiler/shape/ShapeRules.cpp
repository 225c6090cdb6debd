//===- ShapeRules.cpp - shape inference shared by frontend and verifiers -===//
#include "compiler/shape/ShapeRules.h"

#include <algorithm>

namespace fusec::shape {

std::string str(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string checkDims(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return "negative dimension " + std::to_string(d) + " in shape " + str(shape);
    if (d != 0 && n > kMaxElements / d)
      return "shape " + str(shape) + " has more than 2^40 elements";
    n *= d;
  }
  if (n > kMaxElements)
    return "shape " + str(shape) + " has more than 2^40 elements";
  return {};
}

int64_t numElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string broadcast(llvm::ArrayRef<Shape> shapes, Shape &out) {
  size_t rank = 0;
  for (const Shape &s : shapes)
    rank = std::max(rank, s.size());
  out.assign(rank, 1);
  for (const Shape &s : shapes) {
    size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t d = s[i], &o = out[off + i];
      if (d == o || d == 1)
        continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string all;
      for (const Shape &t : shapes)
        all += (all.empty() ? "" : " vs ") + str(t);
      return "shapes cannot broadcast: " + all + " (dimension " +
             std::to_string(d) + " vs " + std::to_string(o) + ")";
    }
  }
  return {};
}

std::string broadcastTo(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return "cannot broadcast " + str(from) + " to lower rank " + str(to);
  size_t off = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[off + i])
      return "cannot broadcast " + str(from) + " to " + str(to) + " (dimension " +
             std::to_string(i) + " is " + std::to_string(from[i]) + ")";
  return {};
}

std::string normalizeAxis(int64_t axis, int64_t rank, int64_t &out) {
  if (axis < -rank || axis >= rank || rank == 0)
    return "axis " + std::to_string(axis) + " is out of range for rank " +
           std::to_string(rank);
  out = axis < 0 ? axis + rank : axis;
  return {};
}

std::string normalizeAxes(llvm::ArrayRef<int64_t> axes, int64_t rank,
                          std::vector<int64_t> &out) {
  out.clear();
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i)
      out.push_back(i);
    return {};
  }
  for (int64_t a : axes) {
    int64_t n;
    if (std::string err = normalizeAxis(a, rank, n); !err.empty())
      return err;
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    return "duplicate axis in " + str(axes);
  return {};
}

std::string reduce(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> axes,
                   bool keepdims, Shape &out) {
  out.clear();
  for (size_t i = 0; i + 1 < axes.size(); ++i)
    if (axes[i] >= axes[i + 1])
      return "axes " + str(axes) + " must be sorted and unique";
  for (int64_t a : axes)
    if (a < 0 || a >= (int64_t)in.size())
      return "axis " + std::to_string(a) + " is out of range for rank " +
             std::to_string(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    bool reduced = std::find(axes.begin(), axes.end(), (int64_t)i) != axes.end();
    if (!reduced)
      out.push_back(in[i]);
    else if (keepdims)
      out.push_back(1);
  }
  return {};
}

std::string transpose(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> perm,
                      Shape &out) {
  if (perm.size() != in.size())
    return "perm " + str(perm) + " has " + std::to_string(perm.size()) +
           " entries but the input has rank " + std::to_string(in.size());
  std::vector<bool> seen(in.size(), false);
  out.clear();
  for (int64_t p : perm) {
    if (p < 0 || p >= (int64_t)in.size() || seen[p])
      return "perm " + str(perm) + " is not a permutation of 0.." +
             std::to_string((int64_t)in.size() - 1);
    seen[p] = true;
    out.push_back(in[p]);
  }
  return {};
}

std::string reshape(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> target,
                    Shape &out) {
  // The input's count is taken below: a shape from a file may overflow it.
  if (std::string e = checkDims(in); !e.empty())
    return e;
  out.assign(target.begin(), target.end());
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (inferred >= 0)
        return "shape " + str(target) + " has more than one -1";
      inferred = i;
      continue;
    }
    if (target[i] < 0)
      return "negative dimension " + std::to_string(target[i]) + " in shape " +
             str(target);
    // Checked before multiplying, as checkDims does: dims from a file can be
    // large enough to overflow the product.
    if (target[i] != 0 && known > kMaxElements / target[i])
      return "shape " + str(target) + " has more than 2^40 elements";
    known *= target[i];
  }
  int64_t total = numElements(in);
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      return "cannot infer -1 in " + str(target) + " for " + std::to_string(total) +
             " elements of " + str(in);
    out[inferred] = total / known;
    known *= out[inferred];
  }
  if (known != total)
    return "cannot reshape " + str(in) + " (" + std::to_string(total) +
           " elements) to " + str(target) + " (" + std::to_string(known) +
           " elements)";
  return checkDims(out);
}

std::vector<ReshapeGroup> reshapeGroups(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  std::vector<ReshapeGroup> groups;
  if (numElements(a) == 0 || numElements(a) != numElements(b))
    return groups;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const size_t i0 = i, j0 = j;
    int64_t pa = i < a.size() ? a[i++] : 1, pb = j < b.size() ? b[j++] : 1;
    while (pa != pb) {
      if (pa < pb ? i >= a.size() : j >= b.size())
        return {};
      if (pa < pb)
        pa *= a[i++];
      else
        pb *= b[j++];
    }
    while (i < a.size() && a[i] == 1 && (j >= b.size() || b[j] != 1))
      ++i;
    while (j < b.size() && b[j] == 1 && (i >= a.size() || a[i] != 1))
      ++j;
    groups.push_back({i0, i, j0, j});
  }
  return groups;
}

std::string normalizeSlice(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> starts,
                           llvm::ArrayRef<int64_t> ends, llvm::ArrayRef<int64_t> axes,
                           llvm::ArrayRef<int64_t> steps, SliceSpec &out) {
  int64_t rank = in.size();
  out.starts.assign(rank, 0);
  out.limits.assign(in.begin(), in.end());
  out.steps.assign(rank, 1);
  if (starts.size() != ends.size())
    return "starts has " + std::to_string(starts.size()) + " entries but ends has " +
           std::to_string(ends.size());
  if (!axes.empty() && axes.size() != starts.size())
    return "axes has " + std::to_string(axes.size()) + " entries but starts has " +
           std::to_string(starts.size());
  if (!steps.empty() && steps.size() != starts.size())
    return "steps has " + std::to_string(steps.size()) + " entries but starts has " +
           std::to_string(starts.size());
  if (axes.empty() && (int64_t)starts.size() > rank)
    return "starts has " + std::to_string(starts.size()) +
           " entries but the input has rank " + std::to_string(rank);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = i;
    if (!axes.empty())
      if (std::string err = normalizeAxis(axes[i], rank, axis); !err.empty())
        return err;
    if (seen[axis])
      return "axis " + std::to_string(axis) + " is sliced twice";
    seen[axis] = true;
    int64_t step = steps.empty() ? 1 : steps[i];
    if (step <= 0)
      return "step " + std::to_string(step) + " must be positive";
    int64_t dim = in[axis];
    auto clampIndex = [dim](int64_t v) {
      if (v < 0)
        v += dim;
      return std::clamp<int64_t>(v, 0, dim);
    };
    out.starts[axis] = clampIndex(starts[i]);
    out.limits[axis] = std::max(out.starts[axis], clampIndex(ends[i]));
    out.steps[axis] = step;
  }
  return {};
}

std::string slice(llvm::ArrayRef<int64_t> in, const SliceSpec &spec, Shape &out) {
  size_t rank = in.size();
  if (spec.starts.size() != rank || spec.limits.size() != rank ||
      spec.steps.size() != rank)
    return "starts, limits and steps must each have one entry per dimension (" +
           std::to_string(rank) + ")";
  out.clear();
  for (size_t i = 0; i < rank; ++i) {
    int64_t s = spec.starts[i], l = spec.limits[i], st = spec.steps[i];
    if (st <= 0)
      return "step " + std::to_string(st) + " must be positive";
    if (s < 0 || l < s || l > in[i])
      return "slice [" + std::to_string(s) + ", " + std::to_string(l) +
             ") is out of bounds for dimension " + std::to_string(i) + " of size " +
             std::to_string(in[i]);
    out.push_back(l > s ? 1 + (l - s - 1) / st : 0);  // no overflow for huge steps
  }
  return {};
}

std::string gather(llvm::ArrayRef<int64_t> data, llvm::ArrayRef<int64_t> indices, int64_t axis,
                   Shape &out) {
  int64_t a = 0;
  if (std::string e = normalizeAxis(axis, static_cast<int64_t>(data.size()), a); !e.empty())
    return e;
  if (data[size_t(a)] == 0)
    return "gathers from an empty dim";
  out.assign(data.begin(), data.begin() + a);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.begin() + a + 1, data.end());
  return checkDims(out);
}

std::string concat(llvm::ArrayRef<Shape> shapes, int64_t axis, Shape &out) {
  if (shapes.empty())
    return "concat needs at least one input";
  const Shape &first = shapes.front();
  if (axis < 0 || axis >= (int64_t)first.size())
    return "axis " + std::to_string(axis) + " is out of range for rank " +
           std::to_string(first.size());
  out = first;
  for (size_t k = 1; k < shapes.size(); ++k) {
    const Shape &s = shapes[k];
    if (s.size() != first.size())
      return "input " + std::to_string(k) + " has rank " + std::to_string(s.size()) +
             " but input 0 has rank " + std::to_string(first.size());
    for (size_t i = 0; i < s.size(); ++i)
      if ((int64_t)i != axis && s[i] != first[i])
        return "input " + std::to_string(k) + " shape " + str(s) +
               " differs from input 0 shape " + str(first) + " outside axis " +
               std::to_string(axis);
    out[axis] += s[axis];
  }
  return checkDims(out);
}

std::string matmul(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b, Shape &out) {
  if (a.empty() || b.empty())
    return "matmul operands must have rank >= 1, got " + str(a) + " and " + str(b);
  Shape a2(a.begin(), a.end()), b2(b.begin(), b.end());
  bool aVec = a2.size() == 1, bVec = b2.size() == 1;
  if (aVec)
    a2.insert(a2.begin(), 1);
  if (bVec)
    b2.push_back(1);
  int64_t k1 = a2.back(), k2 = b2[b2.size() - 2];
  if (k1 != k2)
    return "matmul inner dimensions differ: " + str(a) + " @ " + str(b) + " (" +
           std::to_string(k1) + " vs " + std::to_string(k2) + ")";
  Shape batchA(a2.begin(), a2.end() - 2), batchB(b2.begin(), b2.end() - 2);
  Shape batch;
  if (std::string err = broadcast({batchA, batchB}, batch); !err.empty())
    return "matmul batch dimensions cannot broadcast: " + str(a) + " @ " + str(b);
  out = batch;
  if (!aVec)
    out.push_back(a2[a2.size() - 2]);
  if (!bVec)
    out.push_back(b2.back());
  return checkDims(out);
}

} // namespace fusec::shape
