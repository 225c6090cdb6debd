//===- RankGroup.cpp - a split program's place in its group of ranks ------===//
#include "api/RankGroup.h"

#include "api/RuntimeStatus.h"
#include "compiler/support/Printable.h"

#include <cstring>

namespace fusec {

Status newRankGroupId(std::string &id) {
  auto nccl = Nccl::get();
  if (!nccl)
    return toStatus(nccl.takeError());
  auto made = (*nccl)->uniqueId();
  if (!made)
    return toStatus(made.takeError());
  id.assign(made->bytes.data(), made->bytes.size());
  return Status::success();
}

RankSeat::~RankSeat() {
  if (!comm)
    return;
  if (auto nccl = Nccl::get())
    (*nccl)->destroy(comm);
  else
    (void)nccl.takeError();  // not loaded: no communicator was made
}

Status RankSeat::admit(const PlanDesc &plan, int rank, const std::string &id) const {
  if (plan.ranks < 2)
    return Status::error(printable(plan.graphName) +
                             " is not split over ranks (compile it with Options::ranks, or "
                             "`fusec compile --ranks N`): it has no group to join",
                         ErrorCode::InvalidArgument);
  if (rank < 0 || rank >= plan.ranks)
    return Status::error("rank " + std::to_string(rank) + " is not one of the " +
                             std::to_string(plan.ranks) + " ranks " + printable(plan.graphName) +
                             " is split over (0 to " + std::to_string(plan.ranks - 1) + ")",
                         ErrorCode::InvalidArgument);
  if (seat >= 0)
    return Status::error("this program already is rank " + std::to_string(seat) +
                             " of a group; a program joins one group once",
                         ErrorCode::InvalidArgument);
  if (id.size() != NcclId().bytes.size())
    return Status::error("a group id is the " + std::to_string(NcclId().bytes.size()) +
                             " bytes newGroupId() makes; this one has " +
                             std::to_string(id.size()),
                         ErrorCode::InvalidArgument);
  return Status::success();
}

Status RankSeat::join(Executable &exe, int rank, const std::string &id) {
  const PlanDesc &plan = exe.plan();
  if (Status s = admit(plan, rank, id); !s)
    return s;
  NcclId nid;
  std::memcpy(nid.bytes.data(), id.data(), id.size());
  auto nccl = Nccl::get();
  if (!nccl)
    return toStatus(nccl.takeError());
  if (Status s = toStatus(exe.makeCurrent()); !s)
    return s;
  auto c = (*nccl)->communicator(nid, plan.ranks, rank);
  if (!c)
    return toStatus(c.takeError());
  if (Status s = toStatus(exe.joinRanks(*c, rank)); !s) {
    (*nccl)->destroy(*c);
    return s;
  }
  comm = *c;
  seat = rank;
  return Status::success();
}

Status RankSeat::weightBlocks(const PlanDesc &plan, std::optional<RankBlocks> &blocks) const {
  blocks.reset();
  if (plan.ranks < 2)
    return Status::success();
  if (seat < 0)
    return Status::error(printable(plan.graphName) + " is split over " +
                             std::to_string(plan.ranks) +
                             " ranks and binds its rank's blocks of the weights: call "
                             "joinGroup(rank, id) first",
                         ErrorCode::InvalidArgument);
  blocks = RankBlocks{plan.inputShards, seat, plan.ranks};
  return Status::success();
}

} // namespace fusec
