//===- Commands.h - the fusec subcommands ---------------------------------===//
#pragma once

#include <CLI/CLI.hpp>

namespace fusec::cli {

/// Each adds one subcommand to `app`; its callback stores the exit status in `exitCode`.
void addCompileCommand(CLI::App &app, int &exitCode);
void addEvalCommand(CLI::App &app, int &exitCode);
void addRunCommand(CLI::App &app, int &exitCode);
void addBenchCommand(CLI::App &app, int &exitCode);
void addImportCommand(CLI::App &app, int &exitCode);
void addExplainCommand(CLI::App &app, int &exitCode);

} // namespace fusec::cli
