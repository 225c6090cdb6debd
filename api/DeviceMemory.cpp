//===- DeviceMemory.cpp - device memory owned through the public API ------===//
#include "fusec/Runtime.h"

#include "api/RuntimeStatus.h"
#include "runtime/CudaDriver.h"

#include <algorithm>

namespace fusec {

Status DeviceMemory::allocate(uint64_t bytes, std::shared_ptr<DeviceMemory> &out, void *stream) {
  auto ordinal = selectedDeviceOrdinal();
  if (!ordinal)
    return toStatus(ordinal.takeError(), ErrorCode::InvalidArgument);
  // The device's primary context (the one every fusec object and the CUDA
  // runtime share), retained for as long as the memory lives.
  auto gpu = GpuContext::create(*ordinal);
  if (!gpu)
    return toStatus(gpu.takeError(), ErrorCode::NoGpu);
  auto context = std::make_shared<GpuContext>(std::move(*gpu));
  CudaDriver &drv = context->driver();
  std::shared_ptr<DeviceMemory> m(new DeviceMemory());
  m->context = context;
  CUdeviceptr ptr = 0;
  // Stream-ordered: cuMemAlloc would wait for the GPU to go idle.
  if (Status s = toStatus(drv.check(drv.cuMemAllocAsync(&ptr, std::max<uint64_t>(bytes, 16),
                                                        static_cast<CUstream>(stream)),
                                    "cuMemAllocAsync"));
      !s)
    return s;
  m->ptr = ptr;
  m->size = bytes;
  m->ordinal = *ordinal;
  out = std::move(m);
  return Status::success();
}

DeviceMemory::~DeviceMemory() {
  if (!ptr)
    return;
  auto *gpu = static_cast<GpuContext *>(context.get());
  if (gpu->makeCurrent())  // the free needs the context current; none: leaked with it
    return;
  gpu->driver().cuMemFreeAsync(ptr, nullptr);
}

Status DeviceMemory::copy(bool toHost, void *host, uint64_t bytes) const {
  if (bytes > size)
    return Status::error("a copy of " + std::to_string(bytes) + " bytes " +
                             (toHost ? "out of " : "into ") + std::to_string(size),
                         ErrorCode::InvalidArgument);
  auto *gpu = static_cast<GpuContext *>(context.get());
  if (rt::Error err = gpu->makeCurrent())
    return toStatus(std::move(err));
  CudaDriver &drv = gpu->driver();
  // A read waits for all work on the device: the writer may have run on a
  // stream the synchronous copy does not wait for (a non-blocking one).
  if (toHost)
    if (Status s = toStatus(drv.check(drv.cuCtxSynchronize(), "cuCtxSynchronize")); !s)
      return s;
  return toStatus(toHost ? drv.check(drv.cuMemcpyDtoH(host, ptr, bytes), "cuMemcpyDtoH")
                         : drv.check(drv.cuMemcpyHtoD(ptr, host, bytes), "cuMemcpyHtoD"));
}

} // namespace fusec
