//===- DeviceMeasurements.h - device numbers measured by fusec bench ------===//
//
// The cost model predicts from a device profile (compiler/cost/DeviceProfile),
// a table of typical numbers. `fusec bench` measures the copy bandwidth of the
// GPU at hand and keeps it here, by profile name, in
// <cache dir>/device-measurements.json:
//
//   "h100" -> {"copy_bytes_per_s": 2.71e12, "sm_count": 132,
//              "device": "NVIDIA H100 80GB HBM3", "date": "2026-11-22"}
//
// and every later compile for that profile predicts with it (fusec explain
// names the source of its numbers).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/cost/DeviceProfile.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace fusec {

/// The measurements kept for `profile` in `path`; warns on stderr if the
/// file is damaged. Nothing measured: all zero.
MeasuredDevice loadMeasuredDevice(const std::string &path, const std::string &profile);
/// Records `m` for `profile` in `path`, keeping the other profiles' entries.
llvm::Error saveMeasuredDevice(const std::string &path, const std::string &profile,
                               const MeasuredDevice &m);
/// <cache dir>/device-measurements.json, or nullopt when the disk cache is off.
std::optional<std::string> measuredDevicePath();

} // namespace fusec
