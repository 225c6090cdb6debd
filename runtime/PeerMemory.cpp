//===- PeerMemory.cpp - each rank's region, mapped into every other rank --===//
#include "runtime/PeerMemory.h"

#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace fusec {

namespace {

/// What a rank tells the others about its region.
struct Record {
  int64_t pid = 0;
  int32_t ordinal = -1;  ///< the device, as this process numbers it
  int32_t ok = 0;        ///< the region exists and has an IPC handle
  uint64_t address = 0;
  CUipcMemHandle handle{};
};

} // namespace

rt::Expected<std::unique_ptr<PeerMemory>> PeerMemory::connect(const GpuContext &gpu,
                                                              const Nccl &nccl, NcclComm comm,
                                                              int rank, int ranks) {
  CudaDriver &drv = gpu.driver();
  std::unique_ptr<PeerMemory> m(new PeerMemory(gpu));
  m->regions.rank = rank;
  m->regions.ranks = ranks;
  // Whatever fails here becomes a reason, not an early return: the other
  // ranks wait in the gathers below for this one.
  Record mine;
  mine.pid = int64_t(::getpid());
  mine.ordinal = gpu.ordinal();
  if (const char *off = std::getenv("FUSEC_PEER_COLLECTIVES"); off && std::string(off) == "0")
    m->reason = "FUSEC_PEER_COLLECTIVES=0";
  else if (ranks > peer::kMaxRanks)
    m->reason = std::to_string(ranks) + " ranks, more than the one-shot kernel's " +
                std::to_string(peer::kMaxRanks);
  else if (rt::Error err = drv.check(drv.cuMemAlloc(&m->own, peer::kRegionBytes),
                                     "cuMemAlloc (peer region)"))
    m->reason = err.message();
  else if (rt::Error err = drv.check(drv.cuMemsetD8Async(m->own, 0, peer::kRegionBytes, nullptr),
                                     "cuMemsetD8Async (peer region)"))
    m->reason = err.message();
  else if (rt::Error err = drv.check(drv.cuCtxSynchronize(), "cuCtxSynchronize (peer region)"))
    m->reason = err.message();  // zero before any peer can raise a flag in it
  else if (rt::Error err = drv.check(drv.cuIpcGetMemHandle(&mine.handle, m->own),
                                     "cuIpcGetMemHandle"))
    m->reason = err.message();
  else
    mine.ok = 1;
  mine.address = m->own;

  CUstream stream = nullptr;
  CUdeviceptr staging = 0;
  const size_t bytes = sizeof(Record) * size_t(ranks + 1);
  auto cleanup = [&] {
    if (staging)
      drv.cuMemFree(staging);
    if (stream)
      drv.cuStreamDestroy(stream);
  };
  if (rt::Error err = drv.check(drv.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
                                "cuStreamCreate (peer exchange)")) {
    cleanup();
    return std::move(err);
  }
  if (rt::Error err = drv.check(drv.cuMemAlloc(&staging, bytes), "cuMemAlloc (peer exchange)")) {
    cleanup();
    return std::move(err);
  }
  // [0]: this rank's record; [1 + r]: rank r's, gathered.
  std::vector<Record> all(static_cast<size_t>(ranks), Record{});
  PlanCollective gather{"all_gather", "sum", 0, ranks, -1, -1};
  rt::Error failed = drv.check(drv.cuMemcpyHtoD(staging, &mine, sizeof mine), "cuMemcpyHtoD");
  if (!failed)
    failed = nccl.enqueue(gather, DType::Bool, sizeof(Record), staging, staging + sizeof(Record),
                          comm, stream);
  if (!failed)
    failed = drv.check(drv.cuStreamSynchronize(stream), "cuStreamSynchronize (peer exchange)");
  if (!failed)
    failed = drv.check(drv.cuMemcpyDtoH(all.data(), staging + sizeof(Record),
                                        sizeof(Record) * size_t(ranks)),
                       "cuMemcpyDtoH");
  if (failed) {
    cleanup();
    return std::move(failed);
  }

  // Map every other rank's region where every rank offered one.
  bool offered = true;
  for (const Record &r : all)
    offered = offered && r.ok;
  if (offered && m->reason.empty()) {
    for (int r = 0; r < ranks && m->reason.empty(); ++r) {
      const Record &theirs = all[size_t(r)];
      if (r == rank) {
        m->regions.base[r] = m->own;
      } else if (theirs.pid == mine.pid) {
        // Same process: the address is valid here once this context may
        // reach the peer's device.
        CUdevice peerDevice = 0;
        int can = 0;
        CUcontext peerCtx = nullptr;
        if (rt::Error err = drv.check(drv.cuDeviceGet(&peerDevice, theirs.ordinal), "cuDeviceGet"))
          m->reason = err.message();
        else if (drv.cuDeviceCanAccessPeer(&can, gpu.device(), peerDevice) != CUDA_SUCCESS || !can)
          m->reason = "GPU " + std::to_string(gpu.ordinal()) + " cannot reach GPU " +
                      std::to_string(theirs.ordinal) + "'s memory (no peer path)";
        else if (rt::Error err = drv.check(drv.cuDevicePrimaryCtxRetain(&peerCtx, peerDevice),
                                           "cuDevicePrimaryCtxRetain (peer)"))
          m->reason = err.message();
        else {
          m->peerDevices.push_back(peerDevice);
          CUresult r2 = drv.cuCtxEnablePeerAccess(peerCtx, 0);
          if (r2 != CUDA_SUCCESS && r2 != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
            m->reason = drv.check(r2, "cuCtxEnablePeerAccess").message();
          else
            m->regions.base[r] = theirs.address;
        }
      } else {
        CUdeviceptr p = 0;
        if (rt::Error err = drv.check(drv.cuIpcOpenMemHandle(&p, theirs.handle,
                                                             CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                                      "cuIpcOpenMemHandle"))
          m->reason = err.message();
        else {
          m->opened.push_back(p);
          m->regions.base[r] = p;
        }
      }
    }
  } else if (m->reason.empty()) {
    m->reason = "another rank has no peer region";
  }

  // Every rank uses the regions, or none does.
  int32_t agreed = m->reason.empty() ? 1 : 0;
  PlanCollective least{"all_reduce", "min", 0, ranks, -1, -1};
  failed = drv.check(drv.cuMemcpyHtoD(staging, &agreed, sizeof agreed), "cuMemcpyHtoD");
  if (!failed)
    failed = nccl.enqueue(least, DType::I32, sizeof agreed, staging, staging, comm, stream);
  if (!failed)
    failed = drv.check(drv.cuStreamSynchronize(stream), "cuStreamSynchronize (peer exchange)");
  if (!failed)
    failed = drv.check(drv.cuMemcpyDtoH(&agreed, staging, sizeof agreed), "cuMemcpyDtoH");
  cleanup();
  if (failed)
    return std::move(failed);
  m->ok = agreed == 1;
  if (!m->ok && m->reason.empty())
    m->reason = "another rank cannot reach its peers' memory";
  return std::move(m);
}

PeerMemory::~PeerMemory() {
  CudaDriver &drv = gpu.driver();
  for (CUdeviceptr p : opened)
    drv.cuIpcCloseMemHandle(p);
  if (own)
    drv.cuMemFree(own);
  for (CUdevice d : peerDevices)
    drv.cuDevicePrimaryCtxRelease(d);
}

} // namespace fusec
