//===- TuningCache.cpp - GEMM tile configurations measured on a GPU -------===//
#include "runtime/TuningCache.h"

#include "compiler/support/AtomicFile.h"
#include "runtime/KernelCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

namespace fusec {

std::optional<std::string> TuningCache::defaultPath() {
  std::optional<std::string> dir = cacheDirectory();
  if (!dir)
    return std::nullopt;
  llvm::SmallString<256> p(*dir);
  llvm::sys::path::append(p, "gemm-tuning.json");
  return p.str().str();
}

TuningCache TuningCache::load(const std::string &path, std::string *warning) {
  TuningCache c;
  c.path = path;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return c;  // not tuned yet
  nlohmann::json j = nlohmann::json::parse((*buffer)->getBuffer().begin(),
                                           (*buffer)->getBuffer().end(), nullptr,
                                           /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("entries") ||
      !j["entries"].is_object()) {
    if (warning)
      *warning = path + " is damaged (not a fusec tuning file); ignoring it, and the next "
                        "--autotune rewrites it";
    return c;
  }
  for (auto &[key, v] : j["entries"].items())
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
  nlohmann::json j;
  j["fusec_gemm_tuning"] = 1;
  j["entries"] = nlohmann::json::object();
  for (auto &[k, v] : map)
    j["entries"][k] = {{"config", v.config}, {"us", v.us}};
  if (std::error_code ec = llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path)))
    return llvm::createStringError(ec, "cannot create %s: %s",
                                   llvm::sys::path::parent_path(path).str().c_str(),
                                   ec.message().c_str());
  return writeFileAtomically(path, j.dump(2) + "\n");
}

} // namespace fusec
