//===- Autotune.cpp - `fusec bench --autotune`: time GEMM candidates ------===//
#include "tools/fusec/Autotune.h"

#include "compiler/plan/MatmulTuning.h"
#include "runtime/TuningCache.h"
#include "api/ProgramImpl.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>
#include "compiler/support/LlvmError.h"

namespace fusec::cli {

namespace {
// More than any shape has (codegen/GemmConfig.cpp); extra indices repeat the
// heuristic's configuration and are skipped. A cuBLASLt matmul's candidate i
// is its heuristic's i-th usable result: at 32 x 6144 x 4096 (decode Q/K/V)
// rank 4 is about 6% faster than rank 0 (docs/matmul.md, "Tile
// configurations and autotuning").
constexpr int kMaxCandidates = 6;
// Candidates are timed in turn, this many rounds, each keeping its fastest
// round: timed once each in order, the first candidate would run on a cold,
// not yet power-capped GPU and the later ones on a throttled one
// (docs/matmul.md, "Tile configurations and autotuning").
constexpr int kRounds = 3;

/// A tunable step's configuration: a fusec kernel's tiles, or for a cuBLASLt
/// matmul `rank` (what the plan asks for, or what the runtime ran).
std::string configOf(const PlanStep &st, int rank) {
  return st.kind == PlanStep::Kind::Matmul ? matmulRankConfig(rank) : st.kernel.gemmConfig;
}
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
    const PlanDesc &plan = ProgramAccess::of(**program).plan;
    bool fresh = false;
    // Kernels without a tuning key (sibling GEMVs) have one configuration.
    for (const PlanStep &st : plan.steps)
      if (tunableStep(st)) {
        auto &tried = timed[tuningKeyOf(st)];
        const std::string config = configOf(st, st.matmul.algoRank);
        fresh |= llvm::none_of(tried, [&](auto &t) { return t.first == config; });
      }
    if (timed.empty()) {
      llvm::errs() << "fusec: --autotune: no matrix products in this plan to tune\n";
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
    const Executable &exe = *ProgramAccess::of(**program).exe;
    for (size_t k = 0; k < plan.steps.size() && k < t->steps.size(); ++k) {
      const PlanStep &st = plan.steps[k];
      if (!tunableStep(st))
        continue;
      // What ran: a cuBLASLt rank past its usable results runs rank 0.
      const std::string config = configOf(st, exe.matmulRank(k));
      auto &tried = timed[tuningKeyOf(st)];
      auto it = llvm::find_if(tried, [&](auto &p) { return p.first == config; });
      if (it == tried.end())
        tried.push_back({config, t->steps[k].medianUs});
      else
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
