//===- ReadsInPlace.cpp - whether a group reads its anchors at their place ===//
#include "compiler/schedule/ReadsInPlace.h"

#include "compiler/cost/CostModel.h"
#include "compiler/shape/ShapeRules.h"
#include "compiler/support/Printable.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <map>
#include <utility>
#include <vector>

using namespace mlir;

namespace fusec {
namespace {

/// An index as far as this needs it: per dim, the domain dim it is exactly
/// (the kernel's own position along it), or kOther (a constant, a shifted
/// or strided position, a recomputed linear index).
constexpr int kOther = -1;
using Where = std::vector<int>;

/// The operand's index where an elementwise op (or a broadcast) is read at
/// `at`: NumPy's trailing alignment, a dim of 1 broadcast read at 0.
Where project(const Where &at, ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  if (to.size() > from.size())
    return Where(to.size(), kOther);
  Where out;
  size_t off = from.size() - to.size();
  for (size_t j = 0; j < to.size(); ++j)
    out.push_back(to[j] == 1 && from[off + j] != 1 ? kOther : at[off + j]);
  return out;
}

/// A reshape's operand index: in each group of dims (shape::reshapeGroups,
/// as ElementEmitter::emitView forms them) a dim alone on both sides (dims
/// of 1 aside) keeps its index; any other is recomputed from a linear index.
Where reshapeOperand(const Where &at, ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  Where out(to.size(), kOther);
  for (const shape::ReshapeGroup &g : shape::reshapeGroups(from, to)) {
    std::vector<size_t> fd, td;
    for (size_t d = g.aBegin; d < g.aEnd; ++d)
      if (from[d] != 1)
        fd.push_back(d);
    for (size_t d = g.bBegin; d < g.bEnd; ++d)
      if (to[d] != 1)
        td.push_back(d);
    if (fd.size() == 1 && td.size() == 1)
      out[td[0]] = at[fd[0]];
  }
  return out;
}

/// The index `view`'s operand is read at where its result is read at `at`.
Where viewOperand(Operation *view, const Where &at) {
  ArrayRef<int64_t> from = shapeOf(view->getResult(0)), to = shapeOf(view->getOperand(0));
  if (auto t = dyn_cast<TransposeOp>(view)) {
    Where out(to.size(), kOther);
    ArrayRef<int64_t> perm = t.getPerm();
    for (size_t i = 0; i < perm.size() && i < at.size(); ++i)
      out[size_t(perm[i])] = at[i];
    return out;
  }
  if (isa<BroadcastToOp>(view))
    return project(at, from, to);
  if (auto s = dyn_cast<SliceOp>(view)) {
    Where out(to.size(), kOther);
    for (size_t d = 0; d < to.size() && d < at.size(); ++d)
      if (s.getSteps()[d] == 1 && s.getStarts()[d] == 0)
        out[d] = at[d];
    return out;
  }
  if (isa<ReshapeOp>(view))
    return reshapeOperand(at, from, to);
  return Where(to.size(), kOther);
}

/// The most (value, index) pairs followed for one group: a group whose
/// values are read at more index patterns than this runs apart.
constexpr size_t kMaxReads = 1 << 16;

class Reads {
public:
  Reads(ArrayRef<Operation *> ops, ArrayRef<int64_t> domain, ArrayRef<int64_t> reducedAxes,
        Operation *only)
      : members(ops.begin(), ops.end()), domain(domain), only(only) {
    for (int64_t p = 0; p < (int64_t)domain.size(); ++p)
      if (!llvm::is_contained(reducedAxes, p))
        kept.push_back(p);
  }

  /// Whether every anchor that `v`, read at `at`, reads is read in place.
  bool check(Value v, Where at) {
    // Views fold into the index, a chain of them in a loop (a chain may be
    // long); consecutive reshapes as one (row-major reshapes compose).
    while (Operation *def = v.getDefiningOp()) {
      if (!isView(def))
        break;
      Value in = def->getOperand(0);
      if (isa<ReshapeOp>(def)) {
        while (Operation *r = in.getDefiningOp<ReshapeOp>())
          in = r->getOperand(0);
        at = reshapeOperand(at, shapeOf(v), shapeOf(in));
      } else {
        at = viewOperand(def, at);
      }
      v = in;
    }
    auto [id, fresh] = indexIds.try_emplace(at, unsigned(indexIds.size()));
    (void)fresh;
    if (!seen.insert({v.getAsOpaquePointer(), id->second}).second)
      return true;
    if (seen.size() > kMaxReads) {
      why = "its values are read at more index patterns than the planner follows";
      return false;
    }
    Operation *def = v.getDefiningOp();
    if (!def || !members.count(def) || isGenerator(def))
      return true;
    if (isa<SumOp, MeanOp, MaxOp, MinOp, MatmulOp>(def))
      return (only && def != only) || inPlace(def, at);
    if (auto cat = dyn_cast<ConcatOp>(def)) {
      Where in = at;
      in[size_t(cat.getAxis())] = kOther;
      for (Value o : def->getOperands())
        if (!check(o, in))
          return false;
      return true;
    }
    if (auto g = dyn_cast<GatherOp>(def)) {
      const int64_t rank = (int64_t)shapeOf(g.getIndices()).size();
      const int64_t axis = g.getAxis();  // 0..rank-1 (GatherOp::verify)
      if (axis < 0 || axis + rank > (int64_t)at.size()) {
        why = "a gather's axis is outside its data's dims";
        return false;
      }
      Where in(at.begin(), at.begin() + axis);
      in.push_back(kOther);
      in.insert(in.end(), at.begin() + axis + rank, at.end());
      Where indices(at.begin() + axis, at.begin() + axis + rank);
      return check(g.getData(), in) && check(g.getIndices(), indices);
    }
    for (Value o : def->getOperands())
      if (!check(o, project(at, shapeOf(v), shapeOf(o))))
        return false;
    return true;
  }

  /// An anchor read at `at`: a reduction at its own row (its kept dims, in
  /// place or, keepdims=false, in order), a product at its own element.
  bool inPlace(Operation *anchor, const Where &at) {
    ArrayRef<int64_t> s = shapeOf(anchor->getResult(0));
    bool ok = true;
    if (isa<MatmulOp>(anchor)) {
      for (size_t p = 0; p < s.size(); ++p)
        ok &= s[p] == 1 || (p < at.size() && at[p] == int(p));
    } else if (s.size() == domain.size()) {
      for (int64_t p : kept)
        ok &= domain[size_t(p)] == 1 || (size_t(p) < at.size() && at[size_t(p)] == p);
    } else if (s.size() == kept.size() && at.size() == kept.size()) {
      for (size_t j = 0; j < kept.size(); ++j)
        ok &= domain[size_t(kept[j])] == 1 || at[j] == kept[j];
    } else {
      ok = false;
    }
    if (!ok)
      why = "a view reads " + nodeName(anchor) + " away from the " +
            (isa<MatmulOp>(anchor) ? "element" : "row") +
            " the kernel holds it for (a transpose, a slice, a reshape, or the broadcast of a "
            "keepdims=false result)";
    return ok;
  }

  std::vector<int64_t> kept;
  std::string why;

private:
  static std::string nodeName(Operation *op) {
    std::string s = op->getName().stripDialect().str();
    if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
      s += " '" + printable(loc.getName().str()) + "'";
    return s;
  }

  llvm::SmallPtrSet<Operation *, 16> members;
  ArrayRef<int64_t> domain;
  Operation *only;
  std::map<Where, unsigned> indexIds;
  llvm::DenseSet<std::pair<const void *, unsigned>> seen;
};

} // namespace

bool readsAnchorsInPlace(ArrayRef<Operation *> ops, ArrayRef<int64_t> domain,
                         ArrayRef<int64_t> reducedAxes, std::string &why, Operation *only) {
  Reads reads(ops, domain, reducedAxes, only);
  Where identity;
  for (int p = 0; p < (int)domain.size(); ++p)
    identity.push_back(p);
  // A reduction's operand is computed at every element of the domain.
  for (Operation *op : ops)
    if (isa<SumOp, MeanOp, MaxOp, MinOp>(op) && !reads.check(op->getOperand(0), identity)) {
      why = reads.why;
      return false;
    }
  // Outputs at the index they are stored at: the domain's, or a row's
  // (reduced dims at 0 where the output keeps them, else the kept dims).
  llvm::SetVector<Value> inputs, outputs;
  groupBoundary(ops, inputs, outputs);
  for (Value v : outputs) {
    ArrayRef<int64_t> s = shapeOf(v);
    Where at;
    if (s.size() == domain.size()) {
      for (int p = 0; p < (int)domain.size(); ++p)
        at.push_back(s[size_t(p)] == domain[size_t(p)] &&
                             (s == domain || llvm::is_contained(reads.kept, int64_t(p)))
                         ? p
                         : kOther);
    } else if (s.size() == reads.kept.size()) {
      for (size_t j = 0; j < s.size(); ++j)
        at.push_back(s[j] == domain[size_t(reads.kept[j])] ? int(reads.kept[j]) : kOther);
    } else {
      at.assign(s.size(), kOther);
    }
    if (!reads.check(v, at)) {
      why = reads.why;
      return false;
    }
  }
  return true;
}

} // namespace fusec
