//===- GroupSchedule.cpp - which kernel family can run a group of ops -----===//
#include "compiler/schedule/GroupSchedule.h"
#include "compiler/schedule/AttentionForm.h"
#include "compiler/schedule/ReadsInPlace.h"
#include "compiler/schedule/RowStatsForm.h"

#include "compiler/schedule/GemmForms.h"
#include "compiler/schedule/StridedView.h"

#include "compiler/schedule/GemmConfig.h"
#include "compiler/cost/CostModel.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/plan/PeerRegion.h"
#include "compiler/shape/ShapeRules.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <limits>

using namespace mlir;

namespace fusec {

const char *groupKindName(GroupKind k) {
  switch (k) {
  case GroupKind::Pointwise: return "pointwise";
  case GroupKind::RowReduction: return "row_reduction";
  case GroupKind::ColumnReduction: return "column_reduction";
  case GroupKind::Matmul: return "matmul";
  case GroupKind::Attention: return "attention";
  case GroupKind::StreamedRows: return "streamed_rows";
  case GroupKind::Collective: return "collective";
  }
  return "?";
}

std::optional<GroupKind> parseGroupKind(llvm::StringRef name) {
  for (GroupKind k : {GroupKind::Pointwise, GroupKind::RowReduction, GroupKind::ColumnReduction,
                      GroupKind::Matmul, GroupKind::Attention, GroupKind::StreamedRows,
                      GroupKind::Collective})
    if (name == groupKindName(k))
      return k;
  return std::nullopt;
}

std::vector<int64_t> GroupSchedule::keptShape() const {
  std::vector<int64_t> s = domain;
  for (int64_t a : reducedAxes)
    s[a] = 1;
  return s;
}

namespace {

bool isReduction(Operation *op) { return isa<SumOp, MeanOp, MaxOp, MinOp>(op); }

std::string opLabel(Operation *op) {
  std::string name = op->getName().stripDialect().str();
  if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
    return name + " '" + loc.getName().str() + "'";
  return name;
}

bool classifyPointwise(ArrayRef<Operation *> ops, GroupSchedule &s, std::string &why) {
  llvm::SetVector<Value> inputs, outputs;
  groupBoundary(ops, inputs, outputs);
  if (outputs.empty()) {
    // A group whose results are all dead still has a domain: its last op's shape.
    ArrayRef<int64_t> d = shapeOf(ops.back()->getResult(0));
    s.domain.assign(d.begin(), d.end());
    return true;
  }
  ArrayRef<int64_t> d = shapeOf(outputs[0]);
  for (Value v : outputs)
    if (shapeOf(v) != d) {
      why = "outputs have different shapes (" + shape::str(d) + " vs " +
            shape::str(shapeOf(v)) + ")";
      return false;
    }
  s.kind = GroupKind::Pointwise;
  s.domain.assign(d.begin(), d.end());
  return true;
}

/// Per-row values (reduction results and what is computed from them) may only
/// be used at their own row: with shape D or D-with-reduced-dims-1. (Reads
/// through views are readsAnchorsInPlace's.)
bool checkRowConsistency(ArrayRef<Operation *> ops, const GroupSchedule &s,
                         std::string &why) {
  std::vector<int64_t> kept = s.keptShape();
  ArrayRef<int64_t> d(s.domain), k(kept);
  llvm::SmallPtrSet<Value, 16> perRow;
  for (Operation *op : ops) {
    if (isReduction(op)) {
      Value r = op->getResult(0);
      bool usedInside = llvm::any_of(r.getUsers(), [&](Operation *u) {
        return llvm::is_contained(ops, u);
      });
      if (shapeOf(r) != k && usedInside) {
        why = opLabel(op) + " drops the reduced dims (keepdims=false); only keepdims "
                            "reductions fuse with what follows them";
        return false;
      }
      perRow.insert(r);
      continue;
    }
    bool derived = llvm::any_of(op->getOperands(), [&](Value v) { return perRow.count(v); });
    if (!derived)
      continue;
    for (Value v : op->getOperands()) {
      ArrayRef<int64_t> vs = shapeOf(v);
      if (perRow.count(v) && vs != k && vs != d) {
        why = opLabel(op) + " uses a per-row value of shape " + shape::str(vs) +
              " outside its row";
        return false;
      }
    }
    ArrayRef<int64_t> rs = shapeOf(op->getResult(0));
    if (!isElementwise(op) || (rs != k && rs != d)) {
      why = opLabel(op) + " reshapes a per-row value to " + shape::str(rs);
      return false;
    }
    if (rs == k)
      perRow.insert(op->getResult(0));
  }
  return true;
}

bool classifyReduction(ArrayRef<Operation *> ops, ArrayRef<Operation *> reductions,
                       GroupSchedule &s, std::string &why) {
  Operation *first = reductions.front();
  ArrayRef<int64_t> d = shapeOf(first->getOperand(0));
  ArrayRef<int64_t> axes = first->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
  for (Operation *r : reductions) {
    if (shapeOf(r->getOperand(0)) != d ||
        r->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef() != axes) {
      why = "reductions differ: " + opLabel(first) + " reduces " + shape::str(d) +
            " over " + shape::str(axes) + ", " + opLabel(r) + " reduces " +
            shape::str(shapeOf(r->getOperand(0))) + " over " +
            shape::str(r->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef());
      return false;
    }
  }
  s.domain.assign(d.begin(), d.end());
  s.reducedAxes.assign(axes.begin(), axes.end());
  s.rows = s.cols = 1;
  for (size_t i = 0; i < d.size(); ++i)
    (llvm::is_contained(axes, (int64_t)i) ? s.cols : s.rows) *= d[i];
  // Kept dims last (leading reduced dims with contiguous kept dims behind
  // them, or a middle dim reduced, mean pooling over tokens): a column
  // reduction, whose kernels read whole runs of the kept columns. Otherwise
  // rows, read contiguously along the innermost reduced dims.
  bool prefix = true;
  for (size_t i = 0; i < axes.size(); ++i)
    prefix &= axes[i] == (int64_t)i;
  bool suffix = true;
  for (size_t i = 0; i < axes.size(); ++i)
    suffix &= axes[axes.size() - 1 - i] == (int64_t)(d.size() - 1 - i);
  // A middle reduction only when the kept run behind it spans 32 bytes (a
  // DRAM sector): over [B, S, 1] the columns are one element wide, and the
  // row kernel's contiguous rows read better.
  int64_t run = 1;
  for (int64_t i = (int64_t)d.size() - 1; i >= 0 && !llvm::is_contained(axes, i); --i)
    run *= d[i];
  bool middle = run * dtypeBytes(dtypeOf(first->getOperand(0))) >= 32;
  s.kind = (prefix && !suffix) || middle ? GroupKind::ColumnReduction : GroupKind::RowReduction;
  if (!checkRowConsistency(ops, s, why))
    return false;
  // The kernels store a per-row output at its row's kept indices: of the
  // kept shape, or of the kept dims alone (RowPlan::perRowOutputs,
  // columnOutputs). Another shape of as many values (flattened, permuted)
  // would be indexed as one of those.
  llvm::SetVector<Value> inputs, outputs;
  groupBoundary(ops, inputs, outputs);
  std::vector<int64_t> kept = s.keptShape(), keptDims;
  for (size_t i = 0; i < d.size(); ++i)
    if (!llvm::is_contained(axes, (int64_t)i))
      keptDims.push_back(d[i]);
  for (Value v : outputs) {
    ArrayRef<int64_t> vs = shapeOf(v);
    if (vs != d && vs != ArrayRef<int64_t>(kept) && vs != ArrayRef<int64_t>(keptDims)) {
      why = "output " + opLabel(v.getDefiningOp()) + " of shape " + shape::str(vs) +
            " is neither the reduced domain " + shape::str(d) + " nor one value per row (" +
            shape::str(kept) + " or " + shape::str(keptDims) + ")";
      return false;
    }
  }
  return readsAnchorsInPlace(ops, d, axes, why);
}

/// Two sibling matmuls of more rows (SwiGLU's gate and up) as one dual
/// product on Hopper's wgmma GEMM (the planner checks the target): the two
/// results meet in the epilogue, which writes one 16-bit value of their
/// shape, and neither product is written itself.
static bool dualSiblings(ArrayRef<Operation *> ops, ArrayRef<Operation *> mms, std::string &why) {
  auto notBuilt = [&](const std::string &what) {
    why = opLabel(mms[0]) + " and " + opLabel(mms[1]) + " read the same A, but " + what;
    return false;
  };
  if (mms.size() != 2 || !dualWgmmaApplies(mms[0], mms[1], "sm_90a"))
    return notBuilt("siblings share a kernel only at decode sizes (1-64 rows of A, K-contiguous "
                    "16-bit weights, 2-D), as two products of one shape (2-D, K-contiguous "
                    "16-bit, more than 64 rows) joined in one epilogue, or as up to 3 such "
                    "products of one K written as they are (side by side)");
  llvm::SetVector<Value> inputs, outputs;
  groupBoundary(ops, inputs, outputs);
  ArrayRef<int64_t> d = shapeOf(mms[0]->getResult(0));
  if (outputs.size() != 1 || isa_and_nonnull<MatmulOp>(outputs[0].getDefiningOp()) ||
      shapeOf(outputs[0]) != d || !isHalfFloat(dtypeOf(outputs[0])))
    return notBuilt("a dual product writes one 16-bit result of the products' shape, computed "
                    "from both (here the group would write " + std::to_string(outputs.size()) +
                    " value(s))");
  return true;
}

/// Sibling matmuls of more rows whose products are the group's results as
/// they are (Q/K/V): one wgmma kernel over their tiles side by side along N
/// (the planner checks the target).
static bool sideBySideSiblings(ArrayRef<Operation *> ops, ArrayRef<Operation *> mms) {
  if (!llvm::all_of(ops, [](Operation *op) { return isa<MatmulOp>(op) || isView(op); }) ||
      !concatWgmmaApplies(mms, "sm_90a"))
    return false;
  llvm::SetVector<Value> inputs, outputs;
  groupBoundary(ops, inputs, outputs);
  return outputs.size() == mms.size() &&
         llvm::all_of(outputs, [](Value v) { return isa_and_nonnull<MatmulOp>(v.getDefiningOp()); });
}

/// Sibling matmuls of 1-64 rows that read the same A (Q/K/V projections,
/// SwiGLU's gate and up): one dot-product kernel (past 8 rows its
/// tensor-core form) reads A once and streams all the weights. Every other
/// op is elementwise over one matmul's result shape and depends on matmuls of
/// one width N (silu(gate) * up joins two).
bool classifySiblings(ArrayRef<Operation *> ops, ArrayRef<Operation *> mms, GroupSchedule &s,
                      std::string &why) {
  auto first = cast<MatmulOp>(mms.front());
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  for (Operation *op : mms) {
    SmallVector<Operation *> prologue = matmulPrologue(op, ops);
    if (prologue.empty())
      continue;
    auto upstream = llvm::find_if(prologue, [](Operation *p) { return isa<MatmulOp>(p); });
    why = upstream != prologue.end()
              ? opLabel(*upstream) + " would be computed while loading an operand of " +
                    opLabel(op) + ": a kernel holds several matmuls only as siblings of one A"
              : "a matmul prologue is built for one matmul, not for siblings (" +
                    opLabel(prologue.back()) + " would be computed while loading an operand of " +
                    opLabel(op) + ")";
    return false;
  }
  // The same rows of A: one view (offset, strides) of one tensor.
  auto layoutA = [](MatmulOp mm) { return matmulOperandLayout(mm.getLhs(), {}, 'r'); };
  auto a0 = layoutA(first);
  for (Operation *op : mms) {
    auto mm = cast<MatmulOp>(op);
    auto a = layoutA(mm);
    bool sameA = a && a0 && viewSource(mm.getLhs()) == viewSource(first.getLhs()) &&
                 a->rows == a0->rows && a->cols == a0->cols && a->ld == a0->ld &&
                 a->offset == a0->offset && a->rowMajor == a0->rowMajor;
    if (!sameA) {
      why = opLabel(mms.front()) + " and " + opLabel(op) +
            " do not read the same A: a kernel holds several matmuls only as siblings of one A";
      return false;
    }
  }
  bool gemv = llvm::all_of(mms, [](Operation *op) {
    return gemvApplies(op) && shapeOf(cast<MatmulOp>(op).getRhs()).size() == 2 &&
           shapeOf(op->getResult(0)).size() == 2;
  });
  // 9-64 rows: the tensor-core form holds every weight's sums in shared
  // memory; its smallest configuration (one tile, 4 warps, 2 stages) must
  // fit the smallest GPU's of the profiles (an L40S's 99 KB), counting each
  // matmul as a weight of one segment, the most there can be (conservative:
  // Q/K/V, three segments of one weight, are refused from 57 rows).
  if (gemv && tensorCoreGemvApplies(mms.front())) {
    codegen::detail::TcGemvShape t;
    t.m = shapeOf(cast<MatmulOp>(mms.front()).getLhs()).end()[-2];
    t.tiles = 1;
    t.warps = 4;
    t.stages = 2;
    t.weights = static_cast<int>(mms.size());
    int64_t smallest = std::numeric_limits<int64_t>::max();
    for (const DeviceProfile &p : deviceProfiles())
      smallest = std::min(smallest, p.smemPerBlock);
    if (!t.fits(smallest)) {
      why = opLabel(mms.front()) + " and " + opLabel(mms.back()) + " read the same A, but " +
            std::to_string(mms.size()) + " sibling matmuls of " + std::to_string(t.m) +
            " rows do not fit the tensor-core dot-product kernel's shared memory";
      return false;
    }
  }
  if (!gemv && !sideBySideSiblings(ops, mms) && !dualSiblings(ops, mms, why))
    return false;
  // The width N each epilogue value depends on (one per value).
  llvm::DenseMap<Operation *, int64_t> width;
  for (Operation *op : ops) {
    if (isa<MatmulOp>(op)) {
      width[op] = shapeOf(op->getResult(0)).back();
      continue;
    }
    if (!isElementwise(op)) {
      why = opLabel(op) + " is not elementwise: sibling matmul epilogues are elementwise";
      return false;
    }
    int64_t n = -1;
    for (Value v : op->getOperands())
      if (Operation *def = viewSource(v).getDefiningOp(); def && width.count(def)) {
        if (n >= 0 && width[def] != n) {
          why = opLabel(op) + " joins matmul results of different widths";
          return false;
        }
        n = width[def];
      }
    if (n < 0 || shapeOf(op->getResult(0)).back() != n ||
        shapeOf(op->getResult(0)).size() != shapeOf(first->getResult(0)).size() ||
        shape::numElements(shapeOf(op->getResult(0))) != shapeOf(first.getLhs())[0] * n) {
      why = opLabel(op) + " is not elementwise over a matmul result";
      return false;
    }
    width[op] = n;
  }
  // Each product is read at its own element, over its own shape.
  for (Operation *mm : mms)
    if (!readsAnchorsInPlace(ops, shapeOf(mm->getResult(0)), {}, why, mm))
      return false;
  ArrayRef<int64_t> d = shapeOf(first->getResult(0));
  s.kind = GroupKind::Matmul;
  s.domain.assign(d.begin(), d.end());
  return true;
}

/// A prologue computes an operand of the matmul while the kernel loads it:
/// elementwise ops (views between them fold into the index) whose values
/// nothing but the prologue and the matmul reads, so none is ever written.
bool prologueFits(Operation *mm, ArrayRef<Operation *> prologue, std::string &why) {
  SmallVector<Operation *> readers(prologue.begin(), prologue.end());
  readers.push_back(mm);
  for (Operation *op : prologue) {
    if (!isElementwise(op)) {
      why = "a matmul prologue computes elementwise ops only (" + opLabel(op) +
            " would be computed while loading an operand of " + opLabel(mm) + ")";
      return false;
    }
    for (Value r : op->getResults())
      if (usedOutside(r, readers)) {
        why = opLabel(op) + " is needed besides as an operand of " + opLabel(mm) +
              ": a prologue value is computed while loading, never written";
        return false;
      }
  }
  std::vector<int64_t> batch = matmulBatchShape(cast<MatmulOp>(mm));
  for (OpOperand &operand : mm->getOpOperands()) {
    Value v = operand.get();
    if (!llvm::is_contained(prologue, viewSource(v).getDefiningOp()))
      continue;
    if (shapeOf(v).size() < 2) {
      why = "a matmul prologue computes a matrix operand (" + opLabel(mm) +
            " multiplies a vector computed in the group)";
      return false;
    }
    // An operand no strided view reads (an unaligned slice, batches broadcast
    // in some dims only) is copied into shape ahead of the matmul
    // (materializeMatmulOperands): it is read from memory.
    if (!matmulOperandLayout(v, batch, operand.getOperandNumber() == 0 ? 'r' : 'c')) {
      why = "a matmul prologue computes an operand read through a strided view (the operand of " +
            opLabel(mm) + " is copied into shape first)";
      return false;
    }
  }
  return true;
}

/// One matmul and an elementwise epilogue over its result's shape D: every
/// other op of the group computes a value of shape D from the matmul's result,
/// other epilogue values and tensors read from memory (broadcast to D).
bool classifyMatmul(ArrayRef<Operation *> ops, Operation *mm, GroupSchedule &s,
                    std::string &why) {
  ArrayRef<int64_t> d = shapeOf(mm->getResult(0));
  s.kind = GroupKind::Matmul;
  s.domain.assign(d.begin(), d.end());
  SmallVector<Operation *> prologue = matmulPrologue(mm, ops);
  if (!prologueFits(mm, prologue, why))
    return false;
  for (Operation *op : ops) {
    if (op == mm || llvm::is_contained(prologue, op))
      continue;
    if (isa<MatmulOp>(op)) {
      why = "a matmul group holds one matmul (" + opLabel(mm) + " and " + opLabel(op) + ")";
      return false;
    }
    // Smaller shapes that broadcast to D (a causal mask from iotas) are
    // index math at each element.
    ArrayRef<int64_t> r = shapeOf(op->getResult(0));
    bool broadcasts = r.size() <= d.size();
    for (size_t i = 0; broadcasts && i < r.size(); ++i)
      broadcasts = r[r.size() - 1 - i] == 1 || r[r.size() - 1 - i] == d[d.size() - 1 - i];
    if (!isElementwise(op) || !broadcasts) {
      why = opLabel(op) + " is not an elementwise op over the matmul result's shape " +
            shape::str(d) + ": matmul epilogues are elementwise";
      return false;
    }
  }
  llvm::SetVector<Value> inputs, outputs;
  groupBoundary(ops, inputs, outputs);
  for (Value v : outputs)
    if (shapeOf(v) != d) {
      why = "output " + opLabel(v.getDefiningOp()) + " of shape " + shape::str(shapeOf(v)) +
            " is not the matmul result's shape " + shape::str(d);
      return false;
    }
  return readsAnchorsInPlace(ops, d, {}, why);
}

} // namespace

std::string nodeLabel(Operation *op) {
  if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
    return loc.getName().str() + " (" + op->getName().stripDialect().str() + ")";
  return op->getName().stripDialect().str();
}

std::string tooManyKernelOps(int64_t ops) {
  if (ops <= kMaxKernelOps)
    return "";
  return "one kernel would hold " + std::to_string(ops) + " ops, more than the " +
         std::to_string(kMaxKernelOps) + " a kernel takes";
}

int64_t kernelBuffers(ArrayRef<Operation *> ops) {
  llvm::SmallPtrSet<Operation *, 32> members(ops.begin(), ops.end());
  llvm::DenseSet<Value> reads;
  std::vector<Value> work;
  for (Operation *op : ops)
    work.insert(work.end(), op->operand_begin(), op->operand_end());
  while (!work.empty()) {
    Value v = work.back();
    work.pop_back();
    Operation *d = v.getDefiningOp();
    if (d && members.count(d))
      continue;
    if (d && (isView(d) || isGenerator(d))) {  // read in place, or computed inline
      work.insert(work.end(), d->operand_begin(), d->operand_end());
      continue;
    }
    reads.insert(v);
  }
  int64_t writes = 0;
  for (Operation *op : ops)
    for (Value r : op->getResults())
      writes += llvm::any_of(r.getUsers(), [&](Operation *u) { return !members.count(u); });
  return static_cast<int64_t>(reads.size()) + writes;
}

namespace {
/// Whether all-reduce `ar` may begin the kernel of `ops` (its members): the
/// one-shot exchange over peer memory, done by each block for the rows it
/// then reads (RowReductionKernel.cpp), saves a launch between them. Empty,
/// with `s` the group's schedule, where it may; else why not.
std::string reducedFirst(Operation *ar, ArrayRef<Operation *> ops, GroupSchedule &s) {
  const std::string apart = "a step of its own between kernels";
  auto reduce = dyn_cast<AllReduceOp>(ar);
  if (!reduce || !ar->hasAttr(kOneShotAttr) || reduce.getKind() != "sum")
    return apart;
  // Its operand: this rank's partial tensor, read by nothing else (where the
  // ranks cannot reach each other's memory, NCCL reduces it in place), and
  // a buffer of its own: the result of an op outside, or the kernel's input.
  Value partial = reduce.getOperand();
  Operation *def = partial.getDefiningOp();
  if (def && llvm::is_contained(ops, def))
    return apart + " (every rank's partial sums are complete before it)";
  bool ownBuffer = def ? !isView(def) && !isGenerator(def)
                       : isa<FusionOp>(partial.getParentBlock()->getParentOp());
  if (!ownBuffer || !partial.hasOneUse())
    return apart + " (its operand is no buffer of its own, or is read elsewhere too)";
  SmallVector<Operation *> rest;
  for (Operation *op : ops)
    if (op != ar) {
      if (isCollective(op))
        return apart;
      rest.push_back(op);
    }
  std::string why;
  if (!classifyGroup(rest, s, why) || s.kind != GroupKind::RowReduction)
    return apart + " (only a row reduction begins with one)";
  // Whole rows, read where they are: block b reduces its rows and reads only
  // those, and the rows fit the blocks and chunks of the exchange.
  const int64_t rank = static_cast<int64_t>(s.domain.size());
  bool trailing = !s.reducedAxes.empty() && s.reducedAxes.back() == rank - 1 &&
                  s.reducedAxes.front() == rank - static_cast<int64_t>(s.reducedAxes.size());
  if (shapeOf(reduce.getResult()) != ArrayRef<int64_t>(s.domain) || !trailing ||
      llvm::any_of(reduce.getResult().getUsers(),
                   [&](Operation *u) { return llvm::is_contained(ops, u) && isView(u); }))
    return apart + " (the kernel after it would not read it by whole rows)";
  if (s.rows > peer::kMaxBlocks || s.cols * dtypeBytes(dtypeOf(partial)) > peer::kChunkBytes)
    return apart + " (more than " + std::to_string(peer::kMaxBlocks) + " rows, or rows over " +
           std::to_string(peer::kChunkBytes >> 10) + " KB)";
  return "";
}
} // namespace

bool classifyGroup(ArrayRef<Operation *> ops, GroupSchedule &s, std::string &why) {
  if (ops.empty()) {
    why = "empty group";
    return false;
  }
  if (why = tooManyKernelOps(static_cast<int64_t>(ops.size())); !why.empty())
    return false;
  if (int64_t n = kernelBuffers(ops); n > kMaxKernelBuffers) {
    why = "one kernel would take " + std::to_string(n) + " buffers, more than the " +
          std::to_string(kMaxKernelBuffers) + " a launch passes";
    return false;
  }
  // A collective is where the ranks meet: NCCL runs it, between kernels,
  // or a one-shot all-reduce begins the row kernel after it.
  for (Operation *op : ops) {
    if (!isCollective(op))
      continue;
    if (ops.size() > 1) {
      if (std::string no = reducedFirst(op, ops, s); !no.empty()) {
        why = opLabel(op) + " is a collective: " + no;
        return false;
      }
      return true;
    }
    s.kind = GroupKind::Collective;
    ArrayRef<int64_t> d = shapeOf(op->getResult(0));
    s.domain.assign(d.begin(), d.end());
    s.reducedAxes.clear();
    return true;
  }
  SmallVector<Operation *> reductions, matmuls;
  for (Operation *op : ops)
    if (isa<MatmulOp>(op))
      matmuls.push_back(op);
  // A streamed softmax between two products is a group of its own: with
  // all its ops, it takes no other. (A group with only some of them, where
  // the planner did not stream it, is classified as any other.)
  for (Operation *mm : matmuls) {
    std::string declined;
    std::optional<AttentionMatch> m = matchAttention(mm, declined);
    if (!m || !llvm::all_of(m->ops, [&](Operation *op) { return llvm::is_contained(ops, op); }))
      continue;
    if (!isAttentionGroup(ops)) {
      why = opLabel(mm) + " streams a softmax of " + opLabel(m->scores) +
            ": an attention kernel of its own, which takes no other ops";
      return false;
    }
    s.kind = GroupKind::Attention;
    ArrayRef<int64_t> d = shapeOf(m->output.getResult());
    s.domain.assign(d.begin(), d.end());
    s.reducedAxes.clear();
    return true;
  }
  // So are a product's streamed row statistics (RowStatsForm.h).
  if (std::optional<RowStatsMatch> m = rowStatsAmong(ops)) {
    if (m->ops.size() != ops.size()) {
      why = opLabel(m->sum) + " streams the row statistics of " + opLabel(m->product) +
            ": a kernel of its own, which takes no other ops";
      return false;
    }
    s.kind = GroupKind::StreamedRows;
    ArrayRef<int64_t> d = shapeOf(m->product.getResult());
    s.domain.assign(d.begin(), d.end());
    s.reducedAxes = {static_cast<int64_t>(d.size()) - 1};
    return true;
  }
  if (matmuls.size() > 1)
    return classifySiblings(ops, matmuls, s, why);
  if (!matmuls.empty())
    return classifyMatmul(ops, matmuls.front(), s, why);
  for (Operation *op : ops) {
    if (isa<ConcatOp, GatherOp>(op) || isElementwise(op) || isView(op))
      continue;
    if (isReduction(op)) {
      reductions.push_back(op);
      continue;
    }
    why = opLabel(op) + " has no fused code generation";
    return false;
  }
  if (reductions.empty())
    return classifyPointwise(ops, s, why);
  return classifyReduction(ops, reductions, s, why);
}

} // namespace fusec
