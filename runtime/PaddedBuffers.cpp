//===- PaddedBuffers.cpp - a call's tensors in a padded program's buffers --===//
#include "runtime/PaddedBuffers.h"

#include <algorithm>
#include <string>

namespace fusec {

PaddedBuffers::~PaddedBuffers() {
  for (CUdeviceptr p : inputs)
    if (p)
      drv.cuMemFree(p);
  for (CUdeviceptr p : outputs)
    if (p)
      drv.cuMemFree(p);
}

rt::Expected<CUdeviceptr> PaddedBuffers::buffer(std::vector<CUdeviceptr> &list, size_t i,
                                                int64_t bytes) {
  if (list.size() <= i)
    list.resize(i + 1, 0);
  if (!list[i])
    if (rt::Error err = drv.check(drv.cuMemAlloc(&list[i], std::max<int64_t>(16, bytes)),
                                  "cuMemAlloc (padded buffer)"))
      return std::move(err);
  return list[i];
}

rt::Expected<CUdeviceptr> PaddedBuffers::input(size_t i, const TensorSpec &spec) {
  return buffer(inputs, i, spec.bytes());
}

rt::Expected<CUdeviceptr> PaddedBuffers::output(size_t i, const TensorSpec &spec) {
  return buffer(outputs, i, spec.bytes());
}

rt::Error PaddedBuffers::copyBox(CUdeviceptr from, const std::vector<int64_t> &fromShape,
                                 CUdeviceptr to, const std::vector<int64_t> &toShape,
                                 int64_t elementBytes, CUstream stream) {
  // Rows of the dims before the one that differs, each the part of that dim
  // both hold times what follows it: one 2D copy.
  size_t axis = fromShape.size();
  for (size_t d = 0; d < fromShape.size(); ++d)
    if (fromShape[d] != toShape[d]) {
      if (axis != fromShape.size())
        return rt::errorf("it varies along dims %zu and %zu: a call pads one dim of a tensor "
                          "in this version (an input may be passed at its padded shape: setInputPadded)",
                          axis, d);
      axis = d;
    }
  int64_t outer = 1, inner = elementBytes, total = elementBytes;
  for (size_t d = 0; d < fromShape.size(); ++d) {
    if (d < axis)
      outer *= fromShape[d];
    else if (d > axis)
      inner *= fromShape[d];
    total *= std::min(fromShape[d], toShape[d]);
  }
  if (total == 0)
    return rt::Error::success();
  // The same shapes, or only the first dim differing: one run of bytes
  // (no pitch, which the driver bounds).
  if (axis == fromShape.size() || outer == 1)
    return drv.check(drv.cuMemcpyDtoDAsync(to, from, size_t(total), stream),
                     "cuMemcpyDtoDAsync (padded tensor)");
  CUDA_MEMCPY2D m{};
  m.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  m.srcDevice = from;
  m.srcPitch = size_t(fromShape[axis] * inner);
  m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  m.dstDevice = to;
  m.dstPitch = size_t(toShape[axis] * inner);
  m.WidthInBytes = size_t(std::min(fromShape[axis], toShape[axis]) * inner);
  m.Height = size_t(outer);
  return drv.check(drv.cuMemcpy2DAsync(&m, stream), "cuMemcpy2DAsync (padded tensor)");
}

rt::Error PaddedBuffers::pad(CUdeviceptr from, const std::vector<int64_t> &shape, CUdeviceptr to,
                             const std::vector<int64_t> &padded, int64_t elementBytes,
                             CUstream stream) {
  int64_t bytes = elementBytes;
  for (int64_t d : padded)
    bytes *= d;
  if (shape != padded && bytes > 0)
    if (rt::Error err =
            drv.check(drv.cuMemsetD8Async(to, 0, size_t(bytes), stream), "cuMemsetD8Async (padding)"))
      return err;
  return copyBox(from, shape, to, padded, elementBytes, stream);
}

rt::Error PaddedBuffers::crop(CUdeviceptr from, const std::vector<int64_t> &padded, CUdeviceptr to,
                              const std::vector<int64_t> &shape, int64_t elementBytes,
                              CUstream stream) {
  return copyBox(from, padded, to, shape, elementBytes, stream);
}

rt::Error PaddedBuffers::setSize(CUdeviceptr to, int32_t value, CUstream stream) {
  unsigned bits = 0;
  static_assert(sizeof bits == sizeof value);
  std::copy_n(reinterpret_cast<const unsigned char *>(&value), sizeof value,
              reinterpret_cast<unsigned char *>(&bits));
  return drv.check(drv.cuMemsetD32Async(to, bits, 1, stream), "cuMemsetD32Async (size)");
}

} // namespace fusec
