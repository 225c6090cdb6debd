//===- ImportCommand.cpp - `fusec import`: an ONNX model as a fusec graph --===//
#include "tools/fusec/Commands.h"
#include "tools/fusec/Driver.h"

#include "compiler/support/AtomicFile.h"
#include "frontends/json/GraphReader.h"
#include "frontends/onnx/OnnxReader.h"

#include "llvm/Support/raw_ostream.h"

namespace fusec::cli {

namespace {
struct ImportOptions {
  std::string model, output;
};

int runImport(const ImportOptions &opts) {
  llvm::Expected<std::string> json = onnxFileToGraphJson(opts.model);
  if (!json)
    return reportError(json.takeError());
  // The graph must import as it will be used: nothing is written otherwise.
  auto ctx = makeContext();
  auto module = importGraphText(*json, opts.model, *ctx);
  if (!module)
    return reportError(module.takeError());
  if (opts.output.empty() || opts.output == "-") {
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
              "Weights (initializers of more than one element) become graph inputs of their\n"
              "ONNX names; see docs/graph-format.md, \"ONNX models\".");
  cmd->add_option("model", opts->model, "ONNX model file (.onnx)")->required();
  cmd->add_option("-o,--output", opts->output, "the graph file to write (default: stdout)");
  cmd->callback([opts, &exitCode] { exitCode = runImport(*opts); });
}

} // namespace fusec::cli
