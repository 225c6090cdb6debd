//===- Sweep.cpp - one graph over a range of sizes of a named dim ---------===//
#include "tools/fusec/Sweep.h"

#include "api/ProgramImpl.h"
#include "compiler/support/Printable.h"
#include "tools/fusec/ProgramExplanation.h"

#include "llvm/ADT/StringRef.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace fusec::cli {

llvm::Expected<Sweep> parseSweep(const std::string &text) {
  auto fail = [&](const std::string &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "--sweep '%s': %s",
                                   printable(text).c_str(), why.c_str());
  };
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return fail("expected NAME=N,N,... (e.g. S=1,16,128,1024)");
  Sweep s;
  s.name = text.substr(0, eq);
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(text).substr(eq + 1).split(parts, ',');
  for (llvm::StringRef p : parts) {
    int64_t v = 0;
    if (p.trim().getAsInteger(10, v) || v < 1 || v > (int64_t(1) << 31))
      return fail("'" + printable(p.str()) + "' is not a size from 1 to 2147483648");
    s.sizes.push_back(v);
  }
  if (s.sizes.size() > 64)
    return fail("at most 64 sizes");
  return s;
}

SweepPrograms::SweepPrograms(std::string graph, PlanFlags plan, std::string name, bool forGpu)
    : graph(std::move(graph)), name(std::move(name)), plan(std::move(plan)), forGpu(forGpu) {
  isPadded = std::any_of(this->plan.max.begin(), this->plan.max.end(), [&](const std::string &m) {
    return llvm::StringRef(m).starts_with(this->name + "=");
  });
}

llvm::Expected<Program *> SweepPrograms::at(int64_t size) {
  auto fail = [&](const std::string &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "at %s=%lld: %s",
                                   printable(name).c_str(), (long long)size, why.c_str());
  };
  if (isPadded && program) {
    if (Status s = program->resize({{name, size}}); !s)
      return fail(s.message());
    return program.get();
  }
  PlanFlags p = plan;
  p.bind.push_back(name + "=" + std::to_string(size));
  auto compiled = compileGraph(graph, p, forGpu);
  if (!compiled)
    return fail(llvm::toString(compiled.takeError()));
  program = std::move(*compiled);
  return program.get();
}

llvm::Expected<std::string> explainSweep(const std::string &graph, const PlanFlags &plan,
                                         const Sweep &sweep, const std::string &format) {
  struct Row {
    int64_t size, compiledAt;
    size_t kernels;
    int64_t bytes;
    double predictedUs, unfusedUs, floorUs, compileMs;
    std::string families;
  };
  std::vector<Row> rows;
  std::string profile;
  SweepPrograms programs(graph, plan, sweep.name, /*forGpu=*/false);
  for (int64_t size : sweep.sizes) {
    PlanFlags p = plan;
    p.bind.push_back(sweep.name + "=" + std::to_string(size));
    auto start = std::chrono::steady_clock::now();
    auto next = programs.at(size);
    if (!next)
      return next.takeError();
    Program &program = **next;
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                          start).count();
    Explanation e = explainProgram(program, p.bind);
    const int64_t padded = e.paddedSizes.count(sweep.name) ? e.paddedSizes.at(sweep.name) : size;
    profile = e.profile.name;
    std::map<std::string, int> families;
    for (const ExplainedKernel &k : e.kernels)
      ++families[k.family];
    std::string fam;
    for (const auto &[f, n] : families)
      fam += (fam.empty() ? "" : ", ") + f + (n > 1 ? " x" + std::to_string(n) : "");
    rows.push_back({size, padded, e.launches(), e.bytesFused(), e.predictedUs(), e.unfusedUs(),
                    double(e.bytesFused()) / e.profile.hbmBytesPerSec * 1e6, ms, fam});
  }
  if (format == "json") {
    nlohmann::json j;
    j["graph"] = graph;
    j["dim"] = sweep.name;
    j["profile"] = profile;
    for (const Row &r : rows)
      j["sizes"].push_back({{"size", r.size}, {"compiled_at", r.compiledAt}, {"launches", r.kernels}, {"hbm_bytes", r.bytes},
                            {"predicted_us", r.predictedUs}, {"unfused_us", r.unfusedUs},
                            {"memory_floor_us", r.floorUs}, {"compile_ms", r.compileMs},
                            {"families", r.families}});
    return j.dump(2) + "\n";
  }
  std::string how = programs.padded() ? std::to_string(programs.compiles()) +
                                 " padded compiles serve every size (--max)"
                           : std::string("each size planned on its own");
  std::string text = "fusec explain: " + printable(graph) + " over " + printable(sweep.name) +
                     " (profile " + profile + "; " + how + ")\n";
  char buf[512];
  std::snprintf(buf, sizeof buf, "%10s %11s %8s %10s %12s %13s %10s %12s %10s  %s\n",
                printable(sweep.name).c_str(), "compiled at", "launches", "HBM MB",
                "mem floor us", "predicted us", "% of floor", "us per unit", "speedup",
                "families");
  text += buf;
  for (const Row &r : rows) {
    std::snprintf(buf, sizeof buf,
                  "%10lld %11lld %8zu %10.1f %12.1f %13.1f %9.0f%% %12.4f %9.2fx  %s\n",
                  (long long)r.size, (long long)r.compiledAt, r.kernels, double(r.bytes) / 1e6, r.floorUs, r.predictedUs,
                  100.0 * r.floorUs / r.predictedUs, r.predictedUs / double(r.size),
                  r.unfusedUs / r.predictedUs, r.families.c_str());
    text += buf;
  }
  text += "(% of floor: the HBM bytes at the profile's copy rate against the prediction; a "
          "compute-bound size sits below it by design. Measure with fusec bench --bind.)\n";
  return text;
}

} // namespace fusec::cli
