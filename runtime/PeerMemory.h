//===- PeerMemory.h - each rank's region, mapped into every other rank ----===//
//
// The one-shot all-reduce (codegen/PeerAllReduce.cpp) reads the other ranks'
// tensors straight from their memory. Each rank allocates its region
// (plan/PeerRegion.h) and the ranks trade addresses and CUDA IPC handles
// through NCCL: a rank in this process is reached through peer access to its
// device, a rank in another process through its IPC handle. Where any rank
// cannot reach any other (no NVLink or PCIe peer path, IPC refused,
// FUSEC_PEER_COLLECTIVES=0), every rank agrees to leave the region unused
// and its collectives go through NCCL.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/plan/PeerRegion.h"
#include "runtime/CudaDriver.h"
#include "runtime/Nccl.h"

#include <memory>
#include <string>
#include <vector>

namespace fusec {

class PeerMemory {
public:
  /// Every rank of the group calls it at once, on its own device's context
  /// (current on the calling thread): it gathers through `comm`. A rank that
  /// cannot make or map the regions makes every rank's result unusable(),
  /// with the reason in why(). It fails only where the exchange itself
  /// cannot run (NCCL fails, or not even its stream and a few hundred bytes
  /// can be had): then, as at any collective, the other ranks wait for it.
  static rt::Expected<std::unique_ptr<PeerMemory>>
  connect(const GpuContext &gpu, const Nccl &nccl, NcclComm comm, int rank, int ranks);
  ~PeerMemory();
  PeerMemory(const PeerMemory &) = delete;
  PeerMemory &operator=(const PeerMemory &) = delete;

  bool usable() const { return ok; }
  /// Why the regions are not used (empty where they are).
  const std::string &why() const { return reason; }
  /// The one-shot kernel's last parameter.
  const peer::Args &args() const { return regions; }

private:
  explicit PeerMemory(const GpuContext &gpu) : gpu(gpu) {}
  const GpuContext &gpu;
  CUdeviceptr own = 0;
  std::vector<CUdeviceptr> opened;      ///< other processes' regions (IPC)
  std::vector<CUdevice> peerDevices;     ///< primary contexts retained for peer access
  peer::Args regions;
  bool ok = false;
  std::string reason;
};

} // namespace fusec
