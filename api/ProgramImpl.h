//===- ProgramImpl.h - what a fusec::Program holds (for the CLI) ----------===//
#pragma once

#include "compiler/pipeline/Compile.h"
#include "compiler/pipeline/PaddedGraph.h"
#include "include/fusec/fusec.h"
#include "api/RankGroup.h"
#include "runtime/CudaDriver.h"
#include "runtime/DeviceBuffers.h"
#include "runtime/DeviceWeights.h"
#include "runtime/Executable.h"
#include "runtime/PaddedBuffers.h"
#include "runtime/KernelCache.h"
#include "compiler/support/LlvmError.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <functional>
#include <mutex>
#include <optional>

namespace fusec {

struct Program::Impl {
  std::unique_ptr<mlir::MLIRContext> ctx;
  mlir::OwningOpRef<mlir::ModuleOp> original;  ///< the graph as read
  mlir::OwningOpRef<mlir::ModuleOp> fused;     ///< after decomposition and fusion
  PlanDesc plan;
  CompileOptions options;
  std::optional<GpuContext> gpu;
  RankSeat seat;  ///< joinGroup; left after the executable, before the context
  std::unique_ptr<KernelCache> cache;
  std::unique_ptr<Executable> exe;
  std::unique_ptr<DeviceWeights> weights;  ///< bindWeights
  std::vector<bool> parameters;            ///< per graph input
  std::mutex loading;  ///< the first calls from several threads load once

  /// Options::maxSizes (api/PaddedProgram.cpp). The graph compiled at padded
  /// sizes (plan.padding says where it takes its sizes): the sizes calls run
  /// at, and what those calls pass and get.
  PaddedCallSpecs call;
  /// Per call input: run() takes it at the padded shape, in place.
  std::vector<bool> inputPadded;
  /// Reads the graph again at other sizes; the fixed sizes and the bounds of
  /// the varying ones (plan.paddedAt: the padded sizes it is compiled at now).
  std::function<llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>(mlir::MLIRContext &,
                                                                  const SizeMap &)>
      reread;
  SizeMap fixedSizes, bounds;
  /// The padded buffers of the calls' device tensors (PaddedBuffers.h).
  std::unique_ptr<PaddedBuffers> padBuffers;
  /// The other padded compiles, kept for the sizes that return to them.
  struct Compiled {
    std::unique_ptr<mlir::MLIRContext> ctx;
    mlir::OwningOpRef<mlir::ModuleOp> original, fused;
    PlanDesc plan;
    std::vector<bool> parameters;
    std::unique_ptr<Executable> exe;
    std::unique_ptr<PaddedBuffers> padBuffers;
  };
  std::map<SizeMap, Compiled> kept;
  int compiles = 1;
  /// Exchanges the compile in use with `c`.
  void swapCompiled(Compiled &c);
  /// resize(): the call sizes, the compile that serves them.
  llvm::Error compileAt(const SizeMap &sizes);
  /// The graph compiled at padded sizes `at` (every name of `bounds`), not
  /// loaded, the program unchanged (compileAt's compile; saveArtifact's).
  llvm::Expected<Compiled> compilePaddedAt(const SizeMap &at) const;
  /// An error for a name that does not vary or a size outside its bounds.
  llvm::Error checkSizes(const SizeMap &sizes) const;
  /// Whether calls pass tensors of other sizes than the plan's.
  bool padded() const { return plan.padded(); }

  /// Creates the GPU context, kernel cache and executable once.
  llvm::Error ensureLoaded();
  /// ensureLoaded's outcome as a Status: NoGpu, WrongArchitecture (kernels
  /// built for a target this GPU cannot run) or RuntimeFailed.
  Status load();
  /// The profile the plan was predicted with: the named one, with this
  /// machine's measurements where `fusec bench` took them.
  DeviceProfile profile() const {
    std::optional<DeviceProfile> p = measuredProfile(plan.device, options.measured);
    DeviceProfile r = p ? *p : withMeasurements(defaultDeviceProfile(), options.measured);
    if (!plan.arch.empty())  // the target the kernels were built for
      r.arch = plan.arch;
    return r;
  }
};

/// fusec's own tools reach into a Program (the plan, the modules, the
/// executable); the public header does not show how.
struct ProgramAccess {
  static Program::Impl &of(Program &p) { return *p.p; }
  static const Program::Impl &of(const Program &p) { return *p.p; }
  static std::unique_ptr<Program> make() { return std::unique_ptr<Program>(new Program()); }
};

/// Compiles the kernels of `programs` (one graph compiled for several
/// architectures, one program each) and writes them to `path` as one
/// artifact (runtime/ArtifactFile.h), whole or not at all; `weights`, a
/// safetensors image of the parameters, embedded where not empty. A program
/// with Options::maxSizes is compiled at every padded size up to its bounds
/// (at most kMaxPaddedCompiles), `progress` told of each.
llvm::Error saveArtifact(const std::vector<Program *> &programs, const std::string &path,
                         KernelCache &cache, std::string weights = {},
                         const std::function<void(const std::string &)> &progress = {});
/// The most padded compiles an artifact holds for one architecture.
constexpr size_t kMaxPaddedCompiles = 128;

/// Where the device profile or the target is left empty, the GPU's
/// (selectedDeviceOrdinal()): its profile where fusec has one, its
/// architecture; without a GPU, the h100 profile and the profile's target.
void targetTheGpu(CompileOptions &o);

/// Runs a program split over ranks (PlanDesc::ranks > 1) on GPUs 0..ranks-1
/// of this machine, one thread a rank meeting the others through NCCL
/// (RunRanks.cpp). `inputs` are the whole graph's, weights included: rank r
/// takes its block of each split one. `outputs` are whole: a split output
/// joined from the ranks' blocks, every other one as every rank returned it.
/// With `asGraph` each rank's run is one CUDA graph launch (its collectives
/// captured with its kernels), as Program::replay makes it.
llvm::Error runOnRanks(Program::Impl &p, const std::vector<HostTensor> &inputs,
                       std::vector<HostTensor> &outputs, bool asGraph = false);

/// Loads a program split over ranks (PlanDesc::ranks > 1) on GPUs
/// 0..ranks-1 of this machine, a thread a rank, joins the ranks to a fresh
/// group, and runs `body(rank, gpu, executable)` on every rank's thread at
/// once (its collectives meet the other ranks'); the first rank's failure is
/// the result. runOnRanks and `fusec bench --ranks` are built on it.
llvm::Error onRanks(Program::Impl &p,
                    const std::function<llvm::Error(int, const GpuContext &, Executable &)> &body);

/// run() and replay() of a program with Options::maxSizes: the call's device
/// tensors padded into the program's buffers, the outputs cut back
/// (runtime/PaddedCall.h).
rt::Error runPadded(Program::Impl &p, const std::vector<uint64_t> &in,
                    const std::vector<uint64_t> &out, CUstream stream, bool asGraph);

/// Builds a Program for Options::maxSizes: `reread` reads the graph at given
/// sizes, `sizes` holds the fixed names' sizes and the first sizes of the
/// varying ones (their bound where missing), `bounds` the varying ones'.
llvm::Expected<std::unique_ptr<Program>> compilePadded(
    std::function<llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>(mlir::MLIRContext &,
                                                                    const SizeMap &)>
        reread,
    const SizeMap &sizes, const SizeMap &bounds, const CompileOptions &options);

/// Builds a Program from a module already read (the CLI reads graphs itself
/// to report errors in its own words). Reads the GEMM tuning cache and the
/// device measurements.
llvm::Expected<std::unique_ptr<Program>>
compileModule(std::unique_ptr<mlir::MLIRContext> ctx, mlir::OwningOpRef<mlir::ModuleOp> module,
              const CompileOptions &options);

} // namespace fusec
