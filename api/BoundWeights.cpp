//===- BoundWeights.cpp - weights bound to a loaded program ---------------===//
#include "api/BoundWeights.h"

#include "api/RuntimeStatus.h"

namespace fusec {

Status bindWeightFiles(Executable &exe, const GpuContext &ctx, rt::Expected<WeightFiles> files,
                       const std::vector<bool> &parameters,
                       std::unique_ptr<DeviceWeights> &held,
                       const std::optional<RankBlocks> &blocks) {
  if (!files)
    return toStatus(files.takeError(), ErrorCode::InvalidArgument);
  auto refs = files->bind(exe.plan().inputs, parameters, blocks ? &*blocks : nullptr);
  if (!refs)
    return toStatus(refs.takeError(), ErrorCode::InvalidArgument);
  auto weights = DeviceWeights::upload(ctx, *files, *refs);
  if (!weights)
    return toStatus(weights.takeError());
  if (held) {
    // Calls in flight may still read the weights bound before.
    CudaDriver &drv = ctx.driver();
    if (Status s = toStatus(drv.check(drv.cuCtxSynchronize(), "waiting for calls in flight"));
        !s)
      return s;
  }
  if (Status s = toStatus(exe.bindInputs((*weights)->pointers()), ErrorCode::InvalidArgument); !s)
    return s;
  held = std::move(*weights);
  return Status::success();
}

} // namespace fusec
