//===- CacheFile.h - small JSON files of measurements in the cache dir ----===//
//
// What fusec measures on a GPU and keeps for later compiles (GEMM tunings,
// device measurements) lives next to the kernel cache as one JSON object per
// file, {"<tag>": 1, "entries": {key: value}}. Reading never fails: a missing
// file has no entries, a damaged one none either, with a warning. Writes are
// atomic, so a reader never sees half a file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/Error.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace fusec {

/// <cache dir>/<file>, or nullopt when the disk cache is off.
std::optional<std::string> cacheFilePath(const std::string &file);

/// The entries object of `path` (written with `tag`); empty when missing or
/// damaged, `warning` saying which.
nlohmann::json loadCacheEntries(const std::string &path, const std::string &tag,
                                std::string *warning = nullptr);

/// Writes `entries` to `path` atomically (creating its directory).
llvm::Error saveCacheEntries(const std::string &path, const std::string &tag,
                             const nlohmann::json &entries);

} // namespace fusec
