//===- Nccl.h - collectives through a dlopen'ed NCCL ----------------------===//
//
// A program split over ranks (tensor parallel) meets the other ranks at its
// collective steps, which NCCL runs on the program's stream. NCCL is opened
// at run time like the CUDA driver and cuBLASLt, so that fusec builds and
// runs on machines without it; only a split program needs it, and there a
// missing NCCL is an error that says where it was looked for ($FUSEC_NCCL,
// the loader's path, $CUDA_HOME/lib64, /usr/local/cuda/lib64).
//
// Every rank of a group calls communicator() with the same unique id (made
// once, by one of them, with uniqueId(), and passed to the others by the
// host application); the call returns once all ranks have joined.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/plan/PlanDesc.h"
#include "compiler/support/DType.h"
#include "compiler/support/Error.h"

#include <cuda.h>

#include <array>
#include <string>

namespace fusec {

/// NCCL's unique id of a group of ranks (ncclUniqueId: 128 opaque bytes).
struct NcclId {
  std::array<char, 128> bytes{};
};

/// One rank's handle on a group (ncclComm_t, kept opaque).
using NcclComm = void *;

/// The process-wide NCCL: the library and its entry points.
class Nccl {
public:
  /// Loads libnccl on first use (thread-safe). A failure is remembered and
  /// reported again on every later call.
  static rt::Expected<Nccl *> get();

  /// NCCL's version as it encodes it (2.28.9: 22809) and the file loaded.
  int version() const { return libraryVersion; }
  const std::string &path() const { return loadedFrom; }

  /// A fresh unique id for a group (needs no GPU).
  rt::Expected<NcclId> uniqueId() const;
  /// This rank's communicator in the group `id` of `ranks` ranks, on the
  /// device of the CUDA context current on the calling thread. Blocks until
  /// every rank has called it.
  rt::Expected<NcclComm> communicator(const NcclId &id, int ranks, int rank) const;
  void destroy(NcclComm comm) const;

  /// Enqueues `c` on `stream`: `in` holds this rank's tensor of `inBytes`
  /// bytes of `dtype`, `out` receives the result. Both are contiguous; an
  /// all_gather or reduce_scatter along a dim with elements before it
  /// (Executable lays the blocks out around it) is given here as along the
  /// first.
  rt::Error enqueue(const PlanCollective &c, DType dtype, int64_t inBytes, CUdeviceptr in,
                    CUdeviceptr out, NcclComm comm, CUstream stream) const;

private:
  Nccl() = default;
  struct Api;
  const Api *api = nullptr;
  int libraryVersion = 0;
  std::string loadedFrom;
};

} // namespace fusec
