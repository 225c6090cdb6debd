//===- FusionOutlining.cpp - turn groups of ops into fusec.fusion ops -----===//
#include "compiler/transforms/FusionOutlining.h"

#include "compiler/cost/CostModel.h"
#include "compiler/families/KernelFamily.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/schedule/AttentionForm.h"
#include "compiler/schedule/GemmForms.h"
#include "compiler/schedule/GroupSchedule.h"
#include "compiler/schedule/RowStatsForm.h"
#include "compiler/schedule/StridedView.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <optional>

using namespace mlir;

namespace fusec {

std::vector<Operation *> computeOps(func::FuncOp func) {
  std::vector<Operation *> ops;
  for (Operation &op : func.getBody().front())
    if (!isView(&op) && !isGenerator(&op) && !op.hasTrait<mlir::OpTrait::IsTerminator>())
      ops.push_back(&op);
  return ops;
}

namespace {

/// Graph node names covered by `ops` (from NameLocs), deduplicated, in order.
ArrayAttr nodeNames(Builder &b, ArrayRef<Operation *> ops) {
  llvm::SetVector<StringRef> names;
  for (Operation *op : ops)
    if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
      names.insert(loc.getName().strref());
  SmallVector<Attribute> attrs;
  for (StringRef n : names)
    attrs.push_back(b.getStringAttr(n));
  return b.getArrayAttr(attrs);
}

/// A C identifier naming the kernel after its ops: "k3_add_gelu".
std::string kernelName(size_t index, ArrayRef<Operation *> ops) {
  std::string name = "k" + std::to_string(index);
  llvm::SetVector<StringRef> kinds;
  for (Operation *op : ops)
    if (!isView(op) && !isGenerator(op))
      kinds.insert(op->getName().stripDialect());
  size_t shown = 0;
  for (StringRef k : kinds) {
    if (++shown > 4) {
      name += "_etc";
      break;
    }
    name += "_" + k.str();
  }
  if (kinds.empty())
    name += "_copy";
  return name;
}

/// The group's ops plus the views and generators feeding them, in program order.
std::vector<Operation *> withFeeders(ArrayRef<Operation *> group) {
  llvm::SetVector<Operation *> all(group.begin(), group.end());
  std::vector<Operation *> work(group.begin(), group.end());
  while (!work.empty()) {
    Operation *op = work.back();
    work.pop_back();
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        if ((isView(def) || isGenerator(def)) && all.insert(def))
          work.push_back(def);
  }
  std::vector<Operation *> ordered(all.begin(), all.end());
  std::sort(ordered.begin(), ordered.end(),
            [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// What a product reads beyond its operands' stored bytes where an operand
/// is a repeat (a broadcast_to that grows it, through views): unfused, the
/// repeat is a copy the product reads whole.
int64_t repeatedBytes(Operation *matmul) {
  int64_t extra = 0;
  for (Value v : matmul->getOperands())
    for (Operation *d = v.getDefiningOp(); d && isView(d); d = d->getOperand(0).getDefiningOp())
      if (isa<BroadcastToOp>(d) && tensorBytes(d->getResult(0)) > tensorBytes(d->getOperand(0))) {
        extra += tensorBytes(d->getResult(0)) - readBytes(v);
        break;
      }
  return extra;
}

void annotate(FusionOp fusion, ArrayRef<Operation *> group, const GroupSchedule &s,
              const DeviceProfile &p, size_t index) {
  Builder b(fusion.getContext());
  Cost fused = groupCost(group), unfused;
  // Unfused, each op is a kernel of its own and their times add: a
  // product's math and an epilogue's bytes do not overlap across kernels
  // (the maximum of the summed bytes and flops priced SwiGLU's gate/up
  // group 1037.5 us unfused where its four kernels add to 1186).
  double unfusedSeconds = 0;
  // The same kernels in a chain of overlapped launches (DeviceProfile::
  // chainedLaunchSeconds): each adds the larger of its work and the chained
  // launch, for Explanation::unfusedUs.
  double unfusedChained = 0;
  // What the first of them pays beyond that where it starts the graph.
  double unfusedLead = 0;
  for (Operation *op : group)
    if (!op->hasAttr("fusec.recomputed")) {  // counted in the group it was cloned from
      Cost c = unfusedCost(op);
      if (s.kind == GroupKind::Attention && isView(op)) {
        // The transpose an attention kernel writes through is, unfused, a
        // copy for the product that reads it; so is the repeat of
        // grouped-query K/V it reads in place (the cache read once, written
        // once a head), which the product then reads whole.
        const int64_t out = tensorBytes(op->getResult(0)), in = tensorBytes(op->getOperand(0));
        if (isa<BroadcastToOp>(op) && out <= in)
          continue;  // no repeat: a view in every plan
        c.bytes = isa<BroadcastToOp>(op) ? in + out : 2 * out;
        c.launches = 1;
      }
      if (s.kind == GroupKind::Attention && isa<MatmulOp>(op))
        c.bytes += repeatedBytes(op);
      unfused += c;
      // A product alone runs on cuBLASLt, as in the --no-fuse plan (views
      // and generators cost nothing); a collective on NCCL.
      double seconds = predictSeconds(c, p,
                                      isa<MatmulOp>(op) ? libraryGemmPath(op)
                                      : isCollective(op) ? KernelFamily::Collective
                                                         : GemmPath::Library);
      unfusedSeconds += seconds;
      // cuBLASLt and NCCL launch their kernels the ordinary way: they pay all.
      double chained = isa<MatmulOp>(op) || isCollective(op) ? seconds
                                         : std::max(seconds - c.launches * p.launchSeconds,
                                                    c.launches * p.chainedLaunchSeconds);
      if (unfused.launches == c.launches)  // the group's first kernel
        unfusedLead = seconds - chained;
      unfusedChained += chained;
    }
  if (unfused.launches == 0) {
    unfused = fused;  // a copy group: unfused it is the same copy
    unfusedSeconds = predictSeconds(unfused, p);
    unfusedChained = std::max(unfusedSeconds - unfused.launches * p.launchSeconds,
                              unfused.launches * p.chainedLaunchSeconds);
    unfusedLead = unfusedSeconds - unfusedChained;
  }
  fusion->setAttr("name", b.getStringAttr(kernelName(index, group)));
  fusion->setAttr("nodes", nodeNames(b, group));
  fusion->setAttr("domain", b.getDenseI64ArrayAttr(s.domain));
  if (!s.reducedAxes.empty())
    fusion->setAttr("reduced_axes", b.getDenseI64ArrayAttr(s.reducedAxes));
  fusion->setAttr("bytes_fused", b.getI64IntegerAttr(fused.bytes));
  fusion->setAttr("bytes_unfused", b.getI64IntegerAttr(unfused.bytes));
  fusion->setAttr("flops", b.getI64IntegerAttr(fused.flops + fused.tensorFlops));
  fusion->setAttr("launches_unfused", b.getI64IntegerAttr(unfused.launches));
  fusion->setAttr("predicted_us", b.getF64FloatAttr(predictSeconds(fused, p) * 1e6));
  fusion->setAttr("unfused_us", b.getF64FloatAttr(unfusedSeconds * 1e6));
  if (p.chainedLaunchSeconds > 0) {
    fusion->setAttr("unfused_chained_us", b.getF64FloatAttr(unfusedChained * 1e6));
    fusion->setAttr("unfused_lead_us", b.getF64FloatAttr(unfusedLead * 1e6));
  }
  // A collective runs on NCCL: its time is the link's.
  if (s.kind == GroupKind::Collective) {
    fusion.setFamily(KernelFamily::Collective);
    fusion->setAttr("predicted_us",
                    b.getF64FloatAttr(predictSeconds(fused, p, KernelFamily::Collective) * 1e6));
    return;
  }
  // An attention group runs on the attention family, the only one that
  // streams its softmax.
  if (s.kind == GroupKind::Attention) {
    fusion.setFamily(KernelFamily::Attention);
    std::string why;
    std::optional<AttentionMatch> m = matchAttention(matmulsOf(group).back(), why);
    double seconds = m ? families::attentionSeconds(*m, p)
                       : predictSeconds(fused, p, KernelFamily::Attention);
    fusion->setAttr("predicted_us", b.getF64FloatAttr(seconds * 1e6));
    return;
  }
  // Streamed row statistics run on their own family (the portable GEMM with
  // a statistics epilogue).
  if (s.kind == GroupKind::StreamedRows) {
    fusion.setFamily(KernelFamily::StreamedRows);
    if (std::optional<RowStatsMatch> m = rowStatsAmong(group))
      fusion->setAttr("predicted_us",
                      b.getF64FloatAttr(families::rowStatsSeconds(*m, fused, p) * 1e6));
    return;
  }
  // A matmul group runs as the planner chose (MatmulPaths.cpp; cuBLASLt
  // under --no-fuse): that is its kernel family.
  for (Operation *op : group)
    if (isa<MatmulOp>(op)) {
      if (auto alt = op->getAttrOfType<StringAttr>("fusec.gemm_alternatives"))
        fusion->setAttr("gemm_alternatives", alt);
      fusion.setFamily(chosenGemmPath(op));
      fusion->setAttr("predicted_us",
                      b.getF64FloatAttr(predictSeconds(fused, p, chosenGemmPath(op)) * 1e6));
    }
}

/// With `onlyUse`, only that use is redirected to the group's result (copies of
/// graph outputs); otherwise every use outside the group is.
LogicalResult outlineOne(func::FuncOp func, ArrayRef<Operation *> group,
                         const DeviceProfile &profile, size_t index,
                         OpOperand *onlyUse = nullptr) {
  GroupSchedule schedule;
  std::string why;
  std::vector<Operation *> compute;
  for (Operation *op : group)
    if (!isView(op) && !isGenerator(op))
      compute.push_back(op);
  if (!compute.empty() && !classifyGroup(compute, schedule, why))
    return group.front()->emitError("internal error: cannot schedule group: ") << why;
  std::vector<Operation *> ops = withFeeders(group);
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  llvm::SetVector<Value> inputs, outputs;
  for (Operation *op : ops)
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (!def || !members.count(def))
        inputs.insert(v);
    }
  for (Operation *op : group)
    for (Value r : op->getResults())
      if (onlyUse || usedOutside(r, members))
        outputs.insert(r);
  if (compute.empty()) {
    // A copy group: its domain is the shape of what it materializes.
    ArrayRef<int64_t> d = shapeOf(group.back()->getResult(0));
    schedule.domain.assign(d.begin(), d.end());
  }

  OpBuilder b(group.back());
  b.setInsertionPointAfter(group.back());
  SmallVector<Type> resultTypes;
  for (Value v : outputs)
    resultTypes.push_back(v.getType());
  auto fusion = b.create<FusionOp>(group.back()->getLoc(), resultTypes,
                                   inputs.getArrayRef(), groupKindName(schedule.kind),
                                   /*family=*/KernelFamilyAttr());
  Block *body = new Block();
  fusion.getBody().push_back(body);
  IRMapping map;
  for (Value v : inputs)
    map.map(v, body->addArgument(v.getType(), v.getLoc()));
  OpBuilder inner = OpBuilder::atBlockEnd(body);
  for (Operation *op : ops)
    inner.clone(*op, map);
  SmallVector<Value> yielded;
  for (Value v : outputs)
    yielded.push_back(map.lookup(v));
  inner.create<YieldOp>(fusion.getLoc(), yielded);
  annotate(fusion, group, schedule, profile, index);

  for (auto [out, r] : llvm::zip(outputs, fusion.getResults())) {
    Value v = out;
    v.replaceUsesWithIf(r, [&](OpOperand &use) {
      return onlyUse ? &use == onlyUse : !llvm::is_contained(ops, use.getOwner());
    });
  }
  for (auto it = group.rbegin(); it != group.rend(); ++it)
    if ((*it)->use_empty())
      (*it)->erase();
  return success();
}

/// Erases what nothing uses any more: views and generators cloned into the
/// groups, and group members that a view outside the group still read when
/// their group was outlined (a concat whose reshape feeds the next op).
void eraseDeadFeeders(func::FuncOp func) {
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<Operation *> dead;
    for (Operation &op : func.getBody().front())
      if (!isa<FusionOp>(op) && !op.hasTrait<mlir::OpTrait::IsTerminator>() && op.use_empty())
        dead.push_back(&op);
    for (Operation *op : dead)
      op->erase();
    changed = !dead.empty();
  }
}

} // namespace

/// Matmul operands that a library cannot read in place (see
/// matmulOperandLayout) are materialized by a copy group first; so are the
/// attention kernel's, but for K and V it reads through a repeat or in
/// pieces (AttentionOperand).
LogicalResult materializeMatmulOperands(func::FuncOp func, MatmulOp mm,
                                        const DeviceProfile &profile, size_t &index,
                                        const std::optional<AttentionMatch> &streamed) {
  std::vector<int64_t> batch = matmulBatchShape(mm);
  for (OpOperand &operand : mm->getOpOperands()) {
    Value v = operand.get();
    char as = operand.getOperandNumber() == 0 ? 'r' : 'c';
    // An operand computed from indices or a fill (an iota, a constant) is
    // in no buffer: it is written first, like a layout no view reads.
    Operation *source = viewSource(v).getDefiningOp();
    if (matmulOperandLayout(v, batch, as) && !(source && isGenerator(source)))
      continue;
    if (streamed && as == 'c' &&
        ((mm == streamed->scores && streamed->kIn) || (mm == streamed->output && streamed->vIn)))
      continue;
    // Materialize the operand with the result's batch dims spelled out: a copy
    // that reads any view chain and repeats broadcast batches.
    ArrayRef<int64_t> s = shapeOf(v);
    std::vector<int64_t> target = s.size() == 1 ? std::vector<int64_t>{} : batch;
    target.insert(target.end(), s.end() - std::min<size_t>(2, s.size()), s.end());
    OpBuilder b(mm);
    auto expand = b.create<BroadcastToOp>(
        mm.getLoc(), RankedTensorType::get(target, getElementTypeOrSelf(v.getType())), v);
    operand.set(expand.getResult());
    OpGroup copy{expand};
    if (failed(outlineOne(func, copy, profile, index++, &operand)))
      return failure();
  }
  return success();
}

/// NCCL reads a collective's operand as one contiguous buffer: an operand
/// that is a strided view (a transpose, a slice, a broadcast) or a fill is
/// written out by a copy group first; a reshape of a buffer is that buffer.
LogicalResult materializeCollectiveOperand(func::FuncOp func, Operation *collective,
                                           const DeviceProfile &profile, size_t &index) {
  OpOperand &operand = collective->getOpOperand(0);
  Value v = operand.get();
  while (auto r = v.getDefiningOp<ReshapeOp>())
    v = r.getInput();
  Operation *def = v.getDefiningOp();
  if (!def || !(isView(def) || isGenerator(def)))
    return success();
  OpBuilder b(collective);
  auto copy = b.create<BroadcastToOp>(collective->getLoc(), operand.get().getType(), operand.get());
  operand.set(copy.getResult());
  OpGroup group{copy};
  return outlineOne(func, group, profile, index++, &operand);
}

LogicalResult outlineGroups(func::FuncOp func, const std::vector<OpGroup> &groups,
                            const DeviceProfile &profile) {
  size_t index = 0;
  for (const OpGroup &g : groups) {
    for (Operation *op : g)
      if (isCollective(op) && failed(materializeCollectiveOperand(func, op, profile, index)))
        return failure();
    std::optional<AttentionMatch> streamed;
    if (std::string why; isAttentionGroup(g))
      streamed = matchAttention(matmulsOf(g).back(), why);
    for (Operation *op : g)
      if (auto mm = dyn_cast<MatmulOp>(op))
        if (failed(materializeMatmulOperands(func, mm, profile, index, streamed)))
          return failure();
    // An attention kernel writes its output through the transpose that
    // alone reads it: the transpose is the group's result.
    OpGroup members = g;
    if (streamed && streamed->outTranspose)
      members.push_back(streamed->outTranspose);
    if (failed(outlineOne(func, members, profile, index++)))
      return failure();
  }
  // Graph outputs that no kernel writes (an input, a view, a constant) are copied.
  Operation *ret = func.getBody().front().getTerminator();
  for (OpOperand &operand : ret->getOpOperands()) {
    Value v = operand.get();
    if (v.getDefiningOp<FusionOp>())
      continue;
    OpBuilder b(ret);
    Operation *identity = nullptr;
    if (!v.getDefiningOp()) {
      // Materialize an input through a reshape to its own shape: a copy.
      identity = b.create<ReshapeOp>(ret->getLoc(), v.getType(), v);
      operand.set(identity->getResult(0));
    } else {
      identity = v.getDefiningOp();
    }
    OpGroup copy{identity};
    if (failed(outlineOne(func, copy, profile, index++, &operand)))
      return failure();
  }
  eraseDeadFeeders(func);
  if (!sortTopologically(&func.getBody().front()))
    return func.emitError("internal error: fused groups form a cycle");
  return success();
}

} // namespace fusec
