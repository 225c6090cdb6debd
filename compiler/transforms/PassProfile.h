//===- PassProfile.h - the device profile a fusion pass's options name ----===//
#pragma once

#include "compiler/cost/DeviceProfile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>

namespace fusec {

/// The profile named `device`, with the values measured on this machine
/// where given (0: the profile's own) and the kernels' target `arch` (empty:
/// the profile's); a diagnostic on `func` and nullopt when no profile has
/// that name.
inline std::optional<DeviceProfile> passProfile(mlir::func::FuncOp func, const std::string &device,
                                                double copyBytesPerSec, int smCount,
                                                const std::string &arch = "") {
  std::optional<DeviceProfile> profile = measuredProfile(device, {copyBytesPerSec, smCount, {}, {}});
  if (!profile)
    func.emitError("unknown device profile '") << device << "'";
  else if (!arch.empty())
    profile->arch = arch;
  return profile;
}

} // namespace fusec
