//===- PlanDesc.h - an executable plan, as data ---------------------------===//
//
// What the compiler hands the runtime: buffers (graph inputs, graph outputs,
// temporaries placed in one arena by liveness) and steps (generated kernels,
// library matmuls, copies), each with the cost the compiler predicted. Plain
// data: no MLIR, so a plan can be built, printed, saved and run apart.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/support/DType.h"
#include "compiler/plan/MatmulDesc.h"
#include "compiler/plan/KernelLaunch.h"
#include "compiler/plan/PlanPadding.h"
#include "compiler/plan/TensorSpec.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fusec {

struct PlanBuffer {
  enum class Kind { Input, Output, Temp };
  Kind kind = Kind::Temp;
  int index = -1;  ///< graph input/output number (Input/Output)
  TensorSpec tensor;
  int64_t arenaOffset = -1;  ///< Temp: byte offset in the arena
};

/// What the cost model said about a step: `fusec explain` and `fusec bench` print it.
struct StepCost {
  std::vector<std::string> nodes;  ///< graph nodes covered
  std::vector<std::string> ops;    ///< primitive ops covered
  int64_t bytesFused = 0, bytesUnfused = 0, flops = 0;
  int launchesUnfused = 0;
  double predictedUs = 0, unfusedUs = 0;
};

struct PlanKernel : KernelLaunch {
  std::vector<int> args;  ///< buffer ids: the group's inputs, then its outputs
  /// How many of args, from the front, are inputs (a kernel sharing a
  /// launch: its first part's; such a kernel is not joined again).
  size_t inputs = 0;
};

struct PlanMatmul {
  MatmulDesc desc;
  int a = -1, b = -1, c = -1;          ///< buffer ids (c: the result)
  int64_t aOffset = 0, bOffset = 0;    ///< bytes into the a and b buffers
  /// cuBLASLt's own epilogue: the residual read as its C (desc.beta = 1) and
  /// the bias vector (desc.biasEpilogue); -1 when not used.
  int residual = -1, bias = -1;
  int64_t residualOffset = 0, biasOffset = 0;  ///< bytes into those buffers
  /// Which usable result of cuBLASLt's heuristic runs it (0: its first
  /// choice; `fusec bench --autotune` times others, keyed by tuningKey).
  int algoRank = 0;
  std::string tuningKey;  ///< matmulTuningKey(desc, arch)
};

struct PlanCopy {
  int src = -1, dst = -1;
};

/// Where the ranks of a split program meet (fusec.all_reduce and the
/// others): NCCL's call on the program's stream. `src` holds this rank's
/// tensor, `dst` receives the result (both contiguous, row-major).
///
/// A kernel step may begin with an all_reduce of one of its inputs (a row
/// kernel: families/CollectiveStep.h, reducedFirstStep): its `collective`
/// then names that buffer (src = dst) with `peer` set, and the kernel takes
/// the ranks' regions as its last parameter.
struct PlanCollective {
  std::string op;      ///< "all_reduce", "all_gather" or "reduce_scatter"
  std::string reduce;  ///< all_reduce: "sum", "max" or "min"; else "sum"
  int64_t axis = 0;    ///< all_gather, reduce_scatter: the dim joined or cut
  int ranks = 1;
  int src = -1, dst = -1;
  /// Run by fusec's one-shot kernel over peer memory (the step's kernel;
  /// plan/PeerRegion.h) instead of NCCL, where the ranks reach each other's
  /// memory; through NCCL where they do not.
  bool peer = false;
};

struct PlanStep {
  enum class Kind { Kernel, Matmul, Copy, Collective };
  Kind kind = Kind::Kernel;
  std::string name;
  PlanKernel kernel;
  PlanMatmul matmul;
  PlanCopy copy;
  PlanCollective collective;
  StepCost cost;
};

struct PlanDesc {
  std::string graphName;
  std::string device;  ///< device profile the plan was built for
  std::string arch;    ///< NVRTC target ("sm_90a")
  bool fused = true;
  /// On sm_90+, each kernel is launched as the previous kernel's last blocks
  /// exit, before that grid has completed (programmatic dependent launch): its
  /// launch and block set-up overlap the other's completion, and it waits in
  /// fz_after_prior() until the other's writes are visible. False: each
  /// launch waits for the previous step to complete.
  bool overlapLaunches = true;
  std::vector<TensorSpec> inputs, outputs;
  std::vector<double> inputScales;  ///< scale of random test values per input (1 by default)
  std::vector<PlanBuffer> buffers;
  std::vector<PlanStep> steps;
  /// Kernel steps joined into one launch (shareLaunches), for explain:
  /// "k2_matmul + k3_matmul: ...".
  std::vector<std::string> sharedLaunches;
  /// What the compile ignored and the user should hear of: GEMM tuning
  /// entries that do not apply (file and entry named).
  std::vector<std::string> warnings;
  /// What those joins are predicted to save, us: for each pair, the two
  /// kernels' predictions less the joined kernel's (explain's whole graph).
  double sharedLaunchSavedUs = 0;
  int64_t arenaBytes = 0;
  int64_t workspaceBytes = 0;  ///< cuBLASLt workspace (0 without matmuls)
  /// The ranks the program is split over (tensor parallel; 1: one GPU),
  /// and per graph input and output the dim it is split along on them (-1:
  /// whole on every rank; empty for a program on one GPU). `inputs` and
  /// `outputs` hold one rank's shapes.
  int ranks = 1;
  std::vector<int64_t> inputShards, outputShards;
  /// Device memory a stream needs to lay out the blocks of an all_gather or
  /// reduce_scatter along a dim with elements before it (NCCL joins and
  /// cuts whole buffers): the largest such collective's whole tensor.
  int64_t collectiveScratchBytes = 0;
  /// A plan compiled at padded sizes (Options::maxSizes, `--max`): the
  /// sizes it is compiled at and their bounds (empty for a plan at fixed
  /// sizes), and how its calls pass and get tensors (compiler/plan/PlanPadding.h).
  SizeMap paddedAt, sizeBounds;
  PaddedSignature padding;
  bool padded() const { return padding.padded(); }
};

/// The bytes of `c` laid out block by block around NCCL's call, 0 where its
/// blocks are whole buffers already (an all_reduce, or a dim with nothing
/// before it): the whole tensor of an all_gather or reduce_scatter whose
/// dim has elements before it.
inline int64_t collectiveScratchBytes(const PlanCollective &c, const TensorSpec &in,
                                      const TensorSpec &out) {
  if (c.op == "all_reduce")
    return 0;
  int64_t outer = 1;
  for (int64_t d = 0; d < c.axis && d < int64_t(in.shape.size()); ++d)
    outer *= in.shape[size_t(d)];
  if (outer <= 1)
    return 0;
  return c.op == "all_gather" ? out.bytes() : in.bytes();
}

/// What runs a step, as explain, bench and the API name it: a kernel's
/// family (and the all-reduce it begins with), "matmul (cuBLASLt)",
/// "all_reduce (NCCL)" and the other collectives, or "copy". `fellBack`:
/// the ranks did not reach each other's memory, and NCCL ran the one-shot
/// all-reduces (Executable::peerFallback).
inline std::string stepRunner(const PlanStep &s, bool fellBack = false) {
  const bool oneShot = s.collective.peer && !fellBack;
  switch (s.kind) {
  case PlanStep::Kind::Kernel:
    if (!s.collective.peer)
      return s.kernel.family;
    return s.kernel.family + (oneShot ? " after a one-shot all_reduce" : " after an all_reduce (NCCL)");
  case PlanStep::Kind::Matmul: return "matmul (cuBLASLt)";
  case PlanStep::Kind::Collective:
    return s.collective.op + (oneShot ? " (one-shot, peer memory)" : " (NCCL)");
  case PlanStep::Kind::Copy: return "copy";
  }
  return "copy";
}

/// The plan's kernels (kernel steps, and collectives a one-shot kernel
/// runs: PlanCollective::peer) grouped by what NVRTC compiles
/// (KernelLaunch::source, equal for a model's repeated layers): `steps` are
/// those steps in plan order, `bodyOf[k]` the body of steps[k], and
/// `firstStep[b]` the first step with body b. Each body is compiled once.
struct KernelBodies {
  std::vector<size_t> steps, bodyOf, firstStep;
};
inline KernelBodies kernelBodies(const PlanDesc &plan) {
  KernelBodies b;
  std::map<std::string_view, size_t> index;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (plan.steps[i].kind != PlanStep::Kind::Kernel && !plan.steps[i].collective.peer)
      continue;
    auto [it, inserted] = index.try_emplace(plan.steps[i].kernel.source, b.firstStep.size());
    if (inserted)
      b.firstStep.push_back(i);
    b.bodyOf.push_back(it->second);
    b.steps.push_back(i);
  }
  return b;
}

/// Whether the runtime launches the plan's kernels beside the previous
/// kernel's tail: asked for (overlapLaunches), and built for sm_90 or newer,
/// where griddepcontrol exists and every generated kernel waits in
/// fz_after_prior(); kernels built for older targets lack the wait.
inline bool launchesOverlap(const PlanDesc &plan) {
  const std::string &a = plan.arch;
  if (!plan.overlapLaunches || a.compare(0, 3, "sm_") != 0)
    return false;
  int number = 0;
  size_t i = 3;
  for (; i < a.size() && a[i] >= '0' && a[i] <= '9' && i < 8; ++i)
    number = number * 10 + (a[i] - '0');
  return i > 3 && number >= 90;
}

/// Calls f(graph input number) for each of step i's early-read operands
/// (PlanKernel::readsBeforeWait) while it returns true; false as soon as one
/// is not a graph input or f returns false. True for a step that reads
/// nothing early.
template <typename F>
inline bool forEachEarlyReadInput(const PlanDesc &plan, size_t i, F &&f) {
  const PlanStep &s = plan.steps[i];
  if (s.kind != PlanStep::Kind::Kernel || s.kernel.readsBeforeWait < 0)
    return true;
  const PlanKernel &k = s.kernel;
  for (size_t t = size_t(k.readsBeforeWait); t < k.tensorMaps.size(); ++t) {
    size_t arg = size_t(k.tensorMaps[t].arg);
    if (arg >= k.args.size() || k.args[arg] < 0 || size_t(k.args[arg]) >= plan.buffers.size())
      return false;
    const PlanBuffer &b = plan.buffers[k.args[arg]];
    if (b.kind != PlanBuffer::Kind::Input || !f(size_t(b.index)))
      return false;
  }
  return true;
}

/// Whether step i is launched beside the previous kernel's tail. A kernel that
/// reads an operand before its wait (PlanKernel::readsBeforeWait) is, only
/// where that operand is a graph input and the step is not the plan's first:
/// no step of the plan writes a graph input, so only what ran before the plan
/// (the caller's own kernels in the stream) could, and the first step waits
/// for it the ordinary way. Every other step reads nothing before its wait.
inline bool stepOverlaps(const PlanDesc &plan, size_t i) {
  if (!launchesOverlap(plan) || i >= plan.steps.size())
    return false;
  const PlanStep &s = plan.steps[i];
  if (s.kind != PlanStep::Kind::Kernel || s.kernel.readsBeforeWait < 0)
    return true;
  if (i == 0 || size_t(s.kernel.readsBeforeWait) >= s.kernel.tensorMaps.size())
    return false;
  return forEachEarlyReadInput(plan, i, [](size_t) { return true; });
}

/// Whether step i's early-read operands (PlanKernel::readsBeforeWait), graph
/// inputs at `in`, lie apart from every output at `out` in this call: a
/// caller may pass an output over an input (a cache updated in place), which
/// a step of the plan then writes, and the step is then launched the
/// ordinary way. True for a step that reads nothing early.
/// `in` and `out` are the call's device pointers (CUdeviceptr): no copy on
/// the launch path.
inline bool earlyReadApart(const PlanDesc &plan, size_t i,
                           const std::vector<unsigned long long> &in,
                           const std::vector<unsigned long long> &out) {
  return forEachEarlyReadInput(plan, i, [&](size_t input) {
    if (input >= in.size())
      return false;
    unsigned long long lo = in[input], hi = lo + plan.inputs[input].bytes();
    for (size_t o = 0; o < out.size() && o < plan.outputs.size(); ++o)
      if (out[o] < hi && lo < out[o] + plan.outputs[o].bytes())
        return false;
    return true;
  });
}

} // namespace fusec
