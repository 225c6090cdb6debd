//===- CudaDriver.h - the CUDA Driver API, loaded at run time ------------===//
//
// fusec never links libcuda: `fusec compile --emit cuda` must work on a
// machine without a GPU. The driver is opened with dlopen the first time a
// command needs it, and each entry point is resolved by the exact versioned
// symbol that <cuda.h> maps its name to, so a call through this table has the
// prototype the header promises. Types come from <cuda.h>; nothing else does.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/DynamicLibrary.h"

#include "compiler/support/Error.h"

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>

// The per-thread-default-stream build of <cuda.h> renames entry points
// (cuLaunchKernel -> cuLaunchKernel_ptsz); one spelling must hold program-wide
// or the members of CudaDriver would differ between translation units.
#ifdef __CUDA_API_PER_THREAD_DEFAULT_STREAM
// clang-format off
#error "fusec uses the legacy default stream: do not define CUDA_API_PER_THREAD_DEFAULT_STREAM"
// clang-format on
#endif

/// Every driver entry point fusec uses. Each name goes through <cuda.h>'s
/// macros before it reaches a member or a symbol string, so `cuMemAlloc`
/// becomes the member and symbol `cuMemAlloc_v2`, and callers write the plain
/// documented name: `driver.cuMemAlloc(&ptr, bytes)`.
#define FUSEC_CUDA_DRIVER_ENTRY_POINTS(X)                                      \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDeviceTotalMem)                                                          \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease)                                                 \
  X(cuCtxGetCurrent)                                                           \
  X(cuCtxGetDevice)                                                            \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxSynchronize)                                                          \
  X(cuCtxEnablePeerAccess)                                                     \
  X(cuDeviceCanAccessPeer)                                                     \
  X(cuIpcGetMemHandle)                                                         \
  X(cuIpcOpenMemHandle)                                                        \
  X(cuIpcCloseMemHandle)                                                       \
  X(cuModuleLoadData)                                                          \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncSetAttribute)                                                        \
  X(cuFuncGetAttribute)                                                        \
  X(cuLaunchKernel)                                                            \
  X(cuLaunchKernelEx)                                                          \
  X(cuLaunchCooperativeKernel)                                                 \
  X(cuTensorMapEncodeTiled)                                                    \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                               \
  X(cuOccupancyMaxActiveClusters)                                              \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemAllocHost)                                                            \
  X(cuMemFreeHost)                                                             \
  X(cuMemAllocAsync)                                                           \
  X(cuMemFreeAsync)                                                            \
  X(cuMemcpyHtoD)                                                              \
  X(cuMemcpyDtoH)                                                              \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoHAsync)                                                         \
  X(cuMemcpyDtoDAsync)                                                         \
  X(cuMemcpy2DAsync)                                                           \
  X(cuMemsetD8Async)                                                           \
  X(cuMemsetD32Async)                                                          \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventElapsedTime)                                                        \
  X(cuStreamBeginCapture)                                                      \
  X(cuStreamIsCapturing)                                                       \
  X(cuThreadExchangeStreamCaptureMode)                                         \
  X(cuStreamEndCapture)                                                        \
  X(cuGraphInstantiate)                                                        \
  X(cuGraphLaunch)                                                             \
  X(cuGraphDestroy)                                                            \
  X(cuGraphExecDestroy)                                                        \
  X(cuGraphExecUpdate)

namespace fusec {

/// The loaded driver: one table of entry points for the whole process.
class CudaDriver {
public:
  /// The process-wide driver, loaded and initialized (cuInit(0)) on the first
  /// call; later calls, from any thread, return the same object or the same
  /// failure. The failure says plainly when there is no driver or no device.
  static rt::Expected<CudaDriver *> get();

  /// Loads the first of `candidates` and initializes it, without touching
  /// the process-wide instance. get() uses this with {"libcuda.so.1"}; tests
  /// use it to see the failures of a machine they are not running on.
  static rt::Expected<std::unique_ptr<CudaDriver>>
  load(const std::vector<std::string> &candidates);

  /// Success for CUDA_SUCCESS; otherwise an error that reads
  /// "<what> failed: CUDA_ERROR_NAME (the driver's description)".
  rt::Error check(CUresult result, const char *what) const;

  /// The CUDA version the driver supports, e.g. 13000 for CUDA 13.0.
  int version() const { return driverVersion; }

  /// Where the driver library was loaded from.
  const std::string &libraryPath() const { return library.path(); }

#define FUSEC_CUDA_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  FUSEC_CUDA_DRIVER_ENTRY_POINTS(FUSEC_CUDA_DRIVER_MEMBER)
#undef FUSEC_CUDA_DRIVER_MEMBER

private:
  explicit CudaDriver(DynamicLibrary library) : library(std::move(library)) {}
  rt::Error resolveEntryPoints();
  rt::Error initialize();

  DynamicLibrary library;
  int driverVersion = 0;
};

/// What the cost model, code generation and launch code need to know about
/// one device.
struct DeviceInfo {
  std::string name;
  int ordinal = 0;
  int smCount = 0;
  int ccMajor = 0;
  int ccMinor = 0;
  int maxSmemPerBlockOptin = 0; ///< bytes, after cuFuncSetAttribute opt-in
  int smemPerSm = 0;            ///< bytes
  int l2Bytes = 0;
  int clockKHz = 0;
  int memClockKHz = 0;
  int busWidthBits = 0;
  size_t totalMem = 0; ///< bytes

  /// The NVRTC architecture for this device: "sm_80" for Ampere, and the
  /// architecture-specific "sm_90a" from Hopper on, which unlocks wgmma,
  /// setmaxnreg and TMA (the cubin runs only on that exact architecture,
  /// which is what a run-time compiler wants anyway).
  std::string nvrtcArch() const;
  /// Whether cubins built for `arch` ("sm_80", "sm_90a") run on this device:
  /// the same major version and a minor at most this one's, or for an
  /// architecture-specific target ("a") exactly this one.
  bool runs(const std::string &arch) const;
};

/// Queries device `ordinal` (after checking that it exists).
rt::Expected<DeviceInfo> queryDevice(int ordinal);

/// The device fusec runs on: $FUSEC_DEVICE when set (a decimal ordinal),
/// else 0. An unparsable value is an error, not a silent fallback.
rt::Expected<int> selectedDeviceOrdinal();

/// Holds the primary context of one device, current on the creating thread.
/// The primary context is the one the CUDA runtime and libraries such as
/// cuBLASLt share, so pointers and modules interoperate with them.
class GpuContext {
public:
  /// Retains the primary context of selectedDeviceOrdinal().
  static rt::Expected<GpuContext> create();
  /// Retains the primary context of device `ordinal` and makes it current.
  static rt::Expected<GpuContext> create(int ordinal);

  GpuContext(GpuContext &&other) noexcept;
  GpuContext &operator=(GpuContext &&other) noexcept;
  GpuContext(const GpuContext &) = delete;
  GpuContext &operator=(const GpuContext &) = delete;
  /// Releases the primary context (and clears it from this thread if it is
  /// current here); the driver destroys it when the last holder lets go.
  ~GpuContext();

  /// Makes the context current on the calling thread (needed once per thread
  /// that launches work).
  rt::Error makeCurrent() const;

  CudaDriver &driver() const { return *cudaDriver; }
  CUcontext context() const { return ctx; }
  CUdevice device() const { return dev; }
  int ordinal() const { return deviceOrdinal; }

private:
  GpuContext(CudaDriver *driver, CUdevice dev, CUcontext ctx, int ordinal)
      : cudaDriver(driver), dev(dev), ctx(ctx), deviceOrdinal(ordinal) {}
  void release();

  CudaDriver *cudaDriver = nullptr;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  int deviceOrdinal = -1;
};

} // namespace fusec
