//===- Sharding.h - the CLI's options that split a graph over ranks -------===//
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace fusec::cli {

/// --ranks N and --shard NAME=DIM (repeat it or separate with commas;
/// compiler/pipeline/Shards.h applies them).
void addSplitOptions(CLI::App *cmd, int &ranks, std::vector<std::string> &shard);

} // namespace fusec::cli
