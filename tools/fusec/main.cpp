//===- main.cpp - the fusec command-line tool ------------------------------===//
//
// fusec reads an op-graph (docs/graph-format.md), fuses it, and compiles, runs
// or explains it. Each subcommand lives in its own <Name>Command.cpp.
//
//===----------------------------------------------------------------------===//
#include "tools/fusec/Commands.h"
#include "tools/fusec/Driver.h"

#include "llvm/Support/InitLLVM.h"

#ifndef FUSEC_VERSION
#define FUSEC_VERSION "unknown"
#endif

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  CLI::App app{"fusec: a graph-level fusion compiler for NVIDIA GPUs", "fusec"};
  app.set_version_flag("--version", std::string("fusec ") + FUSEC_VERSION);
  app.require_subcommand(1);
  app.footer("Run 'fusec <command> --help' for a command's options and examples.");
  int exitCode = fusec::cli::kOk;
  fusec::cli::addCompileCommand(app, exitCode);
  fusec::cli::addEvalCommand(app, exitCode);
  fusec::cli::addRunCommand(app, exitCode);
  fusec::cli::addExplainCommand(app, exitCode);
  fusec::cli::addBenchCommand(app, exitCode);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : fusec::cli::kUsageError;
  }
  return exitCode;
}
