//===- SaveArtifact.cpp - compiled programs into one artifact file --------===//
#include "api/ProgramImpl.h"

#include "compiler/support/AtomicFile.h"
#include "frontends/json/GraphReader.h"
#include "runtime/ArtifactFile.h"
#include "runtime/CompileKernels.h"
#include "runtime/WeightFiles.h"
#include "compiler/support/Printable.h"

#include <algorithm>
#include <optional>
#include <set>

namespace fusec {

namespace {

std::string formatSizes(const SizeMap &sizes) {
  std::string s;
  for (const auto &[name, size] : sizes)
    s += (s.empty() ? "" : ",") + printable(name) + "=" + std::to_string(size);
  return s;
}

/// Every combination of the padded sizes of `bounds`' names, the bounds'
/// own first (the sizes a program loads at); an error past `limit`, found
/// before any is made.
llvm::Expected<std::vector<SizeMap>> paddedCombinations(const SizeMap &bounds, size_t limit) {
  size_t count = 1;
  for (const auto &[name, bound] : bounds) {
    const size_t n = paddedSizesUpTo(bound).size();
    if (count > limit / n + 1)
      count = limit + 1;  // past it, without overflow
    else
      count *= n;
  }
  if (count > limit)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--max %s takes more than %zu padded compiles (an artifact holds at "
                                   "most %zu an architecture): give fewer sizes that vary or "
                                   "smaller bounds",
                                   formatSizes(bounds).c_str(), limit, limit);
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
    // A program whose sizes vary holds every padded size's compile, each
    // made here (or the program's own where it has it) and not loaded: the
    // program stays as it was.
    std::vector<SizeMap> combinations = {SizeMap()};
    if (!impl.bounds.empty()) {
      auto all = paddedCombinations(impl.bounds, kMaxPaddedCompiles);
      if (!all)
        return all.takeError();
      combinations = std::move(*all);
    }
    for (size_t c = 0; c < combinations.size(); ++c) {
      std::optional<Program::Impl::Compiled> made;
      const PlanDesc *plan = &impl.plan;
      if (!combinations[c].empty() && combinations[c] != impl.plan.paddedAt) {
        if (auto kept = impl.kept.find(combinations[c]); kept != impl.kept.end()) {
          plan = &kept->second.plan;
        } else {
          if (progress)
            progress(impl.plan.arch + " at " + formatSizes(combinations[c]) + " (" +
                     std::to_string(c + 1) + " of " + std::to_string(combinations.size()) + ")");
          auto compiled = impl.compilePaddedAt(combinations[c]);
          if (!compiled)
            return compiled.takeError();
          made = std::move(*compiled);
          plan = &made->plan;
        }
      }
      auto kernels = compileKernels(*plan, cache);
      if (!kernels)
        return kernels.takeError();
      ArtifactTarget target{*plan, {}};
      for (const auto &body : kernels->bodies)
        target.cubins.push_back(body->cubin);
      if (artifact.targets.empty())
        artifact.parameters = impl.parameters;
      artifact.targets.push_back(std::move(target));
    }
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
  std::lock_guard<std::mutex> lock(p->loading);  // not beside a resize
  if (!p->cache)
    p->cache = std::make_unique<KernelCache>(CacheOptions::fromEnvironment());
  llvm::Error err = fusec::saveArtifact({this}, path, *p->cache);
  if (!err)
    return Status::success();
  return Status::error(llvm::toString(std::move(err)), ErrorCode::CompileFailed);
}

} // namespace fusec
