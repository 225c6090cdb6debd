//===- DeviceMeasurements.cpp - device numbers measured by fusec bench ----===//
#include "runtime/DeviceMeasurements.h"
#include "compiler/support/LlvmError.h"

#include "compiler/support/Printable.h"
#include "runtime/CacheFile.h"

#include "llvm/Support/raw_ostream.h"

namespace fusec {

namespace {
const char *const kTag = "fusec_device_measurements";
} // namespace

std::optional<std::string> measuredDevicePath() {
  return cacheFilePath("device-measurements.json");
}

MeasuredDevice loadMeasuredDevice(const std::string &path, const std::string &profile) {
  std::string warning;
  nlohmann::json entries = loadCacheEntries(path, kTag, &warning);
  if (!warning.empty())
    llvm::errs() << "fusec: warning: " << warning << "\n";
  MeasuredDevice m;
  if (!entries.contains(profile) || !entries[profile].is_object())
    return m;
  const nlohmann::json &e = entries[profile];
  // A value that is not a plausible measurement is ignored, not trusted: a
  // copy rate between 1 GB/s and 100 TB/s (an H200 copies at 4.3).
  if (e.contains("copy_bytes_per_s") && e["copy_bytes_per_s"].is_number() &&
      e["copy_bytes_per_s"].get<double>() > 1e9 && e["copy_bytes_per_s"].get<double>() < 1e14)
    m.copyBytesPerSec = e["copy_bytes_per_s"].get<double>();
  if (e.contains("sm_count") && e["sm_count"].is_number_integer() &&
      e["sm_count"].get<int>() > 0 && e["sm_count"].get<int>() <= 1024)
    m.smCount = e["sm_count"].get<int>();
  // Printed by explain and bench: any control bytes the file holds escaped.
  if (e.contains("device") && e["device"].is_string())
    m.deviceName = printable(e["device"].get<std::string>());
  if (e.contains("date") && e["date"].is_string())
    m.date = printable(e["date"].get<std::string>());
  return m;
}

llvm::Error saveMeasuredDevice(const std::string &path, const std::string &profile,
                               const MeasuredDevice &m) {
  nlohmann::json entries = loadCacheEntries(path, kTag);
  entries[profile] = {{"copy_bytes_per_s", m.copyBytesPerSec},
                      {"sm_count", m.smCount},
                      {"device", m.deviceName},
                      {"date", m.date}};
  return saveCacheEntries(path, kTag, entries);
}

} // namespace fusec
