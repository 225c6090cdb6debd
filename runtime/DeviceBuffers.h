//===- DeviceBuffers.h - host tensors in device memory, for one call ------===//
#pragma once

#include "fusec/Tensor.h"
#include "runtime/CudaDriver.h"
#include "compiler/support/Error.h"
#include "runtime/Executable.h"

#include <vector>

namespace fusec {

/// Allocates a device buffer per tensor and copies host data in (or, for
/// outputs, fills it with 0xFF bytes: NaN for floats, so an element no kernel
/// writes cannot pass as a result). Frees them when destroyed.
class DeviceBuffers {
public:
  explicit DeviceBuffers(CudaDriver &drv) : drv(drv) {}
  ~DeviceBuffers();
  DeviceBuffers(const DeviceBuffers &) = delete;
  DeviceBuffers &operator=(const DeviceBuffers &) = delete;
  rt::Error upload(const std::vector<HostTensor> &tensors);
  rt::Error allocatePoisoned(const std::vector<TensorSpec> &specs);
  rt::Error download(std::vector<HostTensor> &out, const std::vector<TensorSpec> &specs) const;
  const std::vector<CUdeviceptr> &pointers() const { return ptrs; }

private:
  CudaDriver &drv;
  std::vector<CUdeviceptr> ptrs;
  std::vector<int64_t> sizes;
};

/// Copies `inputs` to the GPU, runs `exe` on the default stream, and copies
/// the outputs back. The outputs and the intermediates are filled with NaN
/// first, so a kernel that leaves an element unwritten, or reads one before
/// it is written, shows in the result. With `replay`, the run is a CUDA
/// graph launch (Executable::replay).
rt::Error runOnHostTensors(Executable &exe, CudaDriver &drv, const std::vector<HostTensor> &inputs,
                           std::vector<HostTensor> &outputs, bool replay = false);

} // namespace fusec
