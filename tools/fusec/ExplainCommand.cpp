//===- ExplainCommand.cpp - `fusec explain`: trips, launches, predictions -===//
#include "tools/fusec/Commands.h"
#include "tools/fusec/Driver.h"
#include "tools/fusec/ProgramExplanation.h"
#include "tools/fusec/Sweep.h"

#include "compiler/pipeline/Explain.h"
#include "compiler/pipeline/SharedLaunch.h"
#include "api/ProgramImpl.h"
#include "frontends/json/GraphReader.h"
#include "compiler/support/LlvmError.h"
#include "compiler/plan/PlanJson.h"
#include "compiler/support/Printable.h"
#include "runtime/ArtifactFile.h"
#include "mlir/Support/Timing.h"
#include "runtime/CompileKernels.h"

#include <algorithm>
#include <set>
#include "compiler/support/ReadBytes.h"

#include <cstdio>

namespace fusec::cli {

namespace {
struct ExplainOptions {
  std::string graph, format = "text", output = "-", sweep;
  bool timings = false;
  PlanFlags plan;
};

/// `fusec explain model.fusec`: what an artifact holds, read as the runtime
/// reads it (checked whole): its producer, the graph's inputs (parameters
/// marked) and outputs, and per target its steps with their launch shapes
/// and predictions, and the memory a stream's calls need.
int explainArtifact(const ExplainOptions &opts) {
  const PlanFlags none;
  if (opts.plan.noFuse || !opts.plan.device.empty() || !opts.plan.arch.empty() ||
      opts.plan.gemm != none.gemm || opts.plan.noShare || !opts.plan.bind.empty() ||
      !opts.plan.max.empty())
    return reportError("'" + printable(opts.graph) +
                       "' is compiled already: planning flags do not apply to it");
  if (opts.format == "dot")
    return reportError("--format dot draws a graph's fusion; an artifact holds only its plan "
                       "(text or json)");
  auto artifact = readArtifact(opts.graph);
  if (!artifact)
    return reportError(artifact.takeError().message());
  const Artifact &a = *artifact;
  std::string text;
  if (opts.format == "json") {
    nlohmann::json j = {{"artifact", opts.graph}, {"producer", a.producer},
                        {"embedded_weight_bytes", a.weights.size()}};
    for (const ArtifactTarget &t : a.targets) {
      std::vector<std::string> bodies;
      nlohmann::json plan = planToJson(t.plan, bodies);
      size_t bytes = 0;
      for (const std::string &c : t.cubins)
        bytes += c.size();
      j["targets"].push_back({{"arch", t.plan.arch}, {"cubin_bytes", bytes},
                              {"distinct_kernels", bodies.size()}, {"plan", plan}});
      if (!t.plan.paddedAt.empty())
        j["targets"].back()["sizes"] = t.plan.paddedAt;
    }
    text = j.dump(2) + "\n";
  } else {
    auto line = [&](const std::string &l) { text += l + "\n"; };
    auto spec = [](const TensorSpec &t) {
      return printable(t.name) + ": " + describeTensor(t.dtype, t.shape);
    };
    line("artifact " + printable(opts.graph) + ", written by " + printable(a.producer));
    // A split program's tensors are one rank's: say which are blocks.
    const PlanDesc *first = a.targets.empty() ? nullptr : &a.targets.front().plan;
    auto block = [&](const std::vector<int64_t> &shards, size_t i) -> std::string {
      if (first->ranks < 2 || i >= shards.size() || shards[i] < 0)
        return "";
      return "  (a rank's block: split along dim " + std::to_string(shards[i]) + " over " +
             std::to_string(first->ranks) + " ranks)";
    };
    // Sizes that vary: the dims they mark, and the padded compiles held.
    auto varying = [&](const std::vector<std::vector<std::string>> &dims, size_t i) {
      std::string marked;
      if (i < dims.size())
        for (size_t d = 0; d < dims[i].size(); ++d)
          if (!dims[i][d].empty())
            marked += (marked.empty() ? "" : ", ") + std::string("dim ") + std::to_string(d) +
                      " is " + printable(dims[i][d]);
      return marked.empty() ? marked : "  (" + marked + ")";
    };
    if (a.sizesVary()) {
      std::string bounds;
      for (const auto &[name, bound] : first->sizeBounds)
        bounds += (bounds.empty() ? "" : ", ") + printable(name) + " up to " +
                  std::to_string(bound);
      line("sizes that vary: " + bounds + " (shapes below at the bounds; `fusec run --bind` "
           "picks the sizes)");
    }
    line(std::string("inputs") + (first && first->ranks > 1 ? " (of each rank)" : "") + ":");
    for (size_t i = 0; i < a.inputs().size(); ++i) {
      if (i < first->padding.sizeArgs.size() && !first->padding.sizeArgs[i].empty())
        continue;  // the size itself, passed by the runtime
      line("  " + spec(a.inputs()[i]) + (a.parameters[i] ? "  (parameter)" : "") +
           (first ? block(first->inputShards, i) : "") + varying(first->padding.argDims, i));
    }
    line("outputs:");
    for (size_t i = 0; i < a.outputs().size(); ++i)
      line("  " + spec(a.outputs()[i]) + (first ? block(first->outputShards, i) : "") +
           varying(first->padding.resultDims, i));
    if (std::count(a.parameters.begin(), a.parameters.end(), true) > 0)
      line(a.weights.empty() ? "weights: not embedded (bind them at load: fusec run --weights)"
                             : "weights: embedded, " + byteCount(a.weights.size()) +
                                   " (bound at load)");
    std::set<std::string> shown;  // the steps of each architecture's first compile
    for (const ArtifactTarget &t : a.targets) {
      const PlanDesc &p = t.plan;
      std::string at;
      for (const auto &[name, size] : p.paddedAt)
        at += (at.empty() ? " at " : ",") + printable(name) + "=" + std::to_string(size);
      size_t bytes = 0;
      for (const std::string &c : t.cubins)
        bytes += c.size();
      double us = 0;
      for (const PlanStep &s : p.steps)
        us += s.cost.predictedUs;
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "target %s%s (profile %s): %zu steps, %zu distinct kernels (%zu bytes of "
                    "cubin), arena %lld bytes a stream, predicted %.1f us",
                    printable(p.arch).c_str(), at.c_str(), printable(p.device).c_str(),
                    p.steps.size(), t.cubins.size(), bytes, (long long)p.arenaBytes, us);
      line(buf);
      if (!shown.insert(p.arch).second)
        continue;
      if (p.ranks > 1) {
        std::snprintf(buf, sizeof buf, "  split over %d ranks: each GPU runs this plan on its shards",
                      p.ranks);
        line(buf);
      }
      for (const PlanStep &s : p.steps) {
        std::string what = stepRunner(s) +
                           (s.kind == PlanStep::Kind::Kernel ? ", " + s.kernel.schedule : "");
        std::snprintf(buf, sizeof buf, "  %-34s %8.1f us  ", printable(s.name).c_str(),
                      s.cost.predictedUs);
        line(buf + printable(what));
      }
    }
  }
  if (llvm::Error err = writeOutput(opts.output, text))
    return reportError(std::move(err));
  return kOk;
}

/// `--timings`: the kernels compiled as `fusec compile -o` or a load would
/// (through the kernel cache, no GPU needed), timed, with what the cache held.
llvm::Error timeKernels(const PlanDesc &plan, mlir::TimingScope &root) {
  mlir::TimingScope scope = root.nest("kernels: the cache, else NVRTC");
  KernelCache cache(CacheOptions::fromEnvironment());
  auto compiled = compileKernels(plan, cache);
  if (!compiled)
    return compiled.takeError();
  scope.stop();
  size_t bodies = compiled->bodies.size();
  llvm::errs() << "fusec: " << bodies << " distinct kernel bodies: " << compiled->hits
               << " from the kernel cache, " << bodies - compiled->hits
               << " compiled by NVRTC\n";
  return llvm::Error::success();
}

int runExplain(const ExplainOptions &opts) {
  if (llvm::Error err = notOverAnInput(opts.output, {opts.graph}))
    return reportError(std::move(err));
  if (isArtifactPath(opts.graph)) {
    if (opts.timings)
      return reportError("--timings times a compile; an artifact is compiled already");
    return explainArtifact(opts);
  }
  if (!opts.sweep.empty()) {
    if (opts.timings || opts.format == "dot")
      return reportError("--sweep prints a row a size (text or json); it takes neither "
                         "--timings nor --format dot");
    auto sweep = parseSweep(opts.sweep);
    if (!sweep)
      return reportError(sweep.takeError());
    auto text = explainSweep(opts.graph, opts.plan, *sweep, opts.format);
    if (!text)
      return reportError(text.takeError());
    if (llvm::Error err = writeOutput(opts.output, *text))
      return reportError(std::move(err));
    return kOk;
  }
  // Wall time of each phase, printed as MLIR's pass timing is
  // (--mlir-timing): the fusion passes one by one inside their phase.
  mlir::DefaultTimingManager tm;
  tm.setEnabled(opts.timings);
  mlir::TimingScope root = tm.getRootScope();
  auto program = compileGraph(opts.graph, opts.plan, /*forGpu=*/false,
                              opts.timings ? &root : nullptr);
  if (!program)
    return reportError(program.takeError());
  Program::Impl &impl = ProgramAccess::of(**program);
  mlir::TimingScope explaining = root.nest("explanation");
  Explanation e = explainProgram(**program, opts.plan.bind);
  std::string text = opts.format == "json"  ? explainJson(e)
                     : opts.format == "dot" ? explainDot(e)
                                            : explainText(e);
  explaining.stop();
  if (opts.timings)
    if (llvm::Error err = timeKernels(impl.plan, root))
      return reportError(std::move(err));
  if (llvm::Error err = writeOutput(opts.output, text))
    return reportError(std::move(err));
  root.stop();
  return kOk;  // the report goes to stderr as `tm` ends: stdout's explanation stays whole
}
} // namespace

void addExplainCommand(CLI::App &app, int &exitCode) {
  auto opts = std::make_shared<ExplainOptions>();
  CLI::App *cmd = app.add_subcommand(
      "explain", "Show the fused kernels, the HBM trips they save and the predicted speedup");
  cmd->footer("Examples:\n"
              "  fusec explain examples/gelu_bias.json\n"
              "  fusec explain examples/llama_decoder_block.json --format json\n"
              "  fusec explain examples/layer_norm.json --format dot | dot -Tsvg > layer_norm.svg\n"
              "  fusec explain model.fusec                  # what a compiled artifact holds\n"
              "  fusec explain examples/llama_decoder_block.json --timings   # where compile time goes\n"
              "  fusec explain examples/tp_llama_block.json --ranks 2   # split over 2 GPUs\n"
              "  fusec explain model.onnx --bind batch=1 --sweep sequence=1,128,1000,4096\n"
              "Trips are full-tensor passes over HBM: bytes moved / the group's largest tensor.\n"
              "Confirm a prediction on a GPU with `fusec bench`.");
  cmd->add_option("graph", opts->graph,
                  "graph file (JSON, docs/graph-format.md; ONNX), or an artifact (model.fusec: "
                  "what it holds)")
      ->required();
  cmd->add_option("--format", opts->format, "text (for people), json (for tools), dot (Graphviz)")
      ->check(CLI::IsMember({"text", "json", "dot"}))
      ->capture_default_str();
  addOutputOption(cmd, opts->output, "output file ('-': stdout)")->capture_default_str();
  cmd->add_flag("--timings", opts->timings,
                "print to stderr where the compile's time goes: reading the graph, each fusion "
                "pass, planning, and the kernels through the cache or NVRTC (compiled here, no "
                "GPU needed)");
  cmd->add_option("--sweep", opts->sweep,
                  "NAME=N,N,...: plan the graph at each size of its named dim NAME (the other "
                  "names bound by --bind) and print a row a size: launches, HBM bytes, the "
                  "prediction against the memory floor, the time per unit of size (a jump is a "
                  "cliff), the families");
  addPlanFlags(cmd, opts->plan);
  cmd->callback([opts, &exitCode] { exitCode = runExplain(*opts); });
}

} // namespace fusec::cli
