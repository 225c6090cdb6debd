//===- DeviceWeights.h - a graph's parameters on the GPU, uploaded once ---===//
//
// Weights are read each call but never written, and a model's are most of
// its bytes: they are copied to the GPU once, when a program binds them, and
// every later call (on any stream, replayed or not) reads them there. The
// copy streams each tensor from its file through two pinned staging buffers
// (reading one while the other crosses PCIe): host memory stays bounded
// whatever the model's size, and the files are read, not mapped.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/CudaDriver.h"
#include "runtime/WeightFiles.h"

#include <memory>
#include <vector>

namespace fusec {

class DeviceWeights {
public:
  /// Copies every tensor `refs` names (one entry per graph input; empty for
  /// inputs passed per call) into one device allocation of `ctx`'s GPU.
  static rt::Expected<std::unique_ptr<DeviceWeights>>
  upload(const GpuContext &ctx, const WeightFiles &files,
         const std::vector<std::optional<WeightRef>> &refs);
  ~DeviceWeights();
  DeviceWeights(const DeviceWeights &) = delete;
  DeviceWeights &operator=(const DeviceWeights &) = delete;

  /// Per graph input: its weight's device address, 0 for a per-call input.
  const std::vector<CUdeviceptr> &pointers() const { return ptrs; }
  /// Device bytes held.
  uint64_t bytes() const { return size; }

private:
  explicit DeviceWeights(const GpuContext &ctx) : ctx(ctx) {}
  const GpuContext &ctx;
  CUdeviceptr block = 0;
  uint64_t size = 0;
  std::vector<CUdeviceptr> ptrs;
};

} // namespace fusec
