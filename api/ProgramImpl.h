//===- ProgramImpl.h - what a fusec::Program holds (for the CLI) ----------===//
#pragma once

#include "compiler/pipeline/Compile.h"
#include "include/fusec/fusec.h"
#include "runtime/CudaDriver.h"
#include "runtime/Executable.h"
#include "runtime/KernelCache.h"
#include "runtime/LlvmError.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>

namespace fusec {

struct Program::Impl {
  std::unique_ptr<mlir::MLIRContext> ctx;
  mlir::OwningOpRef<mlir::ModuleOp> original;  ///< the graph as read
  mlir::OwningOpRef<mlir::ModuleOp> fused;     ///< after decomposition and fusion
  PlanDesc plan;
  CompileOptions options;
  std::optional<GpuContext> gpu;
  std::unique_ptr<KernelCache> cache;
  std::unique_ptr<Executable> exe;

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

/// Where the device profile or the target is left empty, the GPU's
/// (selectedDeviceOrdinal()): its profile where fusec has one, its
/// architecture; without a GPU, the h100 profile and the profile's target.
void targetTheGpu(CompileOptions &o);

/// Builds a Program from a module already read (the CLI reads graphs itself
/// to report errors in its own words). Reads the GEMM tuning cache and the
/// device measurements.
llvm::Expected<std::unique_ptr<Program>>
compileModule(std::unique_ptr<mlir::MLIRContext> ctx, mlir::OwningOpRef<mlir::ModuleOp> module,
              const CompileOptions &options);

/// Allocates a device buffer per tensor and copies host data in (or, for
/// outputs, fills it with 0xFF bytes: NaN for floats, so an element no kernel
/// writes cannot pass as a result).
class DeviceBuffers {
public:
  explicit DeviceBuffers(CudaDriver &drv) : drv(drv) {}
  ~DeviceBuffers();
  llvm::Error upload(const std::vector<HostTensor> &tensors);
  llvm::Error allocatePoisoned(const std::vector<TensorSpec> &specs);
  llvm::Error download(std::vector<HostTensor> &out, const std::vector<TensorSpec> &specs) const;
  const std::vector<CUdeviceptr> &pointers() const { return ptrs; }

private:
  CudaDriver &drv;
  std::vector<CUdeviceptr> ptrs;
  std::vector<int64_t> sizes;
};

} // namespace fusec
