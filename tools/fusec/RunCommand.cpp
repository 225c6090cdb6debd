//===- RunCommand.cpp - `fusec run`: the fused graph on the GPU -----------===//
#include "runtime/TensorCompare.h"
#include "tools/fusec/Commands.h"
#include "tools/fusec/Driver.h"
#include "tools/fusec/GraphIO.h"

#include "frontends/json/GraphReader.h"
#include "api/ProgramImpl.h"

#include "llvm/Support/raw_ostream.h"
#include "runtime/LlvmError.h"

namespace fusec::cli {

namespace {
struct RunOptions {
  std::string graph, output;
  TensorSources sources;
  uint64_t seed = 0;
  bool check = false;
  PlanFlags plan;
};

int runRun(const RunOptions &opts) {
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
  auto inputs = prepareInputs(func, sources, opts.seed);
  if (!inputs)
    return reportError(inputs.takeError());
  std::vector<HostTensor> outputs;
  if (Status s = p.runHost(*inputs, outputs); !s)
    return reportError(s.message());
  std::vector<std::string> names = outputNames(func);
  bool allPass = true;
  std::vector<HostTensor> reference;
  if (opts.check)
    if (Status s = p.evaluateReference(*inputs, reference); !s)
      return reportError(s.message());
  for (size_t i = 0; i < outputs.size(); ++i) {
    llvm::outs() << names[i] << ": " << summary(outputs[i]) << "\n";
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
  return kOk;
}
} // namespace

void addRunCommand(CLI::App &app, int &exitCode) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App *cmd = app.add_subcommand("run", "Compile a graph and run it on the GPU");
  cmd->footer("Examples:\n"
              "  fusec run examples/softmax.json --check          # compare with the interpreter\n"
              "  fusec run graph.json --inputs in.safetensors -o out.safetensors\n"
              "  fusec run examples/rms_norm.json --no-fuse --check");
  cmd->add_option("graph", opts->graph, "graph file (JSON, docs/graph-format.md)")->required();
  addTensorSources(cmd, opts->sources);
  addOutputOption(cmd, opts->output, "write the outputs to this safetensors file");
  addSeedOption(cmd, opts->seed);
  cmd->add_flag("--check", opts->check,
                "compare every output with the CPU reference interpreter (f32 1e-5, "
                "f16/bf16 1e-2 relative); exit 1 on a mismatch");
  addPlanFlags(cmd, opts->plan);
  addLaunchFlags(cmd, opts->plan);
  cmd->callback([opts, &exitCode] { exitCode = runRun(*opts); });
}

} // namespace fusec::cli
