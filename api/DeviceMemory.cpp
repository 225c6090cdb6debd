//===- DeviceMemory.cpp - device memory owned through the public API ------===//
#include "fusec/Runtime.h"

#include "runtime/CudaDriver.h"

#include <algorithm>

namespace fusec {

namespace {
Status toStatus(rt::Error err, ErrorCode code = ErrorCode::RuntimeFailed) {
  if (!err)
    return Status::success();
  return Status::error(err.message(), code);
}
} // namespace

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

Status DeviceMemory::copyFromHost(const void *src, uint64_t bytes) {
  if (bytes > size)
    return Status::error("a copy of " + std::to_string(bytes) + " bytes into " +
                             std::to_string(size),
                         ErrorCode::InvalidArgument);
  auto *gpu = static_cast<GpuContext *>(context.get());
  if (rt::Error err = gpu->makeCurrent())
    return toStatus(std::move(err));
  CudaDriver &drv = gpu->driver();
  return toStatus(drv.check(drv.cuMemcpyHtoD(ptr, src, bytes), "cuMemcpyHtoD"));
}

Status DeviceMemory::copyToHost(void *dst, uint64_t bytes) const {
  if (bytes > size)
    return Status::error("a copy of " + std::to_string(bytes) + " bytes out of " +
                             std::to_string(size),
                         ErrorCode::InvalidArgument);
  auto *gpu = static_cast<GpuContext *>(context.get());
  if (rt::Error err = gpu->makeCurrent())
    return toStatus(std::move(err));
  CudaDriver &drv = gpu->driver();
  return toStatus(drv.check(drv.cuMemcpyDtoH(dst, ptr, bytes), "cuMemcpyDtoH"));
}

} // namespace fusec
