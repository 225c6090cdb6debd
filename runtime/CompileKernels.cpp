//===- CompileKernels.cpp - a plan's kernels through the kernel cache -----===//
#include "runtime/CompileKernels.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace fusec {

std::vector<std::string_view> CompiledBodies::images() const {
  std::vector<std::string_view> out;
  for (const auto &b : bodies)
    out.push_back(b->cubin);
  return out;
}

llvm::Expected<CompiledBodies> compileKernels(const PlanDesc &plan, KernelCache &cache,
                                              const std::string &arch) {
  // Each distinct source once: a model's layers repeat theirs (a kernel's
  // source carries no plan position; KernelLaunch::source).
  KernelBodies bodies = kernelBodies(plan);
  std::vector<KernelSource> sources;
  for (size_t i : bodies.firstStep)
    sources.push_back({plan.steps[i].name, plan.steps[i].kernel.source,
                       arch.empty() ? plan.arch : arch, {}, false});
  CacheStats before = cache.stats();
  auto start = std::chrono::steady_clock::now();
  unsigned threads = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  auto compiled = cache.getOrCompileAll(sources, threads);
  CompiledBodies out;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CacheStats after = cache.stats();
  out.hits = unsigned((after.memoryHits - before.memoryHits) + (after.diskHits - before.diskHits));
  // The first body that failed to compile is the error; the others' are
  // consumed (an unchecked llvm::Expected aborts in builds with assertions).
  llvm::Error failed = llvm::Error::success();
  for (auto &body : compiled) {
    if (body) {
      out.bodies.push_back(*body);
      continue;
    }
    if (failed)
      llvm::consumeError(body.takeError());
    else
      failed = body.takeError();
  }
  if (failed)
    return std::move(failed);
  return out;
}

} // namespace fusec
