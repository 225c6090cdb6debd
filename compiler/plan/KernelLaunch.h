//===- KernelLaunch.h - what launching one generated kernel takes ---------===//
//
// Code generation describes a kernel (codegen::KernelSpec) and the plan keeps
// the same description per step (PlanKernel); both are this, plus their own
// fields (the entry point's name; the buffers bound to the parameters).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/plan/TensorMapParam.h"

#include <string>
#include <vector>

namespace fusec {

/// One parameter of a kernel's entry point: "const fz_bf16 *__restrict__ " "in0".
struct KernelParam {
  std::string type, name;
};

/// A generated kernel as its family laid it out. Code generation prints it
/// into KernelLaunch::source (codegen::printKernel, the one place a kernel's
/// text is assembled); a launch shared by two kernels is composed from their
/// parts (SharedLaunch.cpp), never cut out of printed text.
struct KernelText {
  /// Comment lines naming the graph nodes, bytes and prediction.
  std::string header;
  /// Device code of its own ahead of the entry point.
  std::string helpers;
  /// Between `void` and the name: "__launch_bounds__(256)", cluster dims.
  std::string qualifiers;
  /// Parameter declarations, in order: the group's inputs, its outputs,
  /// then a scratch pointer where it has one.
  std::vector<KernelParam> params;
  /// Tensor-map parameters after those, as the emitter spaces them.
  std::string moreParams;
  /// The first statement waits for the kernel ahead in each role
  /// (readsBeforeWait) instead of at the top.
  bool waitPerRole = false;
  /// The body declares static __shared__ arrays.
  bool staticShared = false;
  /// The statements after the first, to the closing brace.
  std::string body;
};

struct KernelLaunch {
  KernelText text;
  /// The entry point's name: the kernel's name less its plan position
  /// (k12_matmul_add -> k_matmul_add), so that a model's repeated layers
  /// have one body, and profilers show every layer's copy alike.
  std::string entry;
  /// What NVRTC compiles: the prelude and the kernel, without the header
  /// comment; equal for every kernel with the same body, which the runtime
  /// compiles once (runtime/KernelCache.md). codegen::annotatedSource adds
  /// the header for people (`fusec compile --emit cuda`).
  std::string source;
  std::string family;    ///< pointwise, row_reduction, column_reduction, matmul
  std::string schedule;  ///< human-readable launch shape ("vec 8, 256 thr x 1056 blocks")
  unsigned grid = 1, block = 1;
  unsigned gridY = 1, gridZ = 1;
  unsigned sharedBytes = 0;  ///< dynamic shared memory
  /// Blocks per thread-block cluster along x (Hopper; 1: no cluster). The
  /// grid's x is a multiple of it.
  unsigned clusterX = 1;
  /// Launched with the cluster scheduling policy "spread" (pairs of clusters
  /// that wait for each other: OnlineColumnSoftmax.cpp).
  bool spreadClusters = false;
  /// Cooperative kernels (all blocks resident, teams synchronizing through
  /// global memory) take one more parameter: a scratch buffer of scratchBytes
  /// whose first scratchZeroBytes are zeroed before every launch.
  bool cooperative = false;
  unsigned scratchBytes = 0, scratchZeroBytes = 0;
  /// Bytes at the start of the scratch zeroed once, when it is allocated (the
  /// kernel leaves them zero again: split-K tile counters). Any kernel with
  /// scratchBytes > 0 takes the scratch pointer as its last parameter.
  unsigned scratchZeroOnce = 0;
  /// TMA tensor maps the kernel takes by value after its pointers (and scratch).
  std::vector<TensorMapParam> tensorMaps;
  /// Index into tensorMaps of the first operand the kernel starts reading
  /// before it waits for the kernel ahead (a decode layer's weights; every
  /// map from it on is read so), -1 for none. The runtime launches such a
  /// kernel beside the one ahead only where nothing before it can be writing
  /// those operands (stepOverlaps and earlyReadApart in PlanDesc.h).
  int readsBeforeWait = -1;
  std::string gemmConfig;  ///< matmul family: the tile configuration used
  std::string gemmKey;     ///< matmul family: its tuning-cache key (arch, dtype, shape, layouts)
};

} // namespace fusec
