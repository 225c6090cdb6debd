//===- ExplainCommand.cpp - `fusec explain`: trips, launches, predictions -===//
#include "tools/fusec/Commands.h"
#include "tools/fusec/Driver.h"

#include "compiler/pipeline/Explain.h"
#include "compiler/pipeline/SharedLaunch.h"
#include "api/ProgramImpl.h"
#include "frontends/json/GraphReader.h"
#include "runtime/LlvmError.h"

namespace fusec::cli {

namespace {
struct ExplainOptions {
  std::string graph, format = "text", output = "-";
  PlanFlags plan;
};

int runExplain(const ExplainOptions &opts) {
  auto program = compileGraph(opts.graph, opts.plan, /*forGpu=*/false);
  if (!program)
    return reportError(program.takeError());
  Program::Impl &impl = ProgramAccess::of(**program);
  Explanation e = explain(*impl.fused, impl.profile());
  if (llvm::Expected<SizeBindings> sizes = parseSizeBindings(opts.plan.bind))
    e.sizes = *sizes;
  else
    llvm::consumeError(sizes.takeError());  // compileGraph has reported it
  e.sharedLaunches = impl.plan.sharedLaunches;
  e.sharedSavedUs = impl.plan.sharedLaunchSavedUs;
  for (ExplainedKernel &k : e.kernels)
    k.schedule = kernelSchedule(impl.plan, k.name);
  std::string text = opts.format == "json"  ? explainJson(e)
                     : opts.format == "dot" ? explainDot(e)
                                            : explainText(e);
  if (llvm::Error err = writeOutput(opts.output, text))
    return reportError(std::move(err));
  return kOk;
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
              "Trips are full-tensor passes over HBM: bytes moved / the group's largest tensor.\n"
              "Confirm a prediction on a GPU with `fusec bench`.");
  cmd->add_option("graph", opts->graph, "graph file (JSON, docs/graph-format.md)")->required();
  cmd->add_option("--format", opts->format, "text (for people), json (for tools), dot (Graphviz)")
      ->check(CLI::IsMember({"text", "json", "dot"}))
      ->capture_default_str();
  addOutputOption(cmd, opts->output, "output file ('-': stdout)")->capture_default_str();
  addPlanFlags(cmd, opts->plan);
  cmd->callback([opts, &exitCode] { exitCode = runExplain(*opts); });
}

} // namespace fusec::cli
