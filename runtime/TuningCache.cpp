//===- TuningCache.cpp - GEMM tile configurations measured on a GPU -------===//
#include "runtime/TuningCache.h"

#include "runtime/CacheFile.h"

#include "llvm/Support/raw_ostream.h"

namespace fusec {

namespace {
const char *const kTag = "fusec_gemm_tuning";
} // namespace

std::optional<std::string> TuningCache::defaultPath() {
  return cacheFilePath("gemm-tuning.json");
}

TuningCache TuningCache::load(const std::string &path, std::string *warning) {
  TuningCache c;
  c.path = path;
  nlohmann::json entries = loadCacheEntries(path, kTag, warning);
  for (auto &[key, v] : entries.items())
    if (v.is_object() && v.contains("config") && v["config"].is_string())
      c.map[key] = {v["config"].get<std::string>(),
                    v.contains("us") && v["us"].is_number() ? v["us"].get<double>() : 0.0};
  return c;
}

std::map<std::string, std::string> TuningCache::defaultEntries() {
  std::map<std::string, std::string> out;
  std::optional<std::string> p = defaultPath();
  if (!p)
    return out;
  std::string warning;
  TuningCache c = load(*p, &warning);
  if (!warning.empty())
    llvm::errs() << "fusec: warning: " << warning << "\n";
  for (auto &[k, v] : c.map)
    out[k] = v.config;
  return out;
}

llvm::Error TuningCache::save() const {
  if (path.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no tuning file: the disk cache is off (FUSEC_CACHE_DIR)");
  nlohmann::json entries = nlohmann::json::object();
  for (auto &[k, v] : map)
    entries[k] = {{"config", v.config}, {"us", v.us}};
  return saveCacheEntries(path, kTag, entries);
}

} // namespace fusec
