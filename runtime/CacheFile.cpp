//===- CacheFile.cpp - small JSON files of measurements in the cache dir --===//
#include "runtime/CacheFile.h"
#include "compiler/support/LlvmError.h"
#include "compiler/support/ReadFile.h"

#include "compiler/support/StrictJson.h"

#include "compiler/support/AtomicFile.h"
#include "runtime/KernelCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

namespace fusec {

std::optional<std::string> cacheFilePath(const std::string &file) {
  std::optional<std::string> dir = cacheDirectory();
  if (!dir)
    return std::nullopt;
  llvm::SmallString<256> p(*dir);
  llvm::sys::path::append(p, file);
  return p.str().str();
}

nlohmann::json loadCacheEntries(const std::string &path, const std::string &tag,
                                std::string *warning) {
  auto buffer = readFileBounded(path, "cache file", FileLimits::kCacheEntry);
  if (!buffer) {
    llvm::Error err = buffer.takeError();
    const bool missing = isMissingFile(err);
    const std::string why = llvm::toString(std::move(err));
    if (!missing && warning)  // a FIFO, a directory, an oversized file in its place
      *warning = why + "; ignoring it";
    return nlohmann::json::object();  // nothing measured yet
  }
  std::string why;
  nlohmann::json j = parseStrictJsonOrDiscard((*buffer)->getBuffer().begin(),
                                              (*buffer)->getBuffer().end(), why);
  if (j.is_discarded() || !j.is_object() || !j.contains(tag) || !j.contains("entries") ||
      !j["entries"].is_object()) {
    if (warning)
      *warning = path + " is damaged (not a " + tag +
                 " file); ignoring it, and the next measurement rewrites it";
    return nlohmann::json::object();
  }
  return j["entries"];
}

llvm::Error saveCacheEntries(const std::string &path, const std::string &tag,
                             const nlohmann::json &entries) {
  nlohmann::json j;
  j[tag] = 1;
  j["entries"] = entries;
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create %s: %s", dir.str().c_str(),
                                   ec.message().c_str());
  return writeFileAtomically(path, j.dump(2) + "\n", /*replaceEntry=*/true);
}

} // namespace fusec
