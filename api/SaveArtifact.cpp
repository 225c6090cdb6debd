//===- SaveArtifact.cpp - compiled programs into one artifact file --------===//
#include "api/ProgramImpl.h"

#include "compiler/support/AtomicFile.h"
#include "frontends/json/GraphReader.h"
#include "runtime/ArtifactFile.h"
#include "runtime/CompileKernels.h"
#include "runtime/WeightFiles.h"
#include "compiler/support/Printable.h"

#include <algorithm>
#include <set>

namespace fusec {

namespace {

/// Every combination of the padded sizes of `bounds`' names, the bounds'
/// own first (the sizes a program loads at).
std::vector<SizeMap> paddedCombinations(const SizeMap &bounds) {
  std::vector<SizeMap> all = {SizeMap()};
  for (const auto &[name, bound] : bounds) {
    std::vector<SizeMap> next;
    for (const SizeMap &partial : all)
      for (int64_t size : paddedSizesUpTo(bound)) {
        SizeMap m = partial;
        m[name] = size;
        next.push_back(std::move(m));
      }
    all = std::move(next);
  }
  std::stable_partition(all.begin(), all.end(), [&](const SizeMap &m) { return m == bounds; });
  return all;
}

std::string formatSizes(const SizeMap &sizes) {
  std::string s;
  for (const auto &[name, size] : sizes)
    s += (s.empty() ? "" : ",") + printable(name) + "=" + std::to_string(size);
  return s;
}

} // namespace

llvm::Error saveArtifact(const std::vector<Program *> &programs, const std::string &path,
                         KernelCache &cache, std::string weights,
                         const std::function<void(const std::string &)> &progress) {
  Artifact artifact;
  artifact.weights = std::move(weights);
  artifact.producer = std::string("fusec ") + version();
  std::set<std::string> archs;
  for (Program *program : programs) {
    Program::Impl &impl = ProgramAccess::of(*program);
    if (!archs.insert(impl.plan.arch).second)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "architecture %s is asked for twice",
                                     impl.plan.arch.c_str());
    // A program whose sizes vary holds every padded size's compile.
    std::vector<SizeMap> combinations = impl.bounds.empty() ? std::vector<SizeMap>{SizeMap()}
                                                            : paddedCombinations(impl.bounds);
    if (combinations.size() > kMaxPaddedCompiles)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--max %s takes %zu padded compiles; an artifact holds at most %zu: give fewer sizes "
          "that vary or smaller bounds",
          formatSizes(impl.bounds).c_str(), combinations.size(), kMaxPaddedCompiles);
    const SizeMap before = impl.call.sizes;  // the program is left at its sizes
    for (size_t c = 0; c < combinations.size(); ++c) {
      if (!combinations[c].empty()) {
        if (progress)
          progress(impl.plan.arch + " at " + formatSizes(combinations[c]) + " (" +
                   std::to_string(c + 1) + " of " + std::to_string(combinations.size()) + ")");
        if (llvm::Error err = impl.compileAt(combinations[c]))
          return err;
      }
      auto compiled = compileKernels(impl.plan, cache);
      if (!compiled)
        return compiled.takeError();
      ArtifactTarget target{impl.plan, {}};
      for (const auto &body : compiled->bodies)
        target.cubins.push_back(body->cubin);
      if (artifact.targets.empty())
        artifact.parameters = impl.parameters;
      artifact.targets.push_back(std::move(target));
    }
    if (!impl.bounds.empty())
      if (llvm::Error err = impl.compileAt(before))
        return err;
  }
  auto bytes = serializeArtifact(artifact);
  if (!bytes)
    return bytes.takeError();
  // What is written is read back as the runtime will: a plan the reader
  // refuses is found here, not at deployment.
  auto back = parseArtifact(*bytes, path);
  if (!back)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: the artifact does not read back: %s",
                                   back.takeError().message().c_str());
  if (!back->weights.empty()) {
    // The weights must bind as they will at load.
    auto files = WeightFiles::inMemory(path + " (embedded weights)", back->weights);
    if (!files)
      return files.takeError();
    if (auto refs = files->bind(back->inputs(), back->parameters); !refs)
      return refs.takeError();
  }
  return writeFileAtomically(path, *bytes);
}

Status Program::saveArtifact(const std::string &path) {
  if (!p->cache)
    p->cache = std::make_unique<KernelCache>(CacheOptions::fromEnvironment());
  llvm::Error err = fusec::saveArtifact({this}, path, *p->cache);
  if (!err)
    return Status::success();
  return Status::error(llvm::toString(std::move(err)), ErrorCode::CompileFailed);
}

} // namespace fusec
