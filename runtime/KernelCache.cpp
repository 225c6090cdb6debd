//===- KernelCache.cpp - compiled kernels in memory and on disk ----------===//
//
// See KernelCache.md for the design; this file follows it section by section:
// the key, the entry format, then the cache itself.
//
//===----------------------------------------------------------------------===//
#include "runtime/KernelCache.h"
#include "compiler/support/LlvmError.h"

#include "compiler/support/AtomicFile.h"
#include "compiler/support/ReadFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <thread>
#include <unistd.h>

#define DEBUG_TYPE "fusec-kernel-cache"

namespace fusec {
namespace {

using Digest = std::array<uint8_t, 32>;
namespace endian = llvm::support::endian;

/// Bumped whenever the key derivation or the entry layout changes, so that
/// old entries simply stop matching (they differ in key and in header).
constexpr uint32_t kFormatVersion = 1;
constexpr char kMagic[8] = {'F', 'U', 'S', 'E', 'C', 'K', 'R', 'N'};

/// Entry header layout (little-endian), followed by the payload.
constexpr size_t kMagicOffset = 0;
constexpr size_t kVersionOffset = 8;
constexpr size_t kKindOffset = 12;
constexpr size_t kKeyOffset = 16;
constexpr size_t kPayloadSizeOffset = 48;
constexpr size_t kPayloadDigestOffset = 56;
constexpr size_t kHeaderSize = 88;

constexpr uint32_t kKindCubin = 0;
constexpr uint32_t kKindPtx = 1;

//===----------------------------------------------------------------------===//
// The key
//===----------------------------------------------------------------------===//

/// Feeds a length-prefixed field, so that ("ab", "c") and ("a", "bc") hash
/// differently.
void hashField(llvm::SHA256 &hasher, llvm::StringRef field) {
  uint8_t length[8];
  endian::write64le(length, field.size());
  hasher.update(llvm::ArrayRef<uint8_t>(length));
  hasher.update(field);
}

Digest computeKey(const KernelSource &kernel, int nvrtcVersion) {
  llvm::SHA256 hasher;
  hashField(hasher, "fusec kernel cache");
  hashField(hasher, std::to_string(kFormatVersion));
  hashField(hasher, std::to_string(nvrtcVersion));
  hashField(hasher, kernel.emitPtx ? "ptx" : "cubin");
  hashField(hasher, kernel.arch);
  // The exact options NVRTC sees, architecture flag included.
  std::vector<std::string> options = nvrtcOptions(kernel);
  hashField(hasher, std::to_string(options.size()));
  for (const std::string &option : options)
    hashField(hasher, option);
  hashField(hasher, kernel.source);
  return hasher.final();
}

std::string hex(llvm::ArrayRef<uint8_t> bytes) {
  return llvm::toHex(bytes, /*LowerCase=*/true);
}

//===----------------------------------------------------------------------===//
// The entry format
//===----------------------------------------------------------------------===//

/// Payload: u64 image size, the image (cubin or PTX), then the NVRTC log.
std::string encodeEntry(const Digest &key, const CompiledKernel &compiled) {
  const std::string &image = compiled.image();
  std::string payload(8, '\0');
  endian::write64le(payload.data(), image.size());
  payload += image;
  payload += compiled.log;
  Digest payloadDigest =
      llvm::SHA256::hash(llvm::arrayRefFromStringRef(payload));

  std::string entry(kHeaderSize, '\0');
  std::copy(std::begin(kMagic), std::end(kMagic), entry.begin() + kMagicOffset);
  endian::write32le(&entry[kVersionOffset], kFormatVersion);
  endian::write32le(&entry[kKindOffset],
                    compiled.ptx.empty() ? kKindCubin : kKindPtx);
  std::copy(key.begin(), key.end(), entry.begin() + kKeyOffset);
  endian::write64le(&entry[kPayloadSizeOffset], payload.size());
  std::copy(payloadDigest.begin(), payloadDigest.end(),
            entry.begin() + kPayloadDigestOffset);
  return entry + payload;
}

llvm::Error damaged(const llvm::Twine &reason) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), reason);
}

/// Checks every field of an entry against what the caller expects; the
/// error is the first thing found wrong.
llvm::Expected<CompiledKernel> decodeEntry(llvm::StringRef bytes,
                                           const Digest &key, bool ptx) {
  if (bytes.size() < kHeaderSize)
    return damaged("truncated header: " + llvm::Twine(bytes.size()) + " of " +
                   llvm::Twine(kHeaderSize) + " bytes");
  const char *data = bytes.data();
  if (!std::equal(std::begin(kMagic), std::end(kMagic), data + kMagicOffset))
    return damaged("not a fusec kernel cache entry (bad magic)");
  uint32_t version = endian::read32le(data + kVersionOffset);
  if (version != kFormatVersion)
    return damaged("format version " + llvm::Twine(version) + ", expected " +
                   llvm::Twine(kFormatVersion));
  if (endian::read32le(data + kKindOffset) != (ptx ? kKindPtx : kKindCubin))
    return damaged("holds the wrong kind of image");
  if (!std::equal(key.begin(), key.end(),
                  reinterpret_cast<const uint8_t *>(data + kKeyOffset)))
    return damaged("key does not match its file name");
  uint64_t payloadSize = endian::read64le(data + kPayloadSizeOffset);
  llvm::StringRef payload = bytes.drop_front(kHeaderSize);
  if (payload.size() != payloadSize)
    return damaged("payload is " + llvm::Twine(payload.size()) +
                   " bytes, header says " + llvm::Twine(payloadSize));
  Digest digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef(payload));
  if (!std::equal(
          digest.begin(), digest.end(),
          reinterpret_cast<const uint8_t *>(data + kPayloadDigestOffset)))
    return damaged("payload checksum mismatch");
  uint64_t imageSize =
      payload.size() < 8 ? 0 : endian::read64le(payload.data());
  if (payload.size() < 8 || imageSize == 0 || imageSize > payload.size() - 8)
    return damaged("image size is inconsistent with the payload");

  CompiledKernel compiled;
  std::string image = payload.substr(8, imageSize).str();
  (ptx ? compiled.ptx : compiled.cubin) = std::move(image);
  compiled.log = payload.drop_front(8 + imageSize).str();
  return compiled;
}

} // namespace

//===----------------------------------------------------------------------===//
// Where the cache lives
//===----------------------------------------------------------------------===//

std::optional<std::string> cacheDirectory() {
  if (const char *value = std::getenv("FUSEC_CACHE_DIR"); value && *value) {
    llvm::StringRef dir(value);
    if (dir.equals_insensitive("off") || dir.equals_insensitive("none"))
      return std::nullopt;
    llvm::SmallString<256> path(dir);
    (void)llvm::sys::fs::make_absolute(path); // a relative path stays usable
    return path.str().str();
  }
  llvm::SmallString<256> path;
  // XDG asks that a relative $XDG_CACHE_HOME be ignored.
  if (const char *xdg = std::getenv("XDG_CACHE_HOME");
      xdg && *xdg && llvm::sys::path::is_absolute(xdg)) {
    llvm::sys::path::append(path, xdg, "fusec", "kernels");
    return path.str().str();
  }
  if (!llvm::sys::path::home_directory(path))
    return std::nullopt;
  llvm::sys::path::append(path, ".cache", "fusec", "kernels");
  return path.str().str();
}

CacheOptions CacheOptions::fromEnvironment() {
  CacheOptions options;
  options.directory = cacheDirectory();
  return options;
}

//===----------------------------------------------------------------------===//
// KernelCache
//===----------------------------------------------------------------------===//

KernelCache::KernelCache(CacheOptions options)
    : options(std::move(options)), nvrtcVersionUsed(nvrtcVersion()) {}

std::string KernelCache::keyFor(const KernelSource &kernel) const {
  return hex(computeKey(kernel, nvrtcVersionUsed));
}

std::optional<std::string>
KernelCache::entryPath(const KernelSource &kernel) const {
  if (!options.directory)
    return std::nullopt;
  llvm::SmallString<256> path(*options.directory);
  llvm::sys::path::append(path, keyFor(kernel) +
                                    (kernel.emitPtx ? ".ptx" : ".cubin"));
  return path.str().str();
}

CacheStats KernelCache::stats() const {
  CacheStats stats;
  stats.memoryHits = memoryHits.load();
  stats.diskHits = diskHits.load();
  stats.compiles = compiles.load();
  stats.corruptEntries = corruptEntries.load();
  stats.diskWrites = diskWrites.load();
  return stats;
}

std::shared_ptr<KernelCache::Slot>
KernelCache::slotFor(const std::string &key) {
  std::lock_guard<std::mutex> lock(slotsMutex);
  std::shared_ptr<Slot> &slot = slots[key];
  if (!slot)
    slot = std::make_shared<Slot>();
  return slot;
}

KernelCache::Result KernelCache::getOrCompile(const KernelSource &kernel) {
  Digest key = computeKey(kernel, nvrtcVersionUsed);
  std::shared_ptr<Slot> slot = slotFor(hex(key));
  // Held through the compile: a second thread asking for this kernel waits
  // here and then finds it in memory, rather than compiling it again.
  std::lock_guard<std::mutex> lock(slot->mutex);
  if (slot->kernel) {
    ++memoryHits;
    return slot->kernel;
  }
  if (auto fromDisk = loadFromDisk(key, kernel)) {
    ++diskHits;
    slot->kernel = fromDisk;
    return fromDisk;
  }
  ++compiles;
  auto compiled = compile(kernel);
  if (!compiled)
    return compiled.takeError();
  auto shared = std::make_shared<const CompiledKernel>(std::move(*compiled));
  storeOnDisk(key, kernel, *shared);
  slot->kernel = shared;
  return shared;
}

std::vector<KernelCache::Result>
KernelCache::getOrCompileAll(const std::vector<KernelSource> &kernels,
                             unsigned threads) {
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(
      std::min<size_t>(threads, std::max<size_t>(kernels.size(), 1)));

  // Each worker takes the next index; result i is written only by the
  // worker that took i, so the order of results is that of `kernels`.
  std::vector<std::optional<Result>> done(kernels.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < kernels.size(); i = next++)
      done[i].emplace(getOrCompile(kernels[i]));
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &thread : pool)
    thread.join();

  std::vector<Result> results;
  results.reserve(kernels.size());
  for (std::optional<Result> &result : done)
    results.push_back(std::move(*result));
  return results;
}

std::shared_ptr<const CompiledKernel>
KernelCache::loadFromDisk(const Digest &key, const KernelSource &kernel) {
  std::optional<std::string> path = entryPath(kernel);
  if (!path)
    return nullptr;
  // Read into memory, not mapped, so that another process damaging the
  // file while we look at it cannot fault us; a FIFO or an oversized file
  // in its place is refused, not waited on.
  auto buffer = readFileBounded(*path, "kernel cache entry", FileLimits::kCacheEntry);
  if (!buffer) {
    // A miss, unless the file exists and cannot be read. (A folder on the
    // path that is not one: the directory is unusable, which storeOnDisk
    // warns about once.)
    llvm::Error err = buffer.takeError();
    const bool missing = isMissingFile(err);
    const std::string why = llvm::toString(std::move(err));
    if (!missing)
      rejectEntry(*path, why);
    return nullptr;
  }
  auto compiled = decodeEntry((*buffer)->getBuffer(), key, kernel.emitPtx);
  if (!compiled) {
    rejectEntry(*path, llvm::toString(compiled.takeError()));
    return nullptr;
  }
  return std::make_shared<const CompiledKernel>(std::move(*compiled));
}

void KernelCache::storeOnDisk(const Digest &key, const KernelSource &kernel,
                              const CompiledKernel &compiled) {
  std::optional<std::string> path = entryPath(kernel);
  if (!path || !diskWritable)
    return;
  llvm::Error err = llvm::Error::success();
  if (std::error_code ec =
          llvm::sys::fs::create_directories(*options.directory))
    err = llvm::createStringError(ec, "cannot create '%s': %s",
                                  options.directory->c_str(),
                                  ec.message().c_str());
  else
    err = writeFileAtomically(*path, encodeEntry(key, compiled), /*replaceEntry=*/true);
  if (!err) {
    ++diskWrites;
    return;
  }
  // One warning per cache: the directory will not become writable by
  // itself, and every further attempt would only repeat the message.
  std::string reason = llvm::toString(std::move(err));
  diskWritable = false;
  {
    std::lock_guard<std::mutex> lock(reportMutex);
    if (writeWarningGiven)
      return;
    writeWarningGiven = true;
  }
  report(CacheLogLevel::Warning,
         "the kernel cache directory '" + *options.directory +
             "' cannot be written (" + reason +
             "); compiled kernels are kept in memory only, so the next run "
             "compiles them again. Set FUSEC_CACHE_DIR to a writable "
             "directory, or FUSEC_CACHE_DIR=off to go without a disk cache");
}

void KernelCache::rejectEntry(const std::string &path, llvm::StringRef reason) {
  ++corruptEntries;
  // Best effort: the entry is rewritten after the compile anyway; removing it
  // now keeps a damaged file from lingering if that write fails. (unlink:
  // llvm::sys::fs::remove leaves a FIFO in place.)
  (void)::unlink(path.c_str());
  {
    std::lock_guard<std::mutex> lock(reportMutex);
    if (!reportedPaths.insert(path).second)
      return;
  }
  report(CacheLogLevel::Debug, ("discarded damaged kernel cache entry " + path +
                                " (" + reason + "); recompiling")
                                   .str());
}

void KernelCache::report(CacheLogLevel level, llvm::StringRef message) {
  std::lock_guard<std::mutex> lock(reportMutex);
  if (options.log) {
    options.log(level, message);
    return;
  }
  if (level == CacheLogLevel::Warning) {
    llvm::errs() << "fusec: warning: " << message << "\n";
    return;
  }
  LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE << ": " << message << "\n");
}

} // namespace fusec
