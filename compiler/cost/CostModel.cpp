//===- CostModel.cpp - HBM bytes, flops and predicted time of op groups ---===//
#include "compiler/cost/CostModel.h"

#include "compiler/dialect/FusecDialect.h"
#include "compiler/shape/ShapeRules.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>

using namespace mlir;

namespace fusec {

int64_t tensorBytes(Value v) {
  return shape::numElements(shapeOf(v)) * dtypeBytes(dtypeOf(v));
}

bool isView(Operation *op) {
  return isa<ReshapeOp, TransposeOp, BroadcastToOp, SliceOp>(op);
}

bool isGenerator(Operation *op) { return isa<ConstantOp, IotaOp>(op); }

Value viewSource(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isView(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

int64_t readBytes(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return tensorBytes(v);
  if (isGenerator(def))
    return 0;
  if (isa<SliceOp>(def))
    return std::min(readBytes(def->getOperand(0)), tensorBytes(v));
  if (isView(def))
    return readBytes(def->getOperand(0));
  return tensorBytes(v);
}

/// What reading `v` costs for the ops `users` it feeds: only the rows a
/// gather picks where gathers are all that read it (an embedding table).
static int64_t readBytesFor(Value v, llvm::function_ref<bool(Operation *)> inGroup) {
  int64_t picked = 0;
  bool onlyGathered = true;
  for (Operation *user : v.getUsers()) {
    if (!inGroup(user))
      continue;
    auto g = dyn_cast<GatherOp>(user);
    if (!g || g.getData() != v) {
      onlyGathered = false;
      break;
    }
    picked += tensorBytes(g.getResult());
  }
  return onlyGathered && picked > 0 ? std::min(readBytes(v), picked) : readBytes(v);
}

double floorSeconds(const Cost &c, const DeviceProfile &p) {
  return static_cast<double>(c.bytes) / p.hbmBytesPerSec;
}

double rooflineSeconds(const Cost &c, const DeviceProfile &p, const KernelRates &r) {
  // Only a matmul streams at less than the copy rate; other groups reach it.
  double fraction = c.tensorFlops == 0 ? 1.0 : r.bandwidthFraction;
  double memory = floorSeconds(c, p) / fraction;
  double math = static_cast<double>(c.flops) / p.fp32FlopsPerSec +
                static_cast<double>(c.tensorFlops) / r.tensorFlopsPerSec;
  double seconds = std::max(memory, math) + r.epilogueSeconds + c.launches * p.launchSeconds;
  return std::max(seconds, r.minSeconds);
}

KernelRates libraryRates(const Cost &c, const DeviceProfile &p) {
  // H200, bf16, cuBLASLt's heuristic choice (bench/NOTES.md, "unaligned
  // outputs"): 4096 x 11007 x 4096 3499 us against 541 with N = 11008,
  // 4096 x 32001 x 4096 10921 against 1540, 8192 x 50257 x 768 6610
  // against 1010, 4096 x 4097 x 4096 1423; 4096 x 4100 x 4096 (8-byte rows)
  // 492.
  constexpr double kHalfAlignedShare = 0.4, kUnalignedShare = 0.14;
  KernelRates r{p.libraryBandwidthFraction, p.tensorFlopsPerSec};
  r.epilogueSeconds =
      (static_cast<double>(c.halfAlignedTensorFlops) * (1 / kHalfAlignedShare - 1) +
       static_cast<double>(c.unalignedTensorFlops) * (1 / kUnalignedShare - 1)) /
      p.tensorFlopsPerSec;
  return r;
}

double predictSeconds(const Cost &c, const DeviceProfile &p) {
  return rooflineSeconds(c, p, libraryRates(c, p));
}

double afterProductsSeconds(const Cost &c, const DeviceProfile &p) {
  return static_cast<double>(c.epilogueBytes) / (0.5 * p.hbmBytesPerSec);
}

MatmulDims matmulDims(Operation *matmul) {
  auto mm = cast<MatmulOp>(matmul);
  ArrayRef<int64_t> r = shapeOf(mm.getResult());
  ArrayRef<int64_t> a = shapeOf(mm.getLhs());
  int64_t rows = a.size() >= 2 ? a[a.size() - 2] : 1;
  int64_t batch = shape::numElements(r) / std::max<int64_t>(1, rows * (r.empty() ? 1 : r.back()));
  return {rows, batch, a.empty() ? 1 : a.back()};
}

GemmPath libraryGemmPath(Operation *matmul) {
  MatmulDims d = matmulDims(matmul);
  return d.rows <= 8 && d.batch > 1 ? GemmPath::LibraryBatchedRows : GemmPath::Library;
}

GemmPath chosenGemmPath(Operation *matmul) {
  if (auto chosen = matmul->getAttrOfType<KernelFamilyAttr>("fusec.family"))
    return chosen.getValue();
  return libraryGemmPath(matmul);
}

void setChosenGemmPath(Operation *matmul, GemmPath path) {
  matmul->setAttr("fusec.family", KernelFamilyAttr::get(matmul->getContext(), path));
}

Cost opFlops(Operation *op) {
  Cost c;
  if (isView(op) || isGenerator(op) || op->getNumResults() == 0)
    return c;
  if (auto mm = dyn_cast<MatmulOp>(op)) {
    ArrayRef<int64_t> a = shapeOf(mm.getLhs());
    int64_t k = a.back();
    c.tensorFlops = 2 * shape::numElements(shapeOf(mm.getResult())) * k;
    ArrayRef<int64_t> r = shapeOf(mm.getResult());
    const int64_t rowBytes = (r.empty() ? 1 : r.back()) * dtypeBytes(dtypeOf(mm.getResult()));
    if (rowBytes % 16 != 0)
      (rowBytes % 8 == 0 ? c.halfAlignedTensorFlops : c.unalignedTensorFlops) = c.tensorFlops;
    return c;
  }
  if (isCollective(op)) {
    const int64_t n = op->getAttrOfType<IntegerAttr>("ranks").getInt();
    const int64_t in = shape::numElements(shapeOf(op->getOperand(0))) *
                       dtypeBytes(dtypeOf(op->getOperand(0)));
    if (isa<AllReduceOp>(op)) {
      c.linkBytes = 2 * (n - 1) * in / n;
      if (isFloat(dtypeOf(op->getOperand(0)))) {
        c.allReduceBytes = in;
        c.allReduceRanks = int(n);
      }
    }
    else if (isa<AllGatherOp>(op))
      c.linkBytes = (n - 1) * in;
    else
      c.linkBytes = (n - 1) * in / n;
    return c;
  }
  // A reduction does one op per input element; an elementwise op one per output.
  if (isa<SumOp, MeanOp, MaxOp, MinOp>(op))
    c.flops = shape::numElements(shapeOf(op->getOperand(0)));
  else
    c.flops = shape::numElements(shapeOf(op->getResult(0)));
  return c;
}

Cost unfusedCost(Operation *op) {
  if (isView(op) || isGenerator(op))
    return {};
  Cost c = opFlops(op);
  llvm::SmallPtrSet<Value, 4> seen;
  for (Value v : op->getOperands())
    if (seen.insert(viewSource(v)).second)
      c.bytes += readBytesFor(v, [&](Operation *user) { return user == op; });
  for (Value r : op->getResults())
    c.bytes += tensorBytes(r);
  c.launches = 1;
  return c;
}

SmallVector<Operation *> matmulPrologue(Operation *matmul, ArrayRef<Operation *> members) {
  llvm::SmallPtrSet<Operation *, 16> memberSet(members.begin(), members.end()), found;
  std::vector<Value> work(matmul->operand_begin(), matmul->operand_end());
  while (!work.empty()) {
    Operation *def = work.back().getDefiningOp();
    work.pop_back();
    if (!def || isGenerator(def) || (!isView(def) && !memberSet.count(def)))
      continue;
    if (!isView(def) && !found.insert(def).second)
      continue;
    work.insert(work.end(), def->operand_begin(), def->operand_end());
  }
  SmallVector<Operation *> prologue;
  for (Operation *op : members)
    if (found.count(op))
      prologue.push_back(op);
  return prologue;
}

bool usedOutside(Value v, const llvm::SmallPtrSetImpl<Operation *> &members) {
  for (Operation *user : v.getUsers()) {
    if (members.count(user))
      continue;
    if (!isView(user) || usedOutside(user->getResult(0), members))
      return true;
  }
  return false;
}

bool usedOutside(Value v, ArrayRef<Operation *> members) {
  llvm::SmallPtrSet<Operation *, 16> set(members.begin(), members.end());
  return usedOutside(v, set);
}

void groupBoundary(ArrayRef<Operation *> ops, llvm::SetVector<Value> &inputs,
                   llvm::SetVector<Value> &outputs) {
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  for (Operation *op : ops) {
    for (Value v : op->getOperands()) {
      Operation *def = viewSource(v).getDefiningOp();
      if (def && (members.count(def) || isGenerator(def)))
        continue;
      inputs.insert(v);
    }
    // By the set: the group's cost is asked for at every merge the planner
    // tries, and a scan of the group per use would make planning cubic in its
    // size.
    for (Value r : op->getResults())
      if (usedOutside(r, members))
        outputs.insert(r);
  }
}

Cost groupCost(ArrayRef<Operation *> ops) {
  llvm::SetVector<Value> inputs, outputs;
  groupBoundary(ops, inputs, outputs);
  Cost c;
  llvm::SmallPtrSet<Value, 8> seen;
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  for (Value v : inputs)
    if (seen.insert(viewSource(v)).second)
      c.bytes += readBytesFor(v, [&](Operation *user) { return members.contains(user); });
  for (Value v : outputs)
    c.bytes += tensorBytes(v);
  for (Operation *op : ops)
    c += opFlops(op);
  llvm::SmallPtrSet<Value, 8> operands, prologueInputs;
  for (Operation *op : ops)
    if (auto mm = dyn_cast<MatmulOp>(op)) {
      operands.insert(viewSource(mm.getLhs()));
      operands.insert(viewSource(mm.getRhs()));
      SmallVector<Operation *> prologue = matmulPrologue(op, ops);
      for (Operation *p : prologue)
        for (Value v : p->getOperands())
          prologueInputs.insert(viewSource(v));
      auto computed = [&](Value v) {
        return llvm::is_contained(prologue, viewSource(v).getDefiningOp());
      };
      auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
      ArrayRef<int64_t> a = shapeOf(mm.getLhs());
      ArrayRef<int64_t> bShape = shapeOf(mm.getRhs());
      int64_t m = a.size() >= 2 ? a[a.size() - 2] : 1, n = bShape.size() >= 2 ? bShape.back() : 1;
      int64_t aElems = shape::numElements(a), bElems = shape::numElements(bShape);
      if (computed(mm.getLhs())) {
        c.prologueTileElements += aElems * ceilDiv(n, 64);
        bool staged = m * (a.empty() ? 1 : a.back()) * 2 <= kGemvStageBytes;
        c.prologueGemvElements += aElems * (staged ? ceilDiv(n, 8) : n);
      }
      if (computed(mm.getRhs())) {
        c.prologueTileElements += bElems * ceilDiv(m, 64);
        c.prologueGemvElements += bElems;
      }
    }
  if (!operands.empty()) {
    auto sixteenBit = [](Value v) { return isHalfFloat(dtypeOf(v)); };
    // The wgmma kernel stores one 16-bit 2-D output with 16-byte rows through
    // the TMA, and loads one 16-bit input of its shape the same way.
    std::optional<Value> stored;
    if (outputs.size() == 1 && sixteenBit(outputs[0]) && shapeOf(outputs[0]).size() == 2 &&
        shapeOf(outputs[0])[1] % 8 == 0)
      stored = outputs[0];
    llvm::SmallPtrSet<Value, 8> counted;
    for (Value v : inputs)  // read by the prologue, not after the products
      if (prologueInputs.count(viewSource(v)))
        counted.insert(viewSource(v));
    for (Value v : inputs)
      if (!operands.count(viewSource(v)) && counted.insert(viewSource(v)).second) {
        c.epilogueBytes += readBytes(v);
        if (stored && c.tmaEpilogueBytes == 0 && sixteenBit(v) && v == viewSource(v) &&
            shapeOf(v) == shapeOf(*stored))
          c.tmaEpilogueBytes = readBytes(v);
      }
  }
  c.launches = 1;
  return c;
}

} // namespace fusec
