//===- RowScaledOperand.cpp - a normalized A in the dot-product kernel ----===//
#include "compiler/schedule/RowScaledOperand.h"
#include "compiler/schedule/GroupSchedule.h"
#include "compiler/cost/CostModel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <functional>

using namespace mlir;

namespace fusec {
namespace {
/// At most this many statistics a row: each is a register a row of A per
/// lane, beside the products' sums.
constexpr size_t kMaxRowReductions = 4;

llvm::ArrayRef<int64_t> reductionAxes(Operation *op) {
  return llvm::TypeSwitch<Operation *, llvm::ArrayRef<int64_t>>(op)
      .Case<SumOp, MeanOp, MaxOp, MinOp>([](auto r) { return r.getAxes(); })
      .Default([](Operation *) { return llvm::ArrayRef<int64_t>(); });
}

bool isRowReduction(Operation *op) { return isa<SumOp, MeanOp, MaxOp, MinOp>(op); }
} // namespace

std::optional<RowScaledOperand> rowScaledOperand(Operation *matmul,
                                                 llvm::ArrayRef<Operation *> prologue,
                                                 std::string &why) {
  why.clear();
  auto mm = dyn_cast<MatmulOp>(matmul);
  if (!mm || llvm::none_of(prologue, isRowReduction))
    return std::nullopt;
  llvm::SmallPtrSet<Operation *, 16> inPrologue(prologue.begin(), prologue.end());
  auto fail = [&](const std::string &w) -> std::optional<RowScaledOperand> {
    why = "a reduction in a matmul prologue scales the rows of A (an RMS norm) and nothing "
          "else: " + w;
    return std::nullopt;
  };
  llvm::ArrayRef<int64_t> a = shapeOf(mm.getLhs());
  if (a.size() != 2)
    return fail("A is not a matrix");
  const int64_t M = a[0], K = a[1];
  // The reductions reached from `v` inside the prologue (views included).
  auto reductionsUnder = [&](Value v) {
    llvm::SmallVector<Operation *> found;
    llvm::SmallPtrSet<Operation *, 16> seen;
    std::vector<Value> work{v};
    while (!work.empty()) {
      Operation *d = work.back().getDefiningOp();
      work.pop_back();
      if (!d || !seen.insert(d).second || (!isView(d) && !inPrologue.count(d)))
        continue;
      if (isRowReduction(d))
        found.push_back(d);
      work.insert(work.end(), d->operand_begin(), d->operand_end());
    }
    return found;
  };
  if (Operation *b = viewSource(mm.getRhs()).getDefiningOp(); b && inPrologue.count(b))
    return fail("the weights are read as they are, not computed");
  // A's factors: through mul ops and casts between float types.
  llvm::SmallVector<Value> factors;
  std::function<void(Value)> split = [&](Value v) {
    Operation *d = v.getDefiningOp();
    if (d && inPrologue.count(d)) {
      if (isa<MulOp>(d)) {
        split(d->getOperand(0));
        split(d->getOperand(1));
        return;
      }
      if (isa<CastOp>(d) && isFloat(dtypeOf(d->getOperand(0))) && isFloat(dtypeOf(v))) {
        split(d->getOperand(0));
        return;
      }
    }
    factors.push_back(v);
  };
  split(mm.getLhs());
  RowScaledOperand form;
  for (Value f : factors) {
    if (reductionsUnder(f).empty())
      continue;
    llvm::ArrayRef<int64_t> s = shapeOf(f);
    if (form.scale || (!s.empty() && s.back() != 1) || s.size() > 2 ||
        (s.size() == 2 && s[0] != 1 && s[0] != M))
      return fail("A is not a product of values read along K and one factor constant along "
                  "it that holds the reductions");
    form.scale = f;
  }
  for (Operation *op : prologue) {
    if (!isRowReduction(op))
      continue;
    Value x = op->getOperand(0);
    llvm::ArrayRef<int64_t> axes = reductionAxes(op);
    if (shapeOf(x) != a || axes.size() != 1 || axes[0] != 1)
      return fail(nodeLabel(op) + " does not reduce an [" + std::to_string(M) + ", " +
                  std::to_string(K) + "] value over its last dim");
    if (!reductionsUnder(x).empty())
      return fail(nodeLabel(op) + " reduces a value computed from another reduction (two "
                  "passes over the row)");
    form.reductions.push_back(op);
  }
  if (form.reductions.size() > kMaxRowReductions)
    return fail("more than " + std::to_string(kMaxRowReductions) + " reductions a row");
  return form;
}

} // namespace fusec
