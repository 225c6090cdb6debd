//===- RunRanks.cpp - a split program on the GPUs of this machine ---------===//
//
// `fusec run --ranks N`, `fusec bench --ranks N` and the GPU tests: one
// thread a rank, each on its own GPU (ordinal r) with its own context,
// executable and NCCL communicator, all running the one plan on their
// shards. Everything that can fail before the ranks meet is done first on
// every rank: ncclCommInitRank returns only once every rank has called it,
// so a rank that failed before it would leave the others waiting.
//
//===----------------------------------------------------------------------===//
#include "api/ProgramImpl.h"
#include "api/RankGroup.h"
#include "compiler/support/Printable.h"
#include "compiler/support/RankThreads.h"
#include "runtime/CompileKernels.h"

#include <atomic>

namespace fusec {

llvm::Error onRanks(Program::Impl &p,
                    const std::function<llvm::Error(int, const GpuContext &, Executable &)> &body) {
  const PlanDesc &plan = p.plan;
  const int n = plan.ranks;
  auto fail = [](const std::string &why) -> llvm::Error {
    return rt::Error::failure(why);
  };
  if (n < 2)
    return fail(plan.graphName + " is not split over ranks");
  auto drv = CudaDriver::get();
  if (!drv)
    return drv.takeError();
  int gpus = 0;
  if (rt::Error err = (*drv)->check((*drv)->cuDeviceGetCount(&gpus), "cuDeviceGetCount"))
    return std::move(err);
  if (gpus < n)
    return fail(printable(plan.graphName) + " is split over " + std::to_string(n) +
                " ranks, one GPU each; this machine has " + std::to_string(gpus));
  std::string id;  // the group's, made before any rank is loaded (needs NCCL)
  if (Status s = newRankGroupId(id); !s)
    return fail(s.message());
  if (!p.cache)
    p.cache = std::make_unique<KernelCache>(CacheOptions::fromEnvironment());
  auto compiled = compileKernels(plan, *p.cache);  // every rank runs the same kernels
  if (!compiled)
    return compiled.takeError();

  // Members leave in reverse: the executable, then its seat in the group
  // (the communicator), then the context.
  struct Rank {
    std::optional<GpuContext> gpu;
    RankSeat seat;
    std::unique_ptr<Executable> exe;
    std::string error;
    int failedAs = 0;  ///< 1 for the first rank to fail, 2 the next...
  };
  std::atomic<int> failures{0};
  // The ranks' first calls meet around their collectives (meetAtFirstCall);
  // a rank that fails abandons the meeting so that none waits for it.
  Rendezvous firstCall(n);
  std::vector<Rank> ranks(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    Rank &k = ranks[size_t(r)];
    auto gpu = GpuContext::create(r);
    if (!gpu)
      return gpu.takeError();
    k.gpu.emplace(std::move(*gpu));
    auto exe = Executable::create(plan, compiled->images(), *k.gpu);
    if (!exe)
      return fail("rank " + std::to_string(r) + ": " + exe.takeError().message());
    k.exe = std::move(*exe);
    k.exe->meetAtFirstCall([&firstCall] { return firstCall.meet(); });
  }
  auto run = [&](int r) {
    Rank &k = ranks[size_t(r)];
    std::string why;
    if (Status s = k.seat.join(*k.exe, r, id); !s)
      why = s.message();
    else if (llvm::Error err = body(r, *k.gpu, *k.exe))
      why = llvm::toString(std::move(err));
    if (!why.empty()) {
      k.error = "rank " + std::to_string(r) + ": " + why;
      k.failedAs = ++failures;
      firstCall.abandon();
    }
  };
  onRankThreads(n, run);
  // The first failure is the cause; those after it may only say so.
  for (const Rank &k : ranks)
    if (k.failedAs == 1)
      return fail(k.error);
  return llvm::Error::success();
}

llvm::Error runOnRanks(Program::Impl &p, const std::vector<HostTensor> &inputs,
                       std::vector<HostTensor> &outputs, bool asGraph) {
  const PlanDesc &plan = p.plan;
  const int n = plan.ranks;
  if (inputs.size() != plan.inputs.size())
    return rt::Error::failure("the graph takes " + std::to_string(plan.inputs.size()) +
                              " inputs, " + std::to_string(inputs.size()) + " were given");
  std::vector<std::vector<HostTensor>> perRank(static_cast<size_t>(std::max(n, 0)));
  if (llvm::Error err = onRanks(p, [&](int r, const GpuContext &gpu, Executable &exe) {
        std::vector<HostTensor> in = rankInputs(plan.inputShards, inputs, r, n);
        return llvm::Error(runOnHostTensors(exe, gpu.driver(), in, perRank[size_t(r)], asGraph));
      }))
    return err;
  if (int64_t i = joinRankOutputs(plan.outputShards, perRank, outputs); i >= 0)
    return rt::Error::failure("the ranks returned different values of output '" +
                              printable(plan.outputs[size_t(i)].name) +
                              "', which is whole on every rank");
  return llvm::Error::success();
}

} // namespace fusec
