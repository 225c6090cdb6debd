//===- BenchTiming.h - CUDA-event timing of plans and of a copy -----------===//
#pragma once

#include "include/fusec/fusec.h"
#include "tools/fusec/GraphIO.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace fusec {
struct PlanStep;
}

namespace fusec::cli {

struct BenchSettings {
  int iters = 50, warmup = 5;
  uint64_t seed = 0;
  /// --inputs and --weights (prepareInputs' rules); none given: random inputs,
  /// a set per seed.
  TensorSources sources;
  bool perStep = true;     ///< also time each step alone
  /// Warm-up lasts at least this long as well as `warmup` runs: an H100
  /// under sustained tensor-core load crosses its power limit and the
  /// software cap lowers its clock (1980 -> 1590-1700 MHz) within about a
  /// second, so 50 runs right after a few warm-ups time the boost clock
  /// (docs/matmul.md, "Where it stands"). Timing every system after the
  /// same warm-up compares them in the state a long workload runs in.
  double warmupSeconds = 0.5;
  /// Autotuning: time only the steps of fusec's tunable GEMMs (a tuning key),
  /// after one untimed run of the whole plan that fills the intermediates
  /// with real values (what a GEMM multiplies changes its power, so its time
  /// under the cap). Every other time is reported as 0.
  bool tunedStepsOnly = false;
  /// Time the whole plan as CUDA graph replays (Executable::replay; each
  /// input set captured once) instead of launch by launch.
  bool cudaGraph = false;
};

/// A step `--autotune` tunes: a fusec GEMM kernel with a tuning key (sibling
/// GEMVs have one configuration and none), or a cuBLASLt matmul (which of its
/// heuristic's results runs).
bool tunableStep(const PlanStep &s);
/// Its tuning key (the tuning cache's key; empty for other steps).
std::string tuningKeyOf(const PlanStep &s);

struct BenchEnvironment {
  std::string deviceName;
  double copyBytesPerSec = 0;  ///< device-to-device copy, read + write
  int64_t l2Bytes = 0;
  int smCount = 0;
};

struct StepTiming {
  std::string name, family;
  std::vector<std::string> nodes;
  double bytes = 0, medianUs = 0, predictedUs = 0;
  /// The planner's prediction for the step (what `fusec explain` prints for
  /// it: path fractions and a launch included); predictedUs is its roofline.
  double plannerUs = 0;
  double flops = 0;  ///< tensor-core flops (matmul steps)
  /// What the step adds to the whole graph: steps 0..i run in a row less
  /// steps 0..i-1 (medians), launches overlapping as in the whole graph. Timed
  /// alone (medianUs) a step also pays the launch and ramp that the stream
  /// hides behind the step before it: a 786 KB add takes ~6 us alone and adds
  /// ~1 us in a row (docs/cost-model.md, "What `fusec bench` prints beside
  /// it"). The steps' values sum to the whole graph's time.
  double inGraphUs = 0;
  /// Sets of its graph inputs the step rotated through, timed alone: the
  /// plan's, or more copies of its own where those fit in L2 (0 untimed).
  int inputSets = 0;
};

struct PlanTiming {
  std::vector<StepTiming> steps;
  double medianUs = 0, predictedUs = 0, bytes = 0;
  double plannerUs = 0;  ///< fusec explain's prediction for the whole plan
  double hostUsPerLaunch = 0;
  double hostUsPerCall = 0;  ///< host time of one whole call (enqueue, or a replay)
  int inputSets = 1;
  double matmulPeak = 0;  ///< the profile's matmul rate, flop/s
  /// A split plan's one-shot all-reduces that ran through NCCL instead: why
  /// (Executable::peerFallback; empty where they ran as planned).
  std::string peerFallback;
};

/// Loads `program` on the GPU and measures the copy bandwidth there.
llvm::Expected<BenchEnvironment> measureEnvironment(Program &program);

/// Times the whole plan and each step alone (median of settings.iters runs).
/// Predictions use the measured copy bandwidth, so they are comparable.
llvm::Expected<PlanTiming> timePlan(Program &program, const BenchEnvironment &env,
                                    const BenchSettings &settings);

/// Times a program split over ranks (PlanDesc::ranks > 1) on GPUs
/// 0..ranks-1 of this machine, a thread a rank meeting the others through
/// its collectives, as `fusec run --ranks` runs it: every rank times the
/// same runs of its blocks of the same inputs, warmed up by count (the
/// collectives need every rank to make the same calls). Returns rank 0's
/// timing; `slowestUs`, the largest whole-plan median of any rank.
llvm::Expected<PlanTiming> timeSplitPlan(Program &program, const BenchEnvironment &env,
                                         BenchSettings settings, double &slowestUs);

} // namespace fusec::cli
