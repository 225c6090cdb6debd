//===- Sweep.cpp - one graph over a range of sizes of a named dim ---------===//
#include "tools/fusec/Sweep.h"

#include "api/ProgramImpl.h"
#include "compiler/support/Printable.h"
#include "tools/fusec/ProgramExplanation.h"

#include "llvm/ADT/StringRef.h"

#include <nlohmann/json.hpp>

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

llvm::Expected<std::string> explainSweep(const std::string &graph, const PlanFlags &plan,
                                         const Sweep &sweep, const std::string &format) {
  struct Row {
    int64_t size;
    size_t kernels;
    int64_t bytes;
    double predictedUs, unfusedUs, floorUs, compileMs;
    std::string families;
  };
  std::vector<Row> rows;
  std::string profile;
  for (int64_t size : sweep.sizes) {
    PlanFlags p = plan;
    p.bind.push_back(sweep.name + "=" + std::to_string(size));
    auto start = std::chrono::steady_clock::now();
    auto program = compileGraph(graph, p, /*forGpu=*/false);
    if (!program)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "at %s=%lld: %s",
                                     printable(sweep.name).c_str(), (long long)size,
                                     llvm::toString(program.takeError()).c_str());
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                          start).count();
    Explanation e = explainProgram(**program, p.bind);
    profile = e.profile.name;
    std::map<std::string, int> families;
    for (const ExplainedKernel &k : e.kernels)
      ++families[k.family];
    std::string fam;
    for (const auto &[f, n] : families)
      fam += (fam.empty() ? "" : ", ") + f + (n > 1 ? " x" + std::to_string(n) : "");
    rows.push_back({size, e.launches(), e.bytesFused(), e.predictedUs(), e.unfusedUs(),
                    double(e.bytesFused()) / e.profile.hbmBytesPerSec * 1e6, ms, fam});
  }
  if (format == "json") {
    nlohmann::json j;
    j["graph"] = graph;
    j["dim"] = sweep.name;
    j["profile"] = profile;
    for (const Row &r : rows)
      j["sizes"].push_back({{"size", r.size}, {"launches", r.kernels}, {"hbm_bytes", r.bytes},
                            {"predicted_us", r.predictedUs}, {"unfused_us", r.unfusedUs},
                            {"memory_floor_us", r.floorUs}, {"compile_ms", r.compileMs},
                            {"families", r.families}});
    return j.dump(2) + "\n";
  }
  std::string text = "fusec explain: " + printable(graph) + " over " + printable(sweep.name) +
                     " (profile " + profile + "; each size planned on its own)\n";
  char buf[512];
  std::snprintf(buf, sizeof buf, "%10s %8s %10s %12s %13s %10s %12s %10s  %s\n",
                printable(sweep.name).c_str(), "launches", "HBM MB", "mem floor us",
                "predicted us", "% of floor", "us per unit", "speedup", "families");
  text += buf;
  for (const Row &r : rows) {
    std::snprintf(buf, sizeof buf, "%10lld %8zu %10.1f %12.1f %13.1f %9.0f%% %12.4f %9.2fx  %s\n",
                  (long long)r.size, r.kernels, double(r.bytes) / 1e6, r.floorUs, r.predictedUs,
                  100.0 * r.floorUs / r.predictedUs, r.predictedUs / double(r.size),
                  r.unfusedUs / r.predictedUs, r.families.c_str());
    text += buf;
  }
  text += "(% of floor: the HBM bytes at the profile's copy rate against the prediction; a "
          "compute-bound size sits below it by design. Measure with fusec bench --bind.)\n";
  return text;
}

} // namespace fusec::cli
