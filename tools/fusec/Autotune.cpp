//===- Autotune.cpp - `fusec bench --autotune`: time GEMM tile candidates -===//
#include "tools/fusec/Autotune.h"

#include "runtime/TuningCache.h"
#include "runtime/api/ProgramImpl.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

namespace fusec::cli {

namespace {
// More than any shape has (codegen/GemmConfig.cpp); extra indices repeat the
// heuristic's configuration and are skipped.
constexpr int kMaxCandidates = 6;
// Candidates are timed in turn, this many rounds, each keeping its fastest
// round: timed once each in order, the first candidate ran on a cold, not yet
// power-capped GPU and the later ones on a throttled one (H100, Q/K/V side by
// side: 276 us for the first candidate alone, 262-263 us in whole-graph runs;
// bench/NOTES.md).
constexpr int kRounds = 3;
} // namespace

llvm::Error autotuneGemms(const std::string &graph, const PlanFlags &flags,
                          const BenchSettings &settings) {
  std::optional<std::string> path = TuningCache::defaultPath();
  if (!path)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--autotune keeps its results in the disk cache, which is off "
                                   "(FUSEC_CACHE_DIR=off); set FUSEC_CACHE_DIR to a directory");
  std::string warning;
  TuningCache cache = TuningCache::load(*path, &warning);
  if (!warning.empty())
    llvm::errs() << "fusec: warning: " << warning << "\n";
  // key -> (config, fastest median us), in the order tried.
  std::map<std::string, std::vector<std::pair<std::string, double>>> timed;
  std::optional<BenchEnvironment> env;
  BenchSettings s = settings;
  s.perStep = true;
  s.tunedStepsOnly = true;
  std::vector<int> candidates;  // those with a configuration not timed before
  for (int round = 0; round < kRounds; ++round)
  for (int i = 0; i < kMaxCandidates; ++i) {
    if (round > 0 && llvm::find(candidates, i) == candidates.end())
      continue;
    PlanFlags f = flags;
    f.noFuse = false;
    f.gemmCandidate = i;
    // Each GEMM kernel timed alone: a kernel sharing a launch has no tuning
    // key, and which kernels share depends on the candidates' block sizes.
    f.noShare = true;
    auto program = compileGraph(graph, f, /*forGpu=*/true);
    if (!program)
      return program.takeError();
    const PlanDesc &plan = (*program)->impl().plan;
    bool fresh = false;
    // Kernels without a tuning key (sibling GEMVs) have one configuration.
    for (const PlanStep &st : plan.steps)
      if (tunableGemmStep(st)) {
        auto &tried = timed[st.kernel.gemmKey];
        fresh |= llvm::none_of(tried, [&](auto &t) { return t.first == st.kernel.gemmConfig; });
      }
    if (timed.empty()) {
      llvm::errs() << "fusec: --autotune: no fusec GEMM kernels in this plan (its matmuls run "
                      "through cuBLASLt; --gemm fusec tunes fusec's kernels anyway)\n";
      return llvm::Error::success();
    }
    if (round == 0 && !fresh)
      continue;  // every kernel fell back to a configuration already timed
    if (round == 0)
      candidates.push_back(i);
    if (!env) {
      auto e = measureEnvironment(**program);
      if (!e)
        return e.takeError();
      env = *e;
    }
    llvm::errs() << "fusec: --autotune: timing candidate " << i << " (round " << round + 1
                 << " of " << kRounds << ")...\n";
    auto t = timePlan(**program, *env, s);
    if (!t)
      return t.takeError();
    for (size_t k = 0; k < plan.steps.size() && k < t->steps.size(); ++k) {
      const PlanStep &st = plan.steps[k];
      if (!tunableGemmStep(st))
        continue;
      auto &tried = timed[st.kernel.gemmKey];
      auto it = llvm::find_if(tried, [&](auto &p) { return p.first == st.kernel.gemmConfig; });
      if (it == tried.end())
        tried.push_back({st.kernel.gemmConfig, t->steps[k].medianUs});
      else if (round > 0)
        it->second = std::min(it->second, t->steps[k].medianUs);
    }
  }
  for (auto &[key, tried] : timed) {
    if (tried.empty())
      continue;
    auto best = tried.front();
    std::string line = "fusec: tuned " + key + ":";
    for (auto &[config, us] : tried) {
      char buf[96];
      std::snprintf(buf, sizeof buf, " [%s] %.1f us", config.c_str(), us);
      line += buf;
      if (us < best.second)
        best = {config, us};
    }
    llvm::errs() << line << "\n  -> " << best.first << "\n";
    cache.set(key, {best.first, best.second});
  }
  if (llvm::Error err = cache.save())
    return err;
  llvm::errs() << "fusec: tuning results written to " << *path << "\n";
  return llvm::Error::success();
}

} // namespace fusec::cli
