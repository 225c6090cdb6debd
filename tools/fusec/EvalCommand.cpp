//===- EvalCommand.cpp - `fusec eval`: run the CPU reference interpreter --===//
#include "tools/fusec/Commands.h"
#include "tools/fusec/Driver.h"
#include "tools/fusec/GraphIO.h"
#include "compiler/support/Printable.h"

#include "compiler/interp/Interpreter.h"
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
  std::vector<std::string> bind;
};

int runEval(const EvalOptions &opts) {
  auto ctx = makeContext();
  auto bind = bindFromInputs(opts.graph, opts.bind, opts.sources.inputs);
  if (!bind)
    return reportError(bind.takeError());
  TensorSources sources = opts.sources;
  noteModel(sources, opts.graph);
  auto module = loadGraph(opts.graph, *ctx, *bind);
  if (!module)
    return reportError(module.takeError());
  if (opts.decomposed)
    if (llvm::Error err = decompose(**module))
      return reportError(std::move(err));
  mlir::func::FuncOp func = graphFunction(**module);
  auto inputs = prepareInputs(func, sources, opts.seed);
  if (!inputs)
    return reportError(inputs.takeError());
  InterpOptions io;
  io.fp64 = opts.fp64;
  auto results = interpret(func, *inputs, io);
  if (!results)
    return reportError(results.takeError());
  std::vector<std::string> names = outputNames(func);
  for (size_t i = 0; i < results->size(); ++i)
    llvm::outs() << printable(names[i]) << ": " << summary((*results)[i]) << "\n";
  if (!opts.output.empty())
    if (llvm::Error err = writeOutputs(func, *results, opts.output))
      return reportError(std::move(err));
  return exitForExpected(outputNames(func), *results, opts.expect, opts.tolerance);
}
} // namespace

void addEvalCommand(CLI::App &app, int &exitCode) {
  auto opts = std::make_shared<EvalOptions>();
  CLI::App *cmd = app.add_subcommand(
      "eval", "Evaluate a graph on the CPU with the reference interpreter");
  cmd->footer("Examples:\n"
              "  fusec eval examples/gelu_bias.json                # random inputs, seed 0\n"
              "  fusec eval examples/softmax.json --seed 7 -o out.safetensors\n"
              "  fusec eval graph.json --inputs in.safetensors --fp64");
  cmd->add_option("graph", opts->graph, "graph file (JSON, docs/graph-format.md)")->required();
  addTensorSources(cmd, opts->sources);
  addBindOption(cmd, opts->bind);
  addExpectOptions(cmd, opts->expect, opts->tolerance);
  addOutputOption(cmd, opts->output, "write the outputs to this safetensors file");
  addSeedOption(cmd, opts->seed);
  cmd->add_flag("--fp64", opts->fp64, "compute float ops in fp64 instead of fp32");
  cmd->add_flag("--decomposed", opts->decomposed,
                "evaluate after decomposing composites (as the compiler sees the graph)");
  cmd->callback([opts, &exitCode] { exitCode = runEval(*opts); });
}

} // namespace fusec::cli
