//===- RuntimeStatus.h - the runtime's failures as public Status values ---===//
#pragma once

#include "fusec/Status.h"
#include "runtime/CudaDriver.h"
#include "compiler/support/Error.h"

namespace fusec {

inline Status toStatus(rt::Error err, ErrorCode code = ErrorCode::RuntimeFailed) {
  if (!err)
    return Status::success();
  return Status::error(err.message(), code);
}

/// The GPU this process runs on ($FUSEC_DEVICE, else 0) and what it is:
/// InvalidArgument for an unusable $FUSEC_DEVICE, NoGpu without a driver or
/// device.
inline Status selectedDevice(int &ordinal, DeviceInfo &info) {
  auto o = selectedDeviceOrdinal();
  if (!o)
    return toStatus(o.takeError(), ErrorCode::InvalidArgument);
  auto i = queryDevice(*o);
  if (!i)
    return toStatus(i.takeError(), ErrorCode::NoGpu);
  ordinal = *o;
  info = std::move(*i);
  return Status::success();
}

} // namespace fusec
