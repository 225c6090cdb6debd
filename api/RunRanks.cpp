//===- RunRanks.cpp - a split program on the GPUs of this machine ---------===//
//
// `fusec run --ranks N` and the GPU tests: one thread a rank, each on its own
// GPU (ordinal r) with its own context, executable and NCCL communicator,
// all running the one plan on their shards. Everything that can fail before
// the ranks meet is done first on every rank: ncclCommInitRank returns only
// once every rank has called it, so a rank that failed before it would
// leave the others waiting.
//
//===----------------------------------------------------------------------===//
#include "api/ProgramImpl.h"
#include "compiler/support/Printable.h"
#include "compiler/support/RankThreads.h"
#include "runtime/CompileKernels.h"
#include "runtime/Nccl.h"

namespace fusec {

llvm::Error runOnRanks(Program::Impl &p, const std::vector<HostTensor> &inputs,
                       std::vector<HostTensor> &outputs, bool asGraph) {
  const PlanDesc &plan = p.plan;
  const int n = plan.ranks;
  auto fail = [](const std::string &why) -> llvm::Error {
    return rt::Error::failure(why);
  };
  if (n < 2)
    return fail(plan.graphName + " is not split over ranks");
  if (inputs.size() != plan.inputs.size())
    return fail("the graph takes " + std::to_string(plan.inputs.size()) + " inputs, " +
                std::to_string(inputs.size()) + " were given");
  auto drv = CudaDriver::get();
  if (!drv)
    return drv.takeError();
  int gpus = 0;
  if (rt::Error err = (*drv)->check((*drv)->cuDeviceGetCount(&gpus), "cuDeviceGetCount"))
    return std::move(err);
  if (gpus < n)
    return fail(printable(plan.graphName) + " is split over " + std::to_string(n) +
                " ranks, one GPU each; this machine has " + std::to_string(gpus));
  auto nccl = Nccl::get();
  if (!nccl)
    return nccl.takeError();
  if (!p.cache)
    p.cache = std::make_unique<KernelCache>(CacheOptions::fromEnvironment());
  auto compiled = compileKernels(plan, *p.cache);  // every rank runs the same kernels
  if (!compiled)
    return compiled.takeError();
  auto id = (*nccl)->uniqueId();
  if (!id)
    return id.takeError();

  struct Rank {
    std::optional<GpuContext> gpu;
    std::unique_ptr<Executable> exe;
    NcclComm comm = nullptr;
    std::vector<HostTensor> in, out;
    std::string error;
  };
  std::vector<Rank> ranks(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    Rank &k = ranks[size_t(r)];
    k.in = rankInputs(plan.inputShards, inputs, r, n);
    auto gpu = GpuContext::create(r);
    if (!gpu)
      return gpu.takeError();
    k.gpu.emplace(std::move(*gpu));
    auto exe = Executable::create(plan, compiled->images(), *k.gpu);
    if (!exe)
      return fail("rank " + std::to_string(r) + ": " + exe.takeError().message());
    k.exe = std::move(*exe);
  }
  auto run = [&](int r) {
    Rank &k = ranks[size_t(r)];
    rt::Error err = k.exe->makeCurrent();
    if (!err) {
      auto comm = (*nccl)->communicator(*id, n, r);
      if (comm) {
        k.comm = *comm;
        err = k.exe->joinRanks(k.comm);
      } else {
        err = comm.takeError();
      }
    }
    if (!err)
      err = runOnHostTensors(*k.exe, **drv, k.in, k.out, asGraph);
    if (err)
      k.error = "rank " + std::to_string(r) + ": " + err.message();
  };
  onRankThreads(n, run);
  std::string error;
  for (Rank &k : ranks) {
    if (error.empty())
      error = k.error;
    k.exe.reset();  // before its communicator
    (*nccl)->destroy(k.comm);
  }
  if (!error.empty())
    return fail(error);
  std::vector<std::vector<HostTensor>> perRank;
  for (Rank &k : ranks)
    perRank.push_back(std::move(k.out));
  if (int64_t i = joinRankOutputs(plan.outputShards, perRank, outputs); i >= 0)
    return fail("the ranks returned different values of output '" +
                printable(plan.outputs[size_t(i)].name) + "', which is whole on every rank");
  return llvm::Error::success();
}

} // namespace fusec
