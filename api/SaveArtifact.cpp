//===- SaveArtifact.cpp - compiled programs into one artifact file --------===//
#include "api/ProgramImpl.h"

#include "compiler/support/AtomicFile.h"
#include "frontends/json/GraphReader.h"
#include "runtime/ArtifactFile.h"
#include "runtime/CompileKernels.h"
#include "runtime/WeightFiles.h"

namespace fusec {

llvm::Error saveArtifact(const std::vector<Program *> &programs, const std::string &path,
                         KernelCache &cache, std::string weights) {
  Artifact artifact;
  artifact.weights = std::move(weights);
  artifact.producer = std::string("fusec ") + version();
  for (Program *program : programs) {
    Program::Impl &impl = ProgramAccess::of(*program);
    for (const ArtifactTarget &t : artifact.targets)
      if (t.plan.arch == impl.plan.arch)
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "architecture %s is asked for twice",
                                       impl.plan.arch.c_str());
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
