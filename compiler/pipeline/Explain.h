//===- Explain.h - what fusion decided, and what it predicts --------------===//
//
// Reads a fused module (fusec.fusion ops with their cost attributes and the
// function's fusec.rejected and fusec.recomputed lists) into plain data for `fusec explain`: per
// kernel the nodes it covers, HBM bytes and trips unfused vs fused, launches
// saved and the predicted times; totals; and every merge that was rejected.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/cost/DeviceProfile.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fusec {

struct ExplainedKernel {
  std::string name, kind;
  std::vector<std::string> nodes, ops;
  int64_t bytesUnfused = 0, bytesFused = 0;
  int64_t tripBytes = 0;  ///< bytes of one full-tensor pass: the group's largest tensor
  int launchesUnfused = 0;
  double unfusedUs = 0, predictedUs = 0;
  /// Its ops as kernels in a chain of overlapped launches (the
  /// unfused_chained_us attribute; < 0: the profile has no overlap).
  double unfusedChainedUs = -1;
  /// What its first op pays beyond that where it starts the graph (its launch).
  double unfusedLeadUs = 0;
  /// The kernel family that runs it (#fusec.family), and the families asked
  /// before it with the reason each declined.
  std::string family;
  /// Run by a library (cuBLASLt, NCCL), launched the ordinary way.
  bool library = false;
  std::vector<std::pair<std::string, std::string>> familyRejections;
  /// Matmul groups: "fusec" or "cublaslt", and the predictions behind it.
  std::string gemm, gemmAlternatives;
  /// Attention groups: the score tensor the kernel streams instead of
  /// writing (its shape and bytes), and the share of its tiles computed
  /// (below 1 where a causal mask skips tiles).
  std::vector<int64_t> streamedShape;
  int64_t streamedBytes = 0;
  /// Streamed row statistics: the sums over the same columns that ride along
  /// (a target's logit picked: RowStatsMatch::picks).
  int picks = 0;
  double computedShare = 1;
  /// Collectives, and a row kernel that begins with an all-reduce
  /// (`reducedFirst`): bytes each rank sends over the GPU-to-GPU link (ring
  /// algorithms), and the op ("all_reduce of 4.1 KB").
  bool reducedFirst = false;
  int64_t linkBytes = 0;
  std::string collective;
  /// Run by the one-shot kernel over peer memory, which reads peerBytes
  /// from the other ranks (families/Collective.cpp), rather than NCCL.
  bool peer = false;
  int64_t peerBytes = 0;
  /// How the kernel runs (KernelLaunch::schedule: threads, blocks, tiles,
  /// splits), filled by the caller from the plan; empty for library calls.
  std::string schedule;
  double tripsUnfused() const { return tripBytes ? double(bytesUnfused) / tripBytes : 0; }
  double tripsFused() const { return tripBytes ? double(bytesFused) / tripBytes : 0; }
};

struct ExplainedEdge {
  std::string from, to;  ///< kernel names, or "input:<name>" / "output:<name>"
  int64_t bytes = 0;
};

/// A fusion decision about a producer and a consumer: a rejected merge, or an
/// intermediate recomputed in the consumer's kernel.
struct Decision {
  std::string producer, consumer, reason;
  std::string code;                   ///< #fusec.reason's name: not_faster, cycle, ...
  double fusedUs = -1, apartUs = -1;  ///< the two ways' predictions; < 0: not priced
};

struct Explanation {
  std::string graph;
  /// The sizes of the graph's named dims it was compiled for (--bind).
  std::map<std::string, int64_t> sizes;
  /// The padded sizes it was compiled at where some vary (--max), each
  /// serving every size up to it.
  std::map<std::string, int64_t> paddedSizes;
  DeviceProfile profile;
  /// The ranks the program is split over (tensor parallel; 1: one GPU),
  /// and the outputs each rank returns its block of: "k_new (dim 1)".
  int64_t ranks = 1;
  std::vector<std::string> splitOutputs;
  std::vector<ExplainedKernel> kernels;
  std::vector<ExplainedEdge> edges;
  std::vector<Decision> rejected, recomputed;
  /// Copy groups not run because their output is written in place.
  std::vector<std::string> inPlace;
  /// Kernels sharing one launch (PlanDesc::sharedLaunches; filled by the
  /// caller from the plan, since the module does not know them).
  std::vector<std::string> sharedLaunches;
  /// What sharing those launches saves (PlanDesc::sharedLaunchSavedUs):
  /// predictedUs() is the kernels' predictions less this.
  double sharedSavedUs = 0;
  /// Whether the plan's launches overlap (launchesOverlap, PlanDesc.h; filled
  /// by the caller): the totals then chain the kernels
  /// (DeviceProfile::chainedLaunchSeconds) instead of adding their launches.
  bool launchesOverlap = false;
  int64_t bytesUnfused() const;
  int64_t bytesFused() const;
  /// The whole graph's predicted times, its ops as kernels of their own and
  /// fused: the kernels' predictions added, or chained where launches overlap
  /// (the first launch paid, each later kernel the larger of its work and the
  /// chained launch).
  double unfusedUs() const;
  double predictedUs() const;
  bool chained() const;
  /// Launches of the fused plan: kernels, less one per shared launch.
  size_t launches() const { return kernels.size() - sharedLaunches.size(); }
  int launchesUnfused() const;
};

/// Explains a module after fuseModule (fused or --no-fuse).
Explanation explain(mlir::ModuleOp fused, const DeviceProfile &profile);

/// Renderings.
std::string explainText(const Explanation &e);
std::string explainJson(const Explanation &e);
std::string explainDot(const Explanation &e);

} // namespace fusec
