//===- Grouping.h - the planner passes' groups (private to transforms/) ---===//
//
// The planner is a sequence of passes over groups of compute ops:
// -fusec-form-groups (FormGroups.cpp), -fusec-recompute-producers
// (RecomputeProducers.cpp), -fusec-choose-gemm-paths (MatmulPaths.cpp),
// -fusec-fuse-siblings (FuseSiblings.cpp) and -fusec-outline-groups
// (OutlineGroups.cpp). Between passes a group is the ops carrying one
// `fusec.group` index (GroupingIR.cpp reads and writes them); within a pass
// it is a Grouping: ops in groups, the merges tried and rejected.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/cost/CostModel.h"
#include "compiler/families/KernelFamily.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/schedule/GemmForms.h"
#include "compiler/schedule/StridedView.h"
#include "compiler/transforms/FusionOutlining.h"
#include "compiler/transforms/Passes.h"

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

class Grouping;

/// Reads the groups `func` records, runs `stage` on them and records the
/// result; fails with a diagnostic when `device` names no profile.
mlir::LogicalResult runGroupingStage(mlir::func::FuncOp func, const PlannerSettings &options,
                                     llvm::function_ref<void(Grouping &)> stage);

/// The groups `func` records, in index order; every compute op without an
/// index is a group of its own.
std::vector<OpGroup> recordedGroups(mlir::func::FuncOp func);

/// Removes the planner's marks from `root` and the ops it holds.
void dropGroupMarks(mlir::Operation *root);

class Grouping {
public:
  /// `ops`: the compute ops the merge walk visits, in program order (copies
  /// made by recomputation are members of groups but not visited).
  /// `matmulsClosed`: the matmul groups have chosen how they run.
  Grouping(std::vector<Operation *> ops, std::vector<OpGroup> initial, const DeviceProfile &p,
           std::string gemm, std::string arch, bool matmulsClosed)
      : ops(std::move(ops)), profile(p), gemmChoice(std::move(gemm)), arch(std::move(arch)),
        matmulsClosed(matmulsClosed), groups(std::move(initial)) {
    for (size_t g = 0; g < groups.size(); ++g)
      for (Operation *op : groups[g])
        groupOf[op] = g;
  }

  /// Merges producer-consumer chains (FormGroups.cpp).
  void run();
  /// Clones cheap producers into their readers' groups (RecomputeProducers.cpp).
  void recompute();
  /// Each matmul group's GEMM choice; splits what does not run whole (MatmulPaths.cpp).
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
  /// Writes the groups (their `fusec.group` indices) and appends this
  /// pass's decisions to the function's lists.
  void record(mlir::func::FuncOp func) const;
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
  bool matmulsClosed;
  llvm::DenseMap<Operation *, size_t> groupOf;
  std::vector<OpGroup> groups;  ///< emptied when merged away
};

/// A planner pass: reads the groups, runs `Derived::stage` on them, records
/// them. `GeneratedBase` is the pass's base from Passes.td (GroupingOptions).
template <class Derived, template <class> class GeneratedBase>
struct GroupingPass : GeneratedBase<Derived> {
  using GeneratedBase<Derived>::GeneratedBase;
  void runOnOperation() override {
    PlannerSettings o{this->device, this->copyBytesPerSec, this->smCount, this->arch, this->gemm};
    if (mlir::failed(runGroupingStage(this->getOperation(), o, [this](Grouping &g) {
          static_cast<Derived *>(this)->stage(g);
        })))
      this->signalPassFailure();
  }
};

} // namespace fusec::detail
