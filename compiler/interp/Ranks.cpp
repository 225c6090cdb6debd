//===- Ranks.cpp - N ranks as N threads meeting at the collectives --------===//
#include "compiler/interp/Ranks.h"

#include "compiler/dialect/FusecDialect.h"
#include "compiler/interp/Interpreter.h"
#include "compiler/support/RankThreads.h"

#include <condition_variable>
#include <memory>
#include <mutex>

namespace fusec {
namespace {

/// What the ranks of one run share: the tensors given to the exchange in
/// progress and, once all are in, the published set of that round. A round
/// publishes a new vector, so a rank still reading round g is not disturbed
/// by faster ranks giving theirs for round g + 1.
struct Exchange {
  explicit Exchange(int ranks) : given(size_t(ranks)) {}
  std::mutex m;
  std::condition_variable cv;
  std::vector<HostTensor> given;
  int arrived = 0;
  int64_t round = 0;
  std::shared_ptr<const std::vector<HostTensor>> published;
  int failedRank = -1;  ///< the first rank that failed, -1 while none has
};

class ThreadLink final : public RankLink {
public:
  ThreadLink(Exchange &x, int rank, int ranks) : x(x), me(rank), n(ranks) {}
  int rank() const override { return me; }
  int ranks() const override { return n; }

  llvm::Expected<std::vector<HostTensor>> exchange(const HostTensor &mine) override {
    std::unique_lock<std::mutex> lock(x.m);
    if (x.failedRank >= 0)
      return failed();
    const int64_t myRound = x.round;
    x.given[size_t(me)] = mine;
    if (++x.arrived == n) {
      x.published = std::make_shared<const std::vector<HostTensor>>(std::move(x.given));
      x.given.assign(size_t(n), HostTensor());
      x.arrived = 0;
      ++x.round;
      x.cv.notify_all();
    } else {
      x.cv.wait(lock, [&] { return x.round != myRound || x.failedRank >= 0; });
      if (x.round == myRound)
        return failed();
    }
    return *x.published;
  }

  /// Wakes every rank waiting at a collective: this one will never arrive.
  void fail() {
    std::lock_guard<std::mutex> lock(x.m);
    if (x.failedRank < 0)
      x.failedRank = me;
    x.cv.notify_all();
  }

private:
  llvm::Error failed() const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "rank %d failed before this collective", x.failedRank);
  }

  Exchange &x;
  int me, n;
};

} // namespace

std::vector<std::vector<HostTensor>> argumentsPerRank(mlir::func::FuncOp func,
                                                      const std::vector<HostTensor> &whole) {
  const int n = int(programRanks(func));
  std::vector<int64_t> shards;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    shards.push_back(shardAxis(func, i).value_or(-1));
  std::vector<std::vector<HostTensor>> args;
  for (int r = 0; r < n; ++r)
    args.push_back(rankInputs(shards, whole, r, n));
  return args;
}

llvm::Expected<std::vector<std::vector<HostTensor>>>
interpretRanks(mlir::func::FuncOp func, const std::vector<std::vector<HostTensor>> &args,
               const InterpOptions &opts) {
  const int n = int(args.size());
  Exchange x(n);
  std::vector<std::unique_ptr<ThreadLink>> links;
  for (int r = 0; r < n; ++r)
    links.push_back(std::make_unique<ThreadLink>(x, r, n));
  std::vector<std::vector<HostTensor>> results(static_cast<size_t>(n));
  std::vector<std::string> errors(static_cast<size_t>(n));
  auto run = [&](int r) {
    InterpOptions mine = opts;
    mine.link = links[size_t(r)].get();
    llvm::Expected<std::vector<HostTensor>> out = interpret(func, args[size_t(r)], mine);
    if (out) {
      results[size_t(r)] = std::move(*out);
      return;
    }
    errors[size_t(r)] = llvm::toString(out.takeError());
    links[size_t(r)]->fail();
  };
  onRankThreads(n, run);
  // The first rank that failed names the cause; the others only waited on it.
  if (x.failedRank >= 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "rank %d: %s", x.failedRank,
                                   errors[size_t(x.failedRank)].c_str());
  return results;
}

llvm::Expected<std::vector<HostTensor>> interpretSplit(mlir::func::FuncOp func,
                                                       const std::vector<HostTensor> &whole,
                                                       const InterpOptions &opts) {
  // Before the ranks' copies of their inputs are made: each holds its own.
  const int n = int(programRanks(func));
  if (llvm::Error err = checkInterpreterFits(func, n))
    return std::move(err);
  auto perRank = interpretRanks(func, argumentsPerRank(func, whole), opts);
  if (!perRank)
    return perRank.takeError();
  std::vector<int64_t> shards;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    shards.push_back(resultShardAxis(func, i).value_or(-1));
  std::vector<HostTensor> out;
  if (int64_t i = joinRankOutputs(shards, *perRank, out); i >= 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: the ranks' output %lld differ, though it is "
                                   "whole on every rank",
                                   (long long)i);
  return out;
}

} // namespace fusec
