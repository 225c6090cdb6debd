//===- ExecutableRanks.cpp - a loaded plan's meetings with other ranks ----===//
//
// The parts of Executable for a program split over ranks: joining the group
// (NCCL's communicator, the peer regions of the one-shot all-reduce), NCCL's
// collectives on the stream, and the all-reduce a kernel step begins with.
//
//===----------------------------------------------------------------------===//
#include "runtime/Executable.h"

namespace fusec {

rt::Error Executable::joinRanks(NcclComm c, int rank) {
  if (desc.ranks < 2)
    return rt::errorf("%s is not split over ranks: it has no group to join",
                      desc.graphName.c_str());
  comm = c;
  bool oneShot = false;
  for (const PlanStep &s : desc.steps)
    oneShot = oneShot || s.collective.peer;
  if (!oneShot)
    return rt::Error::success();
  auto nccl = Nccl::get();
  if (!nccl)
    return nccl.takeError();
  if (rt::Error err = makeCurrent())
    return err;
  auto m = PeerMemory::connect(ctx, **nccl, comm, rank, desc.ranks);
  if (!m)
    return m.takeError();
  peers = std::move(*m);
  return rt::Error::success();
}

std::string Executable::peerFallback() const { return peers ? peers->why() : ""; }

rt::Error Executable::noGroup(const PlanStep &step) const {
  return rt::errorf("%s: %s is split over %d ranks, one GPU a rank meeting the others "
                    "through NCCL, and this call has no group of ranks: join one first "
                    "(Program::joinGroup or CompiledGraph::joinGroup, one process a rank), "
                    "or run the graph with `fusec run GRAPH --ranks %d`",
                    step.name.c_str(), desc.graphName.c_str(), desc.ranks, desc.ranks);
}

rt::Error Executable::reduceFirst(StreamMemory &mem, const PlanStep &step,
                                  const std::vector<CUdeviceptr> &in,
                                  const std::vector<CUdeviceptr> &out, CUstream stream,
                                  peer::Args &args) {
  if (!comm)
    return noGroup(step);
  if (peers && peers->usable()) {
    args = peers->args();
    return rt::Error::success();
  }
  // The ranks do not reach each other's memory: NCCL reduces the kernel's
  // input in place (the planner gave it no other reader), and the kernel,
  // told so by ranks = 0, reads it as it is.
  auto nccl = Nccl::get();
  if (!nccl)
    return nccl.takeError();
  const PlanCollective &c = step.collective;
  CUdeviceptr partial = bufferAddress(c.src, in, out, mem.arena);
  args = peer::Args{};
  return (*nccl)->enqueue(c, desc.buffers[c.src].tensor.dtype, desc.buffers[c.src].tensor.bytes(),
                          partial, partial, comm, stream);
}

rt::Error Executable::enqueueCollective(StreamMemory &mem, const PlanStep &step,
                                        const std::vector<CUdeviceptr> &in,
                                        const std::vector<CUdeviceptr> &out, CUstream stream) {
  const PlanCollective &c = step.collective;
  if (!comm)
    return noGroup(step);
  auto nccl = Nccl::get();
  if (!nccl)
    return nccl.takeError();
  const TensorSpec &inSpec = desc.buffers[c.src].tensor, &outSpec = desc.buffers[c.dst].tensor;
  CUdeviceptr src = bufferAddress(c.src, in, out, mem.arena);
  CUdeviceptr dst = bufferAddress(c.dst, in, out, mem.arena);
  if (c.peer && peers && peers->usable()) {
    // Not beside the kernel ahead: it spins on its peers once started.
    peer::Args args = peers->args();
    void *params[] = {&src, &dst, &args};
    const size_t i = size_t(&step - desc.steps.data());
    return ctx.driver().check(ctx.driver().cuLaunchKernel(functions[i], step.kernel.grid, 1, 1,
                                                          step.kernel.block, 1, 1, 0, stream,
                                                          params, nullptr),
                              step.name.c_str());
  }
  if (collectiveScratchBytes(c, inSpec, outSpec) == 0)
    return (*nccl)->enqueue(c, inSpec.dtype, inSpec.bytes(), src, dst, comm, stream);
  // NCCL joins (cuts) whole buffers, rank after rank; along a dim with
  // `outer` elements before it, rank r's block is `outer` rows of `block`
  // bytes, every ranks-th row of the whole tensor: one 2-D copy a rank.
  int64_t outer = 1;
  for (int64_t d = 0; d < c.axis; ++d)
    outer *= inSpec.shape[size_t(d)];
  const bool gather = c.op == "all_gather";
  const int64_t part = gather ? inSpec.bytes() : outSpec.bytes();  // one rank's block
  const int64_t block = part / outer;
  CudaDriver &drv = ctx.driver();
  auto rows = [&](CUdeviceptr to, int64_t toPitch, CUdeviceptr from, int64_t fromPitch) {
    CUDA_MEMCPY2D m{};
    m.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    m.srcDevice = from;
    m.srcPitch = size_t(fromPitch);
    m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    m.dstDevice = to;
    m.dstPitch = size_t(toPitch);
    m.WidthInBytes = size_t(block);
    m.Height = size_t(outer);
    return drv.check(drv.cuMemcpy2DAsync(&m, stream), "cuMemcpy2DAsync (collective blocks)");
  };
  const int64_t ranks = c.ranks;
  if (gather) {
    if (rt::Error err = (*nccl)->enqueue(c, inSpec.dtype, inSpec.bytes(), src, mem.collectives,
                                         comm, stream))
      return err;
    for (int64_t r = 0; r < ranks; ++r)
      if (rt::Error err = rows(dst + CUdeviceptr(r * block), ranks * block,
                               mem.collectives + CUdeviceptr(r * part), block))
        return err;
    return rt::Error::success();
  }
  for (int64_t r = 0; r < ranks; ++r)
    if (rt::Error err = rows(mem.collectives + CUdeviceptr(r * part), block,
                             src + CUdeviceptr(r * block), ranks * block))
      return err;
  return (*nccl)->enqueue(c, inSpec.dtype, inSpec.bytes(), mem.collectives, dst, comm, stream);
}

} // namespace fusec
