//===- Compile.h - graph module -> fused module -> executable plan --------===//
//
// The one driver the CLI and the public API share: decompose and fuse a graph
// module (or keep one kernel per op), generate a kernel per fused group, map
// matmul groups to cuBLASLt, and place temporaries in an arena by liveness.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/cost/DeviceProfile.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/plan/PlanDesc.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>

namespace fusec {

struct CompileOptions {
  bool fuse = true;           ///< false: one kernel per compute op (the baseline)
  /// Ranks to split the graph over by its sharded arguments (1: whole).
  int ranks = 1;
  std::string device = "h100";  ///< device profile for the cost model
  std::string arch;           ///< NVRTC target; empty: the profile's
  std::string gemm = "auto";  ///< matmul groups: auto, fusec or cublaslt
  /// fusec GEMM tile configurations and cuBLASLt ranks by tuning key
  /// (runtime/TuningCache.h), and for autotuning the candidate index every
  /// GEMM kernel and cuBLASLt product takes (-1: none).
  std::map<std::string, std::string> gemmTuning;
  std::string gemmTuningFile;  ///< where gemmTuning was read, for warnings
  int gemmCandidate = -1;
  bool overlapLaunches = true;  ///< PlanDesc::overlapLaunches
  /// Independent small kernels next to each other share one launch
  /// (SharedLaunch.h).
  bool shareLaunches = true;
  /// Values measured on this machine for `device` (`fusec bench`), if any.
  MeasuredDevice measured;
  /// Where `fusec explain --timings` records the phases (the fusion passes
  /// one by one, planning): a scope of MLIR's timing manager, or null. Used
  /// only while compiling; not kept.
  mlir::TimingScope *timing = nullptr;
};

/// Runs decomposition and fusion on `module` in place.
llvm::Error fuseModule(mlir::ModuleOp module, const CompileOptions &options);

/// Builds the executable plan of a fused module (fuseModule first).
llvm::Expected<PlanDesc> buildPlan(mlir::ModuleOp fused, const CompileOptions &options);

/// The cost attributes fusion left on a fused group (what explain and bench print).
StepCost fusionCost(FusionOp fusion);

/// Scale for random values of each graph input: 1/sqrt(K) for inputs that a
/// matmul (or linear) contracts over K, 1 otherwise. Random weights then give
/// activations of order one, as trained weights do, instead of values that
/// grow with every layer and turn softmax into an argmax.
std::vector<double> randomInputScales(mlir::func::FuncOp graph);

} // namespace fusec
