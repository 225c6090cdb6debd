//===- ImportCommand.cpp - `fusec import`: an ONNX model as a fusec graph --===//
#include "tools/fusec/Commands.h"
#include "tools/fusec/Driver.h"
#include "compiler/support/Printable.h"

#include "compiler/support/AtomicFile.h"
#include "frontends/json/GraphReader.h"
#include "frontends/onnx/OnnxReader.h"

#include "runtime/Safetensors.h"
#include "tools/fusec/GraphIO.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace fusec::cli {

namespace {
struct ImportOptions {
  std::string model, output, weights;
  std::vector<std::string> bind;
};

int runImport(const ImportOptions &opts) {
  llvm::Expected<SizeBindings> sizes = parseSizeBindings(opts.bind);
  if (!sizes)
    return reportError(sizes.takeError());
  llvm::Expected<std::string> json = onnxFileToGraphJson(opts.model, *sizes);
  if (!json)
    return reportError(json.takeError());
  // The graph must import as it will be used: nothing is written otherwise.
  auto ctx = makeContext();
  auto module = importGraphText(*json, opts.model, *ctx);
  if (!module)
    return reportError(module.takeError());
  // The weights beside the graph: --weights, else the output's name with
  // .safetensors; written first, so that a graph is never left without them.
  const bool toStdout = opts.output.empty() || opts.output == "-";
  std::string weightsPath = opts.weights;
  if (weightsPath.empty() && !toStdout) {
    llvm::SmallString<256> w(opts.output);
    llvm::sys::path::replace_extension(w, ".safetensors");
    weightsPath = std::string(w);
  }
  mlir::func::FuncOp func = graphFunction(**module);
  const std::set<std::string> parameters = parameterNames(func);
  const bool hasParameters = !parameters.empty();
  if (llvm::Error err = notOverAnInput(opts.output, {opts.model}))
    return reportError(std::move(err));
  if (hasParameters && !weightsPath.empty()) {
    bool same = false;
    if (weightsPath == opts.output ||
        (!llvm::sys::fs::equivalent(weightsPath, opts.output, same) && same))
      return reportError("the weights file and the graph file are both '" + printable(weightsPath) +
                         "'");
    if (llvm::Error err = notOverAnInput(weightsPath, {opts.model}, "--weights"))
      return reportError(std::move(err));
    // The weights go first (a graph is never left without them), so the
    // graph's place is checked before: a directory, or a folder that cannot
    // be written, would leave the weights alone.
    if (!toStdout) {
      llvm::SmallString<256> dir(opts.output);
      llvm::sys::path::remove_filename(dir);
      if (dir.empty())
        dir = ".";
      if (llvm::sys::fs::is_directory(opts.output) ||
          llvm::sys::fs::access(dir, llvm::sys::fs::AccessMode::Write))
        return reportError("cannot write the graph to '" + printable(opts.output) +
                           "' (a directory, or in a folder that cannot be written): nothing "
                           "written");
    }
    auto weights = onnxFileWeights(opts.model, parameters);
    if (!weights)
      return reportError(weights.takeError());
    if (llvm::Error err = writeSafetensors(weightsPath, *weights))
      return reportError(std::move(err));
    int64_t bytes = 0;
    for (const auto &[name, t] : *weights)
      bytes += t.nbytes();
    llvm::errs() << "fusec: wrote " << weightsPath << " (" << weights->size() << " weights, "
                 << (bytes < (1 << 20) ? llvm::format("%.1f KiB", double(bytes) / (1 << 10))
                                       : llvm::format("%.1f MiB", double(bytes) / (1 << 20)))
                 << ")\n";
  }
  if (toStdout) {
    if (hasParameters && weightsPath.empty())
      llvm::errs() << "fusec: note: the model's weights are not written (give -o or --weights)\n";
    llvm::outs() << *json;
    return kOk;
  }
  if (llvm::Error err = writeFileAtomically(opts.output, *json))
    return reportError(std::move(err));
  llvm::errs() << "fusec: wrote " << opts.output << "\n";
  return kOk;
}
} // namespace

void addImportCommand(CLI::App &app, int &exitCode) {
  auto opts = std::make_shared<ImportOptions>();
  CLI::App *cmd = app.add_subcommand(
      "import", "Convert an ONNX model into a graph in fusec's JSON format");
  cmd->footer("Examples:\n"
              "  fusec import model.onnx -o model.json\n"
              "  fusec explain model.onnx          # every command also reads .onnx files\n"
              "Weights (initializers of more than one element) become the graph's parameters,\n"
              "their values written to model.safetensors beside -o (run and eval take them\n"
              "with --weights); see docs/graph-format.md, \"ONNX models\".");
  cmd->add_option("model", opts->model, "ONNX model file (.onnx)")->required();
  addOutputOption(cmd, opts->output, "the graph file to write (default: stdout)");
  addBindOption(cmd, opts->bind);
  cmd->add_option("--weights", opts->weights,
                  "the safetensors file for the model's weights (default: the graph file's "
                  "name with .safetensors)");
  cmd->callback([opts, &exitCode] { exitCode = runImport(*opts); });
}

} // namespace fusec::cli
