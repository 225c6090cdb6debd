//===- RunCommand.cpp - `fusec run`: the fused graph on the GPU -----------===//
#include "runtime/TensorCompare.h"
#include "tools/fusec/Commands.h"
#include "compiler/interp/Interpreter.h"
#include "tools/fusec/Driver.h"
#include "tools/fusec/GraphIO.h"

#include "frontends/json/GraphReader.h"
#include "api/ProgramImpl.h"
#include "compiler/support/Printable.h"
#include "fusec/Runtime.h"
#include "runtime/ArtifactFile.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include "compiler/support/LlvmError.h"

namespace fusec::cli {

namespace {
struct RunOptions {
  std::string graph, output, expect;
  double tolerance = -1;
  TensorSources sources;
  uint64_t seed = 0;
  bool check = false;
  bool asGraph = false;
  PlanFlags plan;
};

/// `fusec run model.fusec`: a compiled artifact, through the runtime alone.
int runArtifact(const RunOptions &opts) {
  if (opts.check)
    return reportError("--check compares with the reference interpreter, which needs the graph: "
                       "run the graph file with --check, or write the outputs with -o and compare them");
  const PlanFlags none;
  if (opts.plan.noFuse || !opts.plan.device.empty() || !opts.plan.arch.empty() ||
      opts.plan.gemm != none.gemm || opts.plan.noShare || !opts.plan.max.empty() ||
      opts.plan.noOverlap || opts.plan.ranks != none.ranks || !opts.plan.shard.empty())
    return reportError("'" + printable(opts.graph) +
                       "' is compiled already: planning flags (--no-fuse, --device, --arch, "
                       "--gemm, --no-share, --max, --no-overlap, --ranks, --shard) do not "
                       "apply to it");
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<CompiledGraph> graph;
  if (Status s = CompiledGraph::load(opts.graph, graph); !s)
    return reportError(s.message());
  if (graph->ranks() > 1)
    return reportError("'" + printable(opts.graph) + "' is split over " +
                       std::to_string(graph->ranks()) +
                       " ranks: each rank runs in a process of its own through the API "
                       "(CompiledGraph::joinGroup; docs/tensor-parallel.md), or run the graph "
                       "file with `fusec run GRAPH --ranks " + std::to_string(graph->ranks()) +
                       "`");
  // Sizes that vary (`fusec compile --max`): --bind's, else those of the
  // --inputs tensors, else the bounds the artifact loads at.
  if (!graph->maxSizes().empty()) {
    NamedDims named;
    for (size_t i = 0; i < graph->inputs().size(); ++i)
      named[graph->inputs()[i].name] = graph->inputDimNames(i);
    auto bind = bindFromInputs(named, opts.plan.bind, opts.sources.inputs);
    if (!bind)
      return reportError(bind.takeError());
    auto sizes = parseSizeBindings(*bind);
    if (!sizes)
      return reportError(sizes.takeError());
    if (Status s = graph->resize(*sizes); !s)
      return reportError("'" + printable(opts.graph) + "': the sizes of --bind and --inputs: " +
                         s.message());
  } else if (!opts.plan.bind.empty()) {
    return reportError("'" + printable(opts.graph) +
                       "' is compiled at fixed sizes: --bind applies to an artifact compiled "
                       "with --max");
  }
  // Weights given on the command line replace those the artifact embeds.
  if (!opts.sources.weights.empty())
    if (Status s = graph->bindWeights(opts.sources.weights); !s)
      return reportError(s.message());
  double loadMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  // Bound weights are on the GPU already: the call passes the other inputs.
  const bool bound = graph->weightsBound();
  std::vector<GraphArgument> args;
  for (size_t i = 0; i < graph->inputs().size(); ++i) {
    const TensorSpec &t = graph->inputs()[i];
    if (!bound || !graph->isParameter(i))
      args.push_back({t.name, t.dtype, t.shape, graph->isParameter(i), graph->inputScale(i)});
  }
  TensorSources sources = opts.sources;
  sources.weights.clear();
  auto inputs = prepareInputs(args, sources, opts.seed);
  if (!inputs)
    return reportError(inputs.takeError());
  std::vector<HostTensor> outputs;
  start = std::chrono::steady_clock::now();
  if (Status s = graph->runHost(*inputs, outputs, opts.asGraph); !s)
    return reportError(s.message());
  double runMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const CompiledGraph::LoadTimes &t = graph->loadTimes();
  llvm::errs() << llvm::format("fusec: loaded %s kernels in %.1f ms (read and check %.1f, CUDA "
                               "driver and context %.1f, kernels and buffers %.1f, weights "
                               "%.1f); first run %.1f ms with the copies in and out\n",
                               graph->arch().c_str(), loadMs, t.read, t.gpu, t.kernels, t.weights,
                               runMs);
  std::vector<std::string> names;
  for (const TensorSpec &t : graph->outputs())
    names.push_back(t.name);
  for (size_t i = 0; i < outputs.size(); ++i)
    llvm::outs() << printable(names[i]) << ": " << summary(outputs[i]) << "\n";
  if (!opts.output.empty())
    if (llvm::Error err = writeOutputs(names, outputs, opts.output))
      return reportError(std::move(err));
  return exitForExpected(names, outputs, opts.expect, opts.tolerance);
}

int runRun(const RunOptions &opts) {
  if (llvm::Error err = notOverAnInput(opts.output, sourceFiles(opts.sources, {opts.graph, opts.expect})))
    return reportError(std::move(err));
  if (isArtifactPath(opts.graph))
    return runArtifact(opts);
  auto bind = bindFromInputs(opts.graph, opts.plan.bind, opts.sources.inputs);
  if (!bind)
    return reportError(bind.takeError());
  PlanFlags plan = opts.plan;
  plan.bind = *bind;
  TensorSources sources = opts.sources;
  noteModel(sources, opts.graph);
  auto program = compileGraph(opts.graph, plan, /*forGpu=*/true);
  if (!program)
    return reportError(program.takeError());
  Program &p = **program;
  mlir::func::FuncOp func = graphFunction(*ProgramAccess::of(p).original);
  // --max: compiled at padded sizes, run at --bind's; the inputs, and the
  // reference --check compares with, are the graph's at those sizes.
  auto exactCtx = makeContext();
  mlir::OwningOpRef<mlir::ModuleOp> exact;
  if (!plan.max.empty()) {
    if (ProgramAccess::of(p).plan.ranks > 1)
      return reportError("--max does not combine with --ranks in this version");
    auto sizes = parseSizeBindings(plan.bind);  // parsed once already
    if (!sizes)
      return reportError(sizes.takeError());
    for (const auto &[name, size] : p.sizes())
      (*sizes)[name] = size;
    std::vector<std::string> at;
    for (auto [name, size] : *sizes)
      at.push_back(name + "=" + std::to_string(size));
    auto m = loadGraph(opts.graph, *exactCtx, at);
    if (!m)
      return reportError(m.takeError());
    exact = std::move(*m);
    func = graphFunction(*exact);
  }
  auto inputs = prepareInputs(func, sources, opts.seed);
  if (!inputs)
    return reportError(inputs.takeError());
  std::vector<HostTensor> outputs;
  if (ProgramAccess::of(p).plan.ranks > 1) {
    // Split: one GPU a rank, the ranks meeting through NCCL; the outputs
    // come back whole, to check as the whole graph's.
    if (llvm::Error err = runOnRanks(ProgramAccess::of(p), *inputs, outputs, opts.asGraph))
      return reportError(std::move(err));
  } else if (Status s = p.runHost(*inputs, outputs, opts.asGraph); !s) {
    return reportError(s.message());
  }
  std::vector<std::string> names = outputNames(func);
  bool allPass = true;
  std::vector<HostTensor> reference;
  if (opts.check && exact) {
    auto r = interpret(func, *inputs);
    if (!r)
      return reportError(r.takeError());
    reference = std::move(*r);
  } else if (opts.check) {
    if (Status s = p.evaluateReference(*inputs, reference); !s)
      return reportError(s.message());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    llvm::outs() << printable(names[i]) << ": " << summary(outputs[i]) << "\n";
    if (!opts.check)
      continue;
    CheckResult c = compareTensors(outputs[i], reference[i]);
    allPass &= c.pass;
    llvm::outs() << "  check vs reference interpreter: " << c.describe() << "\n";
  }
  if (!opts.output.empty())
    if (llvm::Error err = writeOutputs(func, outputs, opts.output))
      return reportError(std::move(err));
  if (!allPass)
    return reportError("outputs differ from the reference interpreter");
  return exitForExpected(names, outputs, opts.expect, opts.tolerance);
}
} // namespace

void addRunCommand(CLI::App &app, int &exitCode) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App *cmd = app.add_subcommand("run", "Compile a graph and run it on the GPU");
  cmd->footer("Examples:\n"
              "  fusec run examples/softmax.json --check          # compare with the interpreter\n"
              "  fusec run graph.json --inputs in.safetensors -o out.safetensors\n"
              "  fusec run examples/rms_norm.json --no-fuse --check\n"
              "  fusec run examples/tp_llama_block.json --ranks 2 --check   # over 2 GPUs\n"
              "  fusec run rms_norm.fusec --inputs in.safetensors   # a compiled artifact");
  cmd->add_option("graph", opts->graph,
                  "graph file (JSON, docs/graph-format.md; ONNX), or an artifact (fusec compile "
                  "-o model.fusec)")
      ->required();
  addTensorSources(cmd, opts->sources);
  addOutputOption(cmd, opts->output, "write the outputs to this safetensors file");
  addExpectOptions(cmd, opts->expect, opts->tolerance);
  addSeedOption(cmd, opts->seed);
  cmd->add_flag("--check", opts->check,
                "compare every output with the CPU reference interpreter (f32 1e-5, "
                "f16/bf16 1e-2 relative); exit 1 on a mismatch");
  cmd->add_flag("--graph", opts->asGraph,
                "run the plan as one CUDA graph launch (captured, then launched; what "
                "Program::replay does)");
  addPlanFlags(cmd, opts->plan);
  addLaunchFlags(cmd, opts->plan);
  cmd->callback([opts, &exitCode] { exitCode = runRun(*opts); });
}

} // namespace fusec::cli
