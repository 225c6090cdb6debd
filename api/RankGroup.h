//===- RankGroup.h - a split program's place in its group of ranks --------===//
//
// Program and CompiledGraph run a program split over ranks one process a GPU
// (include/fusec/fusec.h, joinGroup), and `fusec run --ranks N` a thread a
// GPU (RunRanks.cpp): the group id one process makes and passes on, this
// rank's NCCL communicator, and the blocks of the weights it binds. One
// implementation for all three.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fusec/Status.h"
#include "runtime/Executable.h"
#include "runtime/Nccl.h"
#include "runtime/WeightFiles.h"

#include <optional>
#include <string>

namespace fusec {

/// A fresh group id: NCCL's unique id as 128 bytes.
Status newRankGroupId(std::string &id);

/// One program's membership of a group.
class RankSeat {
public:
  RankSeat() = default;
  RankSeat(const RankSeat &) = delete;
  RankSeat &operator=(const RankSeat &) = delete;
  /// Leaves the group (after the executable that used the communicator).
  ~RankSeat();

  /// Whether `plan` may join the group `id` as `rank` (split, the rank in
  /// range, the id whole, not joined yet); needs no GPU.
  Status admit(const PlanDesc &plan, int rank, const std::string &id) const;
  /// Joins `exe` (a split plan, loaded on this thread's GPU) to the group
  /// `id` as `rank` where admit() allows it; blocks until every rank has
  /// joined.
  Status join(Executable &exe, int rank, const std::string &id);
  int rank() const { return seat; }
  /// The blocks of the weights this rank binds: none for a plan that is
  /// not split; for a split one, an error until the rank is known.
  Status weightBlocks(const PlanDesc &plan, std::optional<RankBlocks> &blocks) const;

private:
  int seat = -1;
  NcclComm comm = nullptr;
};

} // namespace fusec
