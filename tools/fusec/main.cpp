//===- main.cpp - the fusec command-line tool ------------------------------===//
//
// fusec reads an op-graph (docs/graph-format.md), fuses it, and compiles, runs
// or explains it. Each subcommand lives in its own <Name>Command.cpp.
//
//===----------------------------------------------------------------------===//
#include "tools/fusec/Commands.h"
#include "tools/fusec/Driver.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/PrettyStackTrace.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

#ifndef FUSEC_VERSION
#define FUSEC_VERSION "unknown"
#endif

namespace {

/// LLVM's fatal errors (report_fatal_error) as fusec errors: the message,
/// then exit status 1 (LLVM exits after the handler).
void fatalError(void *, const char *reason, bool) {
  llvm::errs() << "fusec: error: " << reason << "\n";
}

/// Output that could not be written (a full disk, a closed pipe) is an
/// error of the command, not LLVM's fatal "IO failure" when the stream closes.
int checkOutput(int exitCode) {
  llvm::outs().flush();
  if (!llvm::outs().has_error())
    return exitCode;
  std::error_code ec = llvm::outs().error();
  llvm::outs().clear_error();
  llvm::errs() << "fusec: error: cannot write the standard output: " << ec.message() << "\n";
  return fusec::cli::kUserError;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::install_fatal_error_handler(fatalError);
  llvm::setBugReportMsg("fusec crashed: a bug. Please report it with the command line and the "
                        "files it read.\n");
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
  fusec::cli::addImportCommand(app, exitCode);
  // A misspelt command would otherwise read as "a subcommand is required".
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App *sub : app.get_subcommands({}))
      names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      std::string best;
      unsigned bestDist = 3;
      for (const std::string &n : names) {
        unsigned d = llvm::StringRef(argv[1]).edit_distance(n, true, bestDist);
        if (d < bestDist) {
          bestDist = d;
          best = n;
        }
      }
      llvm::errs() << "fusec: error: unknown command '" << argv[1] << "'"
                   << (best.empty() ? "" : " (did you mean '" + best + "'?)")
                   << "; run 'fusec --help' for the list\n";
      return fusec::cli::kUsageError;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    llvm::errs() << "fusec: error: " << e.what()
                 << "\nRun 'fusec --help' or 'fusec <command> --help' for usage.\n";
    return fusec::cli::kUsageError;
  }
  return checkOutput(exitCode);
}
