//===- DeviceWeights.cpp - a graph's parameters on the GPU, uploaded once -===//
#include "runtime/DeviceWeights.h"

#include "compiler/support/Printable.h"

#include <algorithm>
#include <cstdlib>

namespace fusec {
namespace {

/// Each weight starts on a 256-byte boundary, as cuMemAlloc's blocks do
/// (kernels' vector loads and TMA maps assume at least 16).
constexpr uint64_t kAlign = 256;
/// Each staging buffer; two alternate.
constexpr uint64_t kStagingBytes = uint64_t(32) << 20;

/// Two host buffers, pinned where the driver grants it (else ordinary
/// memory, which the driver copies through its own staging), and a stream
/// and an event per buffer to know when one may be refilled.
struct Staging {
  CudaDriver &drv;
  char *buf[2] = {nullptr, nullptr};
  bool pinned[2] = {false, false};
  CUevent done[2] = {nullptr, nullptr};
  bool pending[2] = {false, false};
  CUstream stream = nullptr;

  explicit Staging(CudaDriver &drv) : drv(drv) {}
  ~Staging() {
    if (stream)
      drv.cuStreamSynchronize(stream);
    for (int b = 0; b < 2; ++b) {
      if (done[b])
        drv.cuEventDestroy(done[b]);
      if (pinned[b])
        drv.cuMemFreeHost(buf[b]);
      else
        std::free(buf[b]);
    }
    if (stream)
      drv.cuStreamDestroy(stream);
  }

  rt::Error create(uint64_t bytes) {
    if (rt::Error err = drv.check(drv.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
                                  "cuStreamCreate (weights)"))
      return err;
    for (int b = 0; b < 2; ++b) {
      void *p = nullptr;
      if (drv.cuMemAllocHost(&p, bytes) == CUDA_SUCCESS) {
        buf[b] = static_cast<char *>(p);
        pinned[b] = true;
      } else if (!(buf[b] = static_cast<char *>(std::malloc(bytes)))) {
        return rt::errorf("out of host memory for the weights' staging buffers");
      }
      if (rt::Error err = drv.check(drv.cuEventCreate(&done[b], CU_EVENT_DISABLE_TIMING),
                                    "cuEventCreate (weights)"))
        return err;
    }
    return rt::Error::success();
  }

  /// Buffer `b`, once its last copy has left it.
  rt::Expected<char *> take(int b) {
    if (pending[b]) {
      if (rt::Error err = drv.check(drv.cuEventSynchronize(done[b]), "copying weights"))
        return std::move(err);
      pending[b] = false;
    }
    return buf[b];
  }

  rt::Error send(int b, CUdeviceptr dst, uint64_t bytes) {
    if (rt::Error err = drv.check(drv.cuMemcpyHtoDAsync(dst, buf[b], bytes, stream),
                                  "cuMemcpyHtoDAsync (weights)"))
      return err;
    pending[b] = true;
    return drv.check(drv.cuEventRecord(done[b], stream), "cuEventRecord (weights)");
  }
};

} // namespace

rt::Expected<std::unique_ptr<DeviceWeights>>
DeviceWeights::upload(const GpuContext &ctx, const WeightFiles &files,
                      const std::vector<std::optional<WeightRef>> &refs) {
  std::unique_ptr<DeviceWeights> w(new DeviceWeights(ctx));
  CudaDriver &drv = ctx.driver();
  if (rt::Error err = ctx.makeCurrent())
    return std::move(err);
  // The layout first: one allocation, the weights in the files' order (so
  // that each file is read front to back).
  std::vector<size_t> order;
  std::vector<uint64_t> offsets(refs.size(), 0);
  for (size_t i = 0; i < refs.size(); ++i)
    if (refs[i])
      order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_pair(refs[a]->source, refs[a]->offset) <
           std::make_pair(refs[b]->source, refs[b]->offset);
  });
  uint64_t largest = 0;
  for (size_t i : order) {
    offsets[i] = w->size;
    w->size += (std::max<uint64_t>(refs[i]->bytes, 1) + kAlign - 1) / kAlign * kAlign;
    largest = std::max(largest, refs[i]->bytes);
  }
  w->ptrs.assign(refs.size(), 0);
  if (order.empty())
    return std::move(w);
  if (rt::Error err = drv.check(drv.cuMemAlloc(&w->block, w->size),
                                ("allocating " + byteCount(w->size) + " for the weights").c_str()))
    return std::move(err);
  for (size_t i : order)
    w->ptrs[i] = w->block + offsets[i];

  Staging staging(drv);
  // At least a byte: the driver refuses an empty host allocation.
  if (rt::Error err = staging.create(std::max<uint64_t>(std::min(largest, kStagingBytes), 1)))
    return std::move(err);
  int b = 0;
  for (size_t i : order) {
    const WeightRef &ref = *refs[i];
    for (uint64_t done = 0; done < ref.bytes;) {
      uint64_t n = std::min(ref.bytes - done, kStagingBytes);
      auto buf = staging.take(b);
      if (!buf)
        return buf.takeError();
      if (rt::Error err = files.read(ref, done, n, *buf))
        return std::move(err);
      if (rt::Error err = staging.send(b, w->ptrs[i] + done, n))
        return std::move(err);
      done += n;
      b ^= 1;
    }
  }
  if (rt::Error err = drv.check(drv.cuStreamSynchronize(staging.stream), "copying weights"))
    return std::move(err);
  return std::move(w);
}

DeviceWeights::~DeviceWeights() {
  if (block && !ctx.makeCurrent())
    ctx.driver().cuMemFree(block);
}

} // namespace fusec
