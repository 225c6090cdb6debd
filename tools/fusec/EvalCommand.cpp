//===- EvalCommand.cpp - `fusec eval`: run the CPU reference interpreter --===//
#include "tools/fusec/Commands.h"
#include "tools/fusec/Driver.h"
#include "tools/fusec/GraphIO.h"
#include "compiler/support/Printable.h"

#include "compiler/interp/Interpreter.h"
#include "compiler/interp/Ranks.h"
#include "compiler/pipeline/PaddedGraph.h"
#include "compiler/pipeline/Shards.h"
#include "tools/fusec/Sharding.h"
#include "frontends/json/GraphReader.h"

#include "llvm/Support/raw_ostream.h"

namespace fusec::cli {

namespace {
struct EvalOptions {
  std::string graph, output, expect;
  double tolerance = -1;
  TensorSources sources;
  uint64_t seed = 0;
  bool fp64 = false, decomposed = false;
  std::vector<std::string> bind, max;
  int ranks = 1;
  std::vector<std::string> shard;
};

int report(const EvalOptions &opts, mlir::func::FuncOp func,
           const std::vector<HostTensor> &results) {
  std::vector<std::string> names = outputNames(func);
  for (size_t i = 0; i < results.size(); ++i)
    llvm::outs() << printable(names[i]) << ": " << summary(results[i]) << "\n";
  if (!opts.output.empty())
    if (llvm::Error err = writeOutputs(func, results, opts.output))
      return reportError(std::move(err));
  return exitForExpected(names, results, opts.expect, opts.tolerance);
}

/// --max: the graph compiled at padded sizes, run at the call's (`exact`
/// is the graph read at them, whose inputs `inputs` are).
int evalPadded(const EvalOptions &opts, const std::vector<std::string> &bind,
               mlir::func::FuncOp exact, const std::vector<HostTensor> &inputs,
               const InterpOptions &io) {
  if (opts.ranks > 1 || opts.decomposed)
    return reportError("--max does not combine with --ranks or --decomposed");
  auto ctx = makeContext();
  auto module = loadGraph(opts.graph, *ctx, bind, opts.max);
  if (!module)
    return reportError(module.takeError());
  mlir::func::FuncOp padded = graphFunction(**module);
  auto sizes = parseSizeBindings(bind);
  if (!sizes)
    return reportError(sizes.takeError());
  auto results = interpretPadded(padded, inputs, *sizes, io);
  if (!results)
    return reportError(results.takeError());
  return report(opts, exact, *results);
}

int runEval(const EvalOptions &opts) {
  if (llvm::Error err = notOverAnInput(opts.output, sourceFiles(opts.sources, {opts.graph, opts.expect})))
    return reportError(std::move(err));
  auto ctx = makeContext();
  auto bind = bindFromInputs(opts.graph, opts.bind, opts.sources.inputs);
  if (!bind)
    return reportError(bind.takeError());
  // A name of --max that nothing binds runs at its bound, as on the other
  // commands: the graph is read at the call's sizes first.
  if (!opts.max.empty()) {
    auto given = parseSizeBindings(*bind);
    if (!given)
      return reportError(given.takeError());
    auto padded = paddedSizes(*given, opts.max);  // checks the bounds first
    if (!padded)
      return reportError(padded.takeError());
    auto bounds = parseSizeBindings(opts.max, "--max");
    for (const auto &[name, bound] : *bounds)
      if (!given->count(name))
        bind->push_back(name + "=" + std::to_string(bound));
  }
  TensorSources sources = opts.sources;
  noteModel(sources, opts.graph);
  auto module = loadGraph(opts.graph, *ctx, *bind);
  if (!module)
    return reportError(module.takeError());
  mlir::func::FuncOp func = graphFunction(**module);
  if (llvm::Error err = applyShards(func, opts.shard, "--shard"))
    return reportError(std::move(err));
  // The whole graph's inputs: a split program's ranks take their blocks.
  auto inputs = prepareInputs(func, sources, opts.seed);
  if (!inputs)
    return reportError(inputs.takeError());
  if (opts.decomposed || opts.ranks > 1)
    if (llvm::Error err = decompose(**module, opts.ranks))
      return reportError(std::move(err));
  InterpOptions io;
  io.fp64 = opts.fp64;
  if (!opts.max.empty())
    return evalPadded(opts, *bind, func, *inputs, io);
  auto results = opts.ranks > 1 ? interpretSplit(func, *inputs, io) : interpret(func, *inputs, io);
  if (!results)
    return reportError(results.takeError());
  return report(opts, func, *results);
}
} // namespace

void addEvalCommand(CLI::App &app, int &exitCode) {
  auto opts = std::make_shared<EvalOptions>();
  CLI::App *cmd = app.add_subcommand(
      "eval", "Evaluate a graph on the CPU with the reference interpreter");
  cmd->footer("Examples:\n"
              "  fusec eval examples/gelu_bias.json                # random inputs, seed 0\n"
              "  fusec eval examples/softmax.json --seed 7 -o out.safetensors\n"
              "  fusec eval graph.json --inputs in.safetensors --fp64\n"
              "  fusec eval block.json --ranks 2 --shard w_q=0,w_o=1   # split, rank by rank");
  cmd->add_option("graph", opts->graph, "graph file (JSON, docs/graph-format.md)")->required();
  addTensorSources(cmd, opts->sources);
  addBindOption(cmd, opts->bind);
  addMaxOption(cmd, opts->max);
  addExpectOptions(cmd, opts->expect, opts->tolerance);
  addOutputOption(cmd, opts->output, "write the outputs to this safetensors file");
  addSeedOption(cmd, opts->seed);
  cmd->add_flag("--fp64", opts->fp64, "compute float ops in fp64 instead of fp32");
  cmd->add_flag("--decomposed", opts->decomposed,
                "evaluate after decomposing composites (as the compiler sees the graph)");
  addSplitOptions(cmd, opts->ranks, opts->shard);
  cmd->callback([opts, &exitCode] { exitCode = runEval(*opts); });
}

} // namespace fusec::cli
