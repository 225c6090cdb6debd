//===- Grouping.h - fuse-vertical's grouping state (private to transforms/) -===//
//
// The greedy grouping FuseVertical.cpp runs: ops in groups, the merges tried
// and rejected, each matmul group's GEMM choice. The sibling-matmul merges
// (one kernel for matmuls that read the same A) are in FuseSiblings.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/cost/CostModel.h"
#include "compiler/families/KernelFamily.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/schedule/StridedView.h"
#include "compiler/transforms/FusionOutlining.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <string>
#include <vector>

namespace fusec::detail {
using mlir::Operation;
using mlir::OpOperand;
using mlir::Value;
using llvm::SmallVector;
using llvm::isa;

/// The ops of two groups as one, in program order.
inline OpGroup united(const OpGroup &a, const OpGroup &b) {
  OpGroup merged = a;
  merged.insert(merged.end(), b.begin(), b.end());
  std::sort(merged.begin(), merged.end(),
            [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  return merged;
}

/// The compute op behind `v`, looking through views; null for inputs and generators.
inline Operation *producerOf(Value v) {
  Operation *def = viewSource(v).getDefiningOp();
  return def && !isGenerator(def) ? def : nullptr;
}

class Grouping {
public:
  Grouping(std::vector<Operation *> ops, const DeviceProfile &p, std::string gemm,
           std::string arch)
      : ops(std::move(ops)), profile(p), gemmChoice(std::move(gemm)), arch(std::move(arch)) {
    for (Operation *op : this->ops) {
      groupOf[op] = groups.size();
      groups.push_back({op});
    }
  }

  void run();
  void recompute();
  void chooseMatmulPaths();
  /// Sibling decode matmuls that read the same A share one kernel.
  void mergeSiblings();
  void mergeTensorCoreSiblings();  ///< 9-64 row products of one A, all at once
  /// Sibling products written as they are (Q/K/V, more than 8 rows) share
  /// one wgmma kernel over their tiles on Hopper.
  void mergeSideBySide();
  /// Each pair of groups g < h that `pick` takes (returning a matmul of each)
  /// whose picked matmuls read the same A, in order; `tryJoin` merges h into
  /// g or records why not (the GEMV and side-by-side merges).
  void forSiblingPairs(llvm::function_ref<Operation *(size_t)> pick,
                       llvm::function_ref<void(size_t, size_t, Operation *, Operation *)> tryJoin);
  /// Groups `others` join group g as `merged` (all their ops), marked as
  /// siblings.
  void joinSiblings(size_t g, llvm::ArrayRef<size_t> others, OpGroup merged,
                    double gemvApart = -1);
  llvm::DenseMap<size_t, double> gemvApart;  ///< see markSiblings
  std::vector<OpGroup> result() const;
  /// A merge the planner considered: the groups' last ops, why (a code and
  /// the sentence explain shows) and, where the cost model decided, the
  /// predicted times of the two ways.
  struct Decision {
    std::string producer, consumer, reason;
    DecisionReason code = DecisionReason::NoKernelFamily;
    double fusedUs = -1, apartUs = -1;
  };
  std::vector<Decision> rejections, recomputations;

private:
  bool tryMerge(size_t producer, size_t consumer, Operation *at);
  /// `gemvApart`: the predicted time of a GEMV sibling group's parts as
  /// kernels of their own (mergeSiblings), shown beside the group's; < 0: none.
  bool markSiblings(const OpGroup &g, double gemvApart = -1);
  bool tryRecompute(Operation *producer, OpOperand &use, size_t consumer);
  bool createsCycle(const OpGroup &merged) const;
  /// What a split-off epilogue costs: its own kernel, or, where one group that
  /// is no matmul reads all it writes and could take it in, only what it adds
  /// to that group (a mask or scale ahead of a softmax).
  double splitEpilogueSeconds(const OpGroup &epilogue, bool &joins) const;
  double seconds(const OpGroup &g) const {
    return g.empty() ? 0.0 : predictSeconds(groupCost(g), profile);
  }

  std::vector<Operation *> ops;
  const DeviceProfile &profile;
  std::string gemmChoice;  ///< auto, fusec, cublaslt
  std::string arch;        ///< the kernels' target: which fusec GEMM kernels exist
  /// After the GEMM choice, matmul groups take no more ops (a second greedy
  /// round only merges what the split-off epilogues can join).
  bool matmulsClosed = false;
  llvm::DenseMap<Operation *, size_t> groupOf;
  std::vector<OpGroup> groups;  ///< emptied when merged away
};

/// The group's matmuls, in program order.
inline SmallVector<Operation *> matmulsOf(const OpGroup &g) {
  SmallVector<Operation *> mms;
  for (Operation *op : g)
    if (isa<MatmulOp>(op))
      mms.push_back(op);
  return mms;
}

/// Whether the group is nothing but its products (and views of its inputs):
/// they are its results as they are.
inline bool onlyProducts(const OpGroup &g) {
  return llvm::all_of(g, [](Operation *op) { return isa<MatmulOp>(op) || isView(op); });
}

/// Sibling products that are not decode-sized and are the group's only ops:
/// the wgmma kernel over their tiles side by side (Q/K/V).
inline bool isSideBySide(const OpGroup &g) {
  SmallVector<Operation *> mms = matmulsOf(g);
  return mms.size() >= 2 && !llvm::all_of(mms, [](Operation *op) { return gemvApplies(op); }) &&
         onlyProducts(g);
}

/// How the dot-product kernel runs a group of sibling matmuls of 1-64 rows:
/// on sm_90a, products that are the group's results as they are (Q/K/V)
/// take the TMA + wgmma kernel side by side where wgmmaGemvPartsRows
/// applies (GemmLaunch.cpp), else the dot-product kernel's path.
inline GemmPath siblingGemvPath(const OpGroup &g, const std::string &arch, int smCount) {
  SmallVector<Operation *> mms = matmulsOf(g);
  if (mms.empty())
    return GemmPath::FusecGemv;
  if (mms.size() >= 2 && onlyProducts(g) && gemvPath(mms.front()) == GemmPath::FusecTensorGemv &&
      wgmmaGemvPartsRows(mms, arch, smCount) > 0)
    return GemmPath::FusecWgmmaGemv;
  return gemvPath(mms.front());
}

/// A group of two sibling products that are not decode-sized, joined in an
/// epilogue: the dual wgmma product (classifySiblings took it).
inline bool isDual(const OpGroup &g) {
  SmallVector<Operation *> mms = matmulsOf(g);
  return mms.size() == 2 && !llvm::all_of(mms, [](Operation *op) { return gemvApplies(op); }) &&
         !isSideBySide(g);
}

} // namespace fusec::detail
