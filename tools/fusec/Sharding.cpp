//===- Sharding.cpp - --ranks and --shard ---------------------------------===//
#include "tools/fusec/Sharding.h"

#include "compiler/dialect/FusecDialect.h"

namespace fusec::cli {

void addSplitOptions(CLI::App *cmd, int &ranks, std::vector<std::string> &shard) {
  cmd->add_option("--ranks", ranks,
                  "split the graph over this many GPUs (tensor parallel) by its sharded "
                  "arguments: the graph's `shard` fields and --shard")
      ->check(CLI::Range(1, int(kMaxRanks)));
  cmd->add_option("--shard", shard,
                  "NAME=DIM: split input or parameter NAME (a glob: *.q_proj.weight=0) along "
                  "DIM over the ranks; for an output, leave it split so where the program "
                  "computes it so (repeat it or separate with commas)")
      ->delimiter(',');
}

} // namespace fusec::cli
