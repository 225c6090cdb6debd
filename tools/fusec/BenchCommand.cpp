//===- BenchCommand.cpp - `fusec bench`: fused vs unfused, measured -------===//
//
// Times the fused plan and the --no-fuse plan of a graph with CUDA events:
// warm-up, then the median of many runs, with input sets rotated so that the
// inputs come from HBM rather than L2. Prints, per kernel, bytes moved, its
// time alone and what it adds to the whole graph (BenchTiming.h, inGraphUs),
// and the share of the device-to-device copy bandwidth measured in the same
// run, beside the cost model's prediction.
//
//===----------------------------------------------------------------------===//
#include "tools/fusec/Autotune.h"
#include "tools/fusec/BenchTiming.h"
#include "tools/fusec/Sweep.h"
#include "tools/fusec/Commands.h"
#include "tools/fusec/Driver.h"
#include "tools/fusec/Sharding.h"

#include "runtime/DeviceMeasurements.h"
#include "api/ProgramImpl.h"

#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>

#include <cstdio>
#include <ctime>
#include "compiler/support/LlvmError.h"

namespace fusec::cli {

namespace {
struct BenchOptions {
  std::string graph;
  PlanFlags plan;
  int iters = 50, warmup = 5;
  double warmupSeconds = 0.5;
  uint64_t seed = 0;
  bool json = false;
  TensorSources sources;
  bool noSteps = false;
  bool autotune = false;
  bool cudaGraph = false;
  std::string sweep;  ///< --sweep NAME=N,...
};

std::string fmtBytes(double b) {
  char buf[32];
  if (b >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
  else if (b >= 1e6)
    std::snprintf(buf, sizeof buf, "%.1f MB", b / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.1f KB", b / 1e3);
  return buf;
}

void printPlan(const char *title, const PlanTiming &t, double copyBw) {
  llvm::outs() << title << ": " << t.steps.size() << " step(s)\n";
  char line[512];
  std::snprintf(line, sizeof line, "  %-28s %-17s %10s %10s %12s %8s %8s %12s %11s\n",
                "kernel", "family", "bytes", "time(us)", "in graph(us)", "GB/s", "%copyBW",
                "roofline(us)", "planner(us)");
  llvm::outs() << line;
  for (const StepTiming &s : t.steps) {
    if (s.medianUs <= 0) {  // not timed (--no-steps)
      std::snprintf(line, sizeof line, "  %-28s %-17s %10s %10s %12s %8s %8s %12.1f %11.1f\n",
                    s.name.substr(0, 28).c_str(), s.family.c_str(), fmtBytes(s.bytes).c_str(),
                    "-", "-", "-", "-", s.predictedUs, s.plannerUs);
      llvm::outs() << line;
      continue;
    }
    double gbs = s.bytes / (s.medianUs * 1e-6) / 1e9;
    std::snprintf(line, sizeof line,
                  "  %-28s %-17s %10s %10.1f %12.1f %8.0f %7.1f%% %12.1f %11.1f",
                  s.name.substr(0, 28).c_str(), s.family.c_str(), fmtBytes(s.bytes).c_str(),
                  s.medianUs, s.inGraphUs, gbs, 100.0 * gbs * 1e9 / copyBw, s.predictedUs,
                  s.plannerUs);
    llvm::outs() << line;
    // A matmul is judged by its math rate (the profile's peak), not bandwidth.
    if (s.flops > 0) {
      double tflops = s.flops / (s.medianUs * 1e-6) / 1e12;
      std::snprintf(line, sizeof line, "   %.0f TFLOP/s = %.0f%% of the profile's matmul peak",
                    tflops, 100.0 * tflops * 1e12 / t.matmulPeak);
      llvm::outs() << line;
    }
    llvm::outs() << "\n";
  }
  std::snprintf(line, sizeof line, "  %-28s %-17s %10s %10.1f %12s %8s %8s %12.1f\n",
                "whole graph", "", fmtBytes(t.bytes).c_str(), t.medianUs, "", "", "",
                t.predictedUs);
  llvm::outs() << line;
  if (!t.steps.empty() && t.steps.front().medianUs > 0)
    llvm::outs() << "  (time: each kernel run alone, between two events, its graph inputs "
                    "rotated out of L2;\n   in graph: what it adds to the graph's time, its "
                    "launch beside the kernel before it;\n   roofline: bytes at the copy rate "
                    "or flops at the math rate, no launch; planner: fusec explain's "
                    "prediction)\n";
  std::snprintf(line, sizeof line, "  the planner predicted %.1f us for the plan\n",
                t.plannerUs);
  llvm::outs() << line;
}

nlohmann::json toJson(const PlanTiming &t, double copyBw) {
  nlohmann::json j;
  j["median_us"] = t.medianUs;
  j["predicted_us"] = t.predictedUs;
  j["planner_us"] = t.plannerUs;
  j["bytes"] = t.bytes;
  j["host_us_per_launch"] = t.hostUsPerLaunch;
  j["host_us_per_call"] = t.hostUsPerCall;
  for (const StepTiming &s : t.steps) {
    double bw = s.bytes / (s.medianUs * 1e-6);
    j["steps"].push_back({{"name", s.name}, {"family", s.family}, {"bytes", s.bytes},
                          {"median_us", s.medianUs}, {"in_graph_us", s.inGraphUs},
                          {"input_sets", s.inputSets},
                          {"predicted_us", s.predictedUs}, {"planner_us", s.plannerUs},
                          {"floor_us", s.bytes / copyBw * 1e6},
                          {"pct_copy_bw", 100.0 * bw / copyBw}, {"nodes", s.nodes},
                          {"flops", s.flops},
                          {"pct_matmul_peak",
                           s.flops > 0 ? 100.0 * s.flops / (s.medianUs * 1e-6) / t.matmulPeak
                                       : 0.0}});
  }
  return j;
}

/// Keeps this machine's copy bandwidth and SM count for the profile, so that
/// later compiles predict with them (runtime/DeviceMeasurements.h).
void recordMeasurements(const std::string &profile, const BenchEnvironment &env, bool quiet) {
  std::optional<std::string> path = measuredDevicePath();
  if (!path)
    return;
  std::time_t now = std::time(nullptr);
  char date[16];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  MeasuredDevice m{env.copyBytesPerSec, env.smCount, env.deviceName, date};
  if (llvm::Error err = saveMeasuredDevice(*path, profile, m))
    llvm::errs() << "fusec: warning: could not keep the measured copy bandwidth: "
                 << llvm::toString(std::move(err)) << "\n";
  else if (!quiet)
    llvm::errs() << "fusec: later compiles for profile " << profile << " predict with the copy "
                 << "bandwidth measured here (" << *path << ")\n";
}

/// What every timing's JSON starts with: the graph, the GPU, the plan's
/// profile and target, the copy bandwidth measured, replays or launches.
nlohmann::json headerJson(const std::string &graph, const BenchEnvironment &env,
                          const PlanDesc &plan, const BenchSettings &settings) {
  nlohmann::json j;
  j["graph"] = graph;
  j["device"] = env.deviceName;
  j["profile"] = plan.device;
  j["arch"] = plan.arch;
  j["copy_bw_bytes_per_s"] = env.copyBytesPerSec;
  j["cuda_graph"] = settings.cudaGraph;
  return j;
}

/// `--sweep NAME=N,...`: the fused plan compiled and timed at each size (no
/// steps alone, no unfused plan), a row a size: what the compile took (the
/// kernel cache serves bodies that repeat across sizes), the time against
/// the floor of the bytes, and the planner's prediction.
int runBenchSweep(const BenchOptions &opts, BenchSettings settings) {
  if (!opts.sources.inputs.empty())
    return reportError("--sweep draws inputs of each size at random; it takes no --inputs");
  if (opts.autotune)
    return reportError("--sweep times the plans as they are; autotune first, without --sweep");
  auto sweep = parseSweep(opts.sweep);
  if (!sweep)
    return reportError(sweep.takeError());
  settings.perStep = false;
  std::optional<BenchEnvironment> env;
  nlohmann::json rows = nlohmann::json::array();
  std::string text;
  char line[512];
  SweepPrograms programs(opts.graph, opts.plan, sweep->name, /*forGpu=*/true);
  for (int64_t size : sweep->sizes) {
    auto start = std::chrono::steady_clock::now();
    auto next = programs.at(size);
    if (!next)
      return reportError(next.takeError());
    Program *program = *next;
    if (Status s = program->load(); !s)
      return reportError(s.message());
    double compileMs = std::chrono::duration<double, std::milli>(
                           std::chrono::steady_clock::now() - start).count();
    if (!env) {
      auto measured = measureEnvironment(*program);
      if (!measured)
        return reportError(measured.takeError());
      env = *measured;
    }
    if (!opts.json)
      llvm::errs() << "fusec: " << sweep->name << "=" << size << ": compiled in "
                   << int(compileMs + 0.5) << " ms, timing...\n";
    auto t = timePlan(*program, *env, settings);
    if (!t)
      return reportError(t.takeError());
    const double floorUs = t->bytes / env->copyBytesPerSec * 1e6;
    const std::map<std::string, int64_t> at = program->paddedSizes();
    const int64_t compiledAt = at.count(sweep->name) ? at.at(sweep->name) : size;
    rows.push_back({{"size", size}, {"compiled_at", compiledAt}, {"compiles", program->compiles()},
                    {"compile_ms", compileMs}, {"median_us", t->medianUs},
                    {"planner_us", t->plannerUs}, {"bytes", t->bytes},
                    {"memory_floor_us", floorUs}, {"steps", t->steps.size()}});
    std::snprintf(line, sizeof line, "%10lld %11lld %11.0f %6zu %11.1f %12.1f %9.0f%% %12.1f %12.4f\n",
                  (long long)size, (long long)compiledAt, compileMs, t->steps.size(),
                  t->medianUs, floorUs, 100.0 * floorUs / t->medianUs, t->plannerUs,
                  t->medianUs / double(size));
    text += line;
  }
  if (opts.json) {
    nlohmann::json j;
    j["graph"] = opts.graph;
    j["device"] = env->deviceName;
    j["dim"] = sweep->name;
    j["copy_bw_bytes_per_s"] = env->copyBytesPerSec;
    j["cuda_graph"] = settings.cudaGraph;
    j["sizes"] = rows;
    llvm::outs() << j.dump(2) << "\n";
    return kOk;
  }
  const std::string how =
      programs.padded() ? std::to_string(programs.compiles()) +
                              " padded compiles serve every size; the floor is the padded plan's "
                              "bytes"
                        : "each size compiled on its own";
  std::snprintf(line, sizeof line,
                "fusec bench %s over %s on %s (copy bandwidth %.0f GB/s; median of %d runs; "
                "%s)\n%10s %11s %11s %6s %11s %12s %10s %12s %12s\n",
                opts.graph.c_str(), sweep->name.c_str(), env->deviceName.c_str(),
                env->copyBytesPerSec / 1e9, opts.iters, how.c_str(), sweep->name.c_str(), "compiled at", "compile ms", "steps", "fused us",
                "mem floor us", "% of floor", "planner us", "us per unit");
  llvm::outs() << line << text;
  return kOk;
}

/// `--ranks N`: the fused plan split over N GPUs of this machine, a thread
/// a rank (timeSplitPlan), rank 0's steps printed, the slowest rank's time
/// beside it. The floor is rank 0's own bytes: each GPU moves its share.
int runBenchRanks(const BenchOptions &opts, const PlanFlags &flags, BenchSettings settings) {
  if (opts.autotune)
    return reportError("--autotune times one GPU's kernels; tune without --ranks");
  auto program = compileGraph(opts.graph, flags, /*forGpu=*/true);
  if (!program)
    return reportError(program.takeError());
  auto env = measureEnvironment(**program);
  if (!env)
    return reportError(env.takeError());
  const PlanDesc &plan = ProgramAccess::of(**program).plan;
  if (!opts.json)
    llvm::errs() << "fusec: timing the fused plan on " << plan.ranks << " GPUs ("
                 << plan.steps.size() << " step(s) on each)...\n";
  double slowestUs = 0;
  auto t = timeSplitPlan(**program, *env, settings, slowestUs);
  if (!t)
    return reportError(t.takeError());
  if (opts.json) {
    nlohmann::json j = headerJson(opts.graph, *env, plan, settings);
    j["ranks"] = plan.ranks;
    j["fused"] = toJson(*t, env->copyBytesPerSec);
    j["slowest_rank_us"] = slowestUs;
    j["one_shot_fallback"] = t->peerFallback;
    llvm::outs() << j.dump(2) << "\n";
    return kOk;
  }
  char line[512];
  std::snprintf(line, sizeof line,
                "fusec bench %s over %d GPUs (%s; profile %s, %s)\nmeasured copy bandwidth "
                "%.0f GB/s (read + write); median of %d runs%s\n\n",
                opts.graph.c_str(), plan.ranks, env->deviceName.c_str(), plan.device.c_str(),
                plan.arch.c_str(), env->copyBytesPerSec / 1e9, opts.iters,
                settings.cudaGraph ? "; each rank's plan one CUDA graph replay" : "");
  llvm::outs() << line;
  printPlan("fused, rank 0", *t, env->copyBytesPerSec);
  if (!t->peerFallback.empty())
    llvm::outs() << "the one-shot all-reduces ran through NCCL: " << t->peerFallback << "\n";
  std::snprintf(line, sizeof line,
                "\nslowest rank: %.1f us; rank 0's bytes at the copy bandwidth: %.1f us (%.0f%% "
                "of it); planner: %.1f us\n",
                slowestUs, t->bytes / env->copyBytesPerSec * 1e6,
                100.0 * t->bytes / env->copyBytesPerSec * 1e6 / std::max(slowestUs, 1e-9),
                t->plannerUs);
  llvm::outs() << line;
  return kOk;
}

int runBench(const BenchOptions &opts) {
  BenchSettings settings{opts.iters, opts.warmup, opts.seed, opts.sources, !opts.noSteps,
                         opts.warmupSeconds};
  noteModel(settings.sources, opts.graph);  // an ONNX model's own weights
  if (opts.plan.ranks > 1 && !opts.sweep.empty())
    return reportError("--sweep times one GPU; leave out --ranks");
  if (!opts.sweep.empty()) {
    settings.cudaGraph = opts.cudaGraph;
    return runBenchSweep(opts, settings);
  }
  auto bind = bindFromInputs(opts.graph, opts.plan.bind, opts.sources.inputs);
  if (!bind)
    return reportError(bind.takeError());
  PlanFlags plan = opts.plan;
  plan.bind = *bind;
  if (plan.ranks > 1) {
    settings.cudaGraph = opts.cudaGraph;
    return runBenchRanks(opts, plan, settings);
  }
  if (opts.autotune)
    if (llvm::Error err = autotuneGemms(opts.graph, plan, settings))
      return reportError(std::move(err));
  settings.cudaGraph = opts.cudaGraph;
  PlanFlags unfusedFlags = plan;
  unfusedFlags.noFuse = true;
  PlanFlags fusedFlags = plan;
  fusedFlags.noFuse = false;
  auto fused = compileGraph(opts.graph, fusedFlags, /*forGpu=*/true);
  if (!fused)
    return reportError(fused.takeError());
  auto unfused = compileGraph(opts.graph, unfusedFlags, /*forGpu=*/true);
  if (!unfused)
    return reportError(unfused.takeError());
  auto env = measureEnvironment(**fused);
  if (!env)
    return reportError(env.takeError());
  recordMeasurements(ProgramAccess::of(**fused).plan.device, *env, opts.json);
  // Each timing warms up first (BenchSettings::warmupSeconds): say how long that takes.
  auto announce = [&](const char *which, Program &p) {
    if (opts.json)
      return;
    size_t steps = ProgramAccess::of(p).plan.steps.size();
    double warm = settings.warmupSeconds * (1 + (settings.perStep ? steps : 0));
    llvm::errs() << "fusec: timing the " << which << " plan (" << steps << " step(s)"
                 << (warm >= 2 ? ", about " + std::to_string(int(warm + 0.5)) + " s of warm-up"
                               : std::string())
                 << ")...\n";
  };
  announce("fused", **fused);
  auto tf = timePlan(**fused, *env, settings);
  if (!tf)
    return reportError(tf.takeError());
  announce("unfused", **unfused);
  auto tu = timePlan(**unfused, *env, settings);
  if (!tu)
    return reportError(tu.takeError());
  double measured = tu->medianUs / tf->medianUs;
  double predicted = tu->predictedUs / tf->predictedUs;
  double planned = tf->plannerUs > 0 ? tu->plannerUs / tf->plannerUs : 0.0;
  if (opts.json) {
    nlohmann::json j = headerJson(opts.graph, *env, ProgramAccess::of(**fused).plan, settings);
    j["input_sets"] = tf->inputSets;
    j["overlapped_launches"] = launchesOverlap(ProgramAccess::of(**fused).plan);
    j["fused"] = toJson(*tf, env->copyBytesPerSec);
    j["unfused"] = toJson(*tu, env->copyBytesPerSec);
    j["speedup_measured"] = measured;
    j["speedup_predicted"] = predicted;
    j["speedup_planner"] = planned;
    llvm::outs() << j.dump(2) << "\n";
    return kOk;
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "fusec bench %s on %s (profile %s, %s)\nmeasured copy bandwidth %.0f GB/s "
                "(read + write); %d input set(s) rotated; median of %d runs\n",
                opts.graph.c_str(), env->deviceName.c_str(),
                ProgramAccess::of(**fused).plan.device.c_str(), ProgramAccess::of(**fused).plan.arch.c_str(),
                env->copyBytesPerSec / 1e9, tf->inputSets, opts.iters);
  llvm::outs() << line
               << (launchesOverlap(ProgramAccess::of(**fused).plan)
                       ? "each kernel is launched as the previous one's blocks exit "
                         "(--no-overlap: after it completes)\n\n"
                       : "each kernel is launched after the previous one completes\n\n");
  printPlan("fused", *tf, env->copyBytesPerSec);
  llvm::outs() << "\n";
  printPlan("unfused (--no-fuse)", *tu, env->copyBytesPerSec);
  std::snprintf(line, sizeof line,
                "\nspeedup of fusion: measured %.2fx; %.2fx from the rooflines, %.2fx predicted "
                "by the planner\n",
                measured, predicted, planned);
  llvm::outs() << line;
  if (settings.cudaGraph)
    std::snprintf(line, sizeof line,
                  "host cost of one CUDA graph replay: %.2f us (%zu launches inside)\n",
                  tf->hostUsPerCall, ProgramAccess::of(**fused).plan.steps.size());
  else
    std::snprintf(line, sizeof line, "host cost per launch: %.2f us (%.2f us a call)\n",
                  tf->hostUsPerLaunch, tf->hostUsPerCall);
  llvm::outs() << line;
  return kOk;
}
} // namespace

void addBenchCommand(CLI::App &app, int &exitCode) {
  auto opts = std::make_shared<BenchOptions>();
  CLI::App *cmd = app.add_subcommand(
      "bench", "Time the fused and the unfused plan on the GPU, kernel by kernel");
  cmd->footer("Examples:\n"
              "  fusec bench examples/softmax.json\n"
              "  fusec bench bench/graphs/rms_norm.json --iters 200 --json > rms.json\n"
              "  fusec bench model.onnx --bind batch=1 --sweep sequence=1,128,1000,4096\n"
              "  fusec bench examples/tp_llama_block.json --ranks 2 --graph   # over 2 GPUs");
  cmd->add_option("graph", opts->graph, "graph file (JSON, docs/graph-format.md)")->required();
  cmd->add_option("--iters", opts->iters, "timed runs (the median is reported)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--warmup", opts->warmup, "untimed runs first")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--warmup-s", opts->warmupSeconds,
                  "and untimed runs for at least this many seconds, so that the GPU is timed at "
                  "the clock a sustained load runs at (its power cap), not the first burst's")
      ->check(finiteIn(0.0, 60.0))
      ->capture_default_str();
  addSeedOption(cmd, opts->seed);
  cmd->add_flag("--json", opts->json, "print JSON instead of tables");
  cmd->add_flag("--no-steps", opts->noSteps,
                "time only whole plans, not each kernel alone (faster on many-kernel plans)");
  addTensorSources(cmd, opts->sources);
  cmd->add_option("--device", opts->plan.device, "cost-model profile (default: the GPU's)");
  cmd->add_option("--arch", opts->plan.arch, "NVRTC target (default: the GPU's)");
  cmd->add_option("--gemm", opts->plan.gemm,
                  "matmul groups of the fused plan: auto, fusec or cublaslt (the unfused plan "
                  "always runs matmuls through cuBLASLt)")
      ->check(CLI::IsMember({"auto", "fusec", "cublaslt"}));
  addLaunchFlags(cmd, opts->plan);
  addBindOption(cmd, opts->plan.bind);
  addMaxOption(cmd, opts->plan.max);
  addSplitOptions(cmd, opts->plan.ranks, opts->plan.shard);
  cmd->add_flag("--graph", opts->cudaGraph,
                "time whole plans as CUDA graph replays (each input set captured once; what "
                "Program::replay does) instead of launch by launch");
  cmd->add_flag("--autotune", opts->autotune,
                "first time every tile configuration candidate of each fusec GEMM kernel and "
                "keep the fastest in the tuning cache (<cache dir>/gemm-tuning.json), which "
                "every later compile reads");
  cmd->add_option("--sweep", opts->sweep,
                  "NAME=N,N,...: compile and time the fused plan at each size of the graph's "
                  "named dim NAME (the others bound by --bind), a row a size: compile time, "
                  "time against the floor of its bytes, the planner's prediction, time per unit "
                  "of size (a jump is a cliff)");
  cmd->callback([opts, &exitCode] { exitCode = runBench(*opts); });
}

} // namespace fusec::cli
