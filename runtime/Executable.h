//===- Executable.h - a loaded plan: modules, arena, matmul plans ---------===//
//
// Instantiates a PlanDesc on a GPU: every kernel's image (compiled through
// the kernel cache, runtime/CompileKernels.h, or read from an artifact)
// loaded, cuBLASLt plans chosen, and one arena allocated for all
// temporaries. Running it only enqueues launches, so the host-side cost per
// launch stays a few microseconds. Links nothing of LLVM or NVRTC.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/plan/PlanDesc.h"
#include "runtime/CublasLt.h"
#include "runtime/CudaDriver.h"
#include "runtime/Nccl.h"
#include "runtime/PeerMemory.h"

#include "compiler/support/Error.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

namespace fusec {

class Executable {
public:
  /// Loads the kernels and allocates. `images[b]` is the cubin of the plan's
  /// b-th distinct kernel body (kernelBodies(plan).firstStep[b]). `ctx` must
  /// outlive the Executable.
  static rt::Expected<std::unique_ptr<Executable>>
  create(const PlanDesc &plan, const std::vector<std::string_view> &images,
         const GpuContext &ctx);
  ~Executable();

  /// Enqueues every step on `stream`; one device pointer per graph input and
  /// output (16-byte aligned, as cuMemAlloc returns them). Calls on different
  /// streams may be in flight at once, from any threads: each stream writes
  /// its intermediates to memory of its own (StreamMemory, allocated on the
  /// stream's first call).
  rt::Error enqueue(const std::vector<CUdeviceptr> &inputs, const std::vector<CUdeviceptr> &outputs,
                      CUstream stream);
  /// What enqueue does, as one CUDA graph launch: the plan's launches are
  /// captured once per binding (the device pointers of `inputs` and
  /// `outputs`) on a stream of the Executable's own, programmatic
  /// dependent-launch edges kept, and the graph launched on `stream`. The
  /// last 16 bindings keep their executable graphs (callers that rotate
  /// among a few buffer sets capture each once); past that a new binding's
  /// capture updates the oldest one in place (cuGraphExecUpdate) instead of
  /// instantiating another. Host cost per call: one cuGraphLaunch.
  rt::Error replay(const std::vector<CUdeviceptr> &inputs, const std::vector<CUdeviceptr> &outputs,
                   CUstream stream);
  /// Binds graph inputs to device memory for every later call: `bound[i]`
  /// is input i's address (a weight uploaded once, runtime/DeviceWeights.h),
  /// 0 where the input is passed per call. Calls then take either one
  /// pointer per graph input (0 for a bound one, which the bound address
  /// replaces) or one per input left unbound, in order. Not while calls are
  /// in flight.
  rt::Error bindInputs(std::vector<CUdeviceptr> bound);
  /// Which graph inputs a call that passes `given` pointers fills, in
  /// order: every input, or the unbound ones; empty when `given` is neither
  /// count.
  std::vector<size_t> passedInputs(size_t given) const;
  /// How many bindings were captured so far.
  unsigned captures() const { return captureCount; }
  /// Enqueues step `i` alone (for per-kernel timing).
  rt::Error enqueueStep(size_t i, const std::vector<CUdeviceptr> &inputs,
                          const std::vector<CUdeviceptr> &outputs, CUstream stream);
  /// Makes the executable's context current on the calling thread (a no-op
  /// where it is): every call does it first.
  rt::Error makeCurrent() const;
  /// Fills `stream`'s intermediates with 0xFF bytes (NaN in every float type) on
  /// `stream`: a kernel that read one before the kernel ahead wrote it (a
  /// launch-overlap race) then fails a check on the first run, where an
  /// earlier run's leftovers could hold the right values. runHost (`fusec
  /// run`, the GPU tests) does this before every run.
  rt::Error poisonArena(CUstream stream);

  /// A plan split over ranks (PlanDesc::ranks > 1) meets the other ranks
  /// through `comm`, this rank's communicator of their group (Nccl.h), made
  /// on this executable's device; the caller keeps it alive and destroys it
  /// after the executable. Calls fail at the first collective without one.
  /// Every rank joins at once: where the plan has one-shot all-reduces, the
  /// ranks map each other's peer regions here (PeerMemory.h).
  rt::Error joinRanks(NcclComm comm, int rank);
  /// Why the one-shot all-reduces go through NCCL instead (empty where they
  /// do not, or the plan has none).
  std::string peerFallback() const;
  /// For ranks that are threads of one process: `meet` returns once every
  /// rank has called it (false where the group was abandoned). The first
  /// call then runs each step that meets the other ranks alone: the stream
  /// drained and every rank met before and after it. A library's first use
  /// (cuBLASLt loading its kernels, which the CUDA driver may hold up until
  /// other work in the process drains) then never overlaps another rank's
  /// collective that waits for this one (bench/NOTES.md, the hang of
  /// 2026-11-29).
  void meetAtFirstCall(std::function<bool()> meet) { firstCallMeet = std::move(meet); }

  const PlanDesc &plan() const { return desc; }
  /// The cuBLASLt heuristic rank step `i` (a matmul step) runs: its plan's
  /// algoRank, or 0 where cuBLASLt offered fewer usable results.
  int matmulRank(size_t i) const { return i < matmuls.size() ? matmuls[i].rank : 0; }

private:
  /// What a stream's calls write besides their outputs: the arena of
  /// intermediates, cuBLASLt's workspace and the cooperative kernels'
  /// scratch (per step, its counters zeroed once).
  struct StreamMemory {
    CUstream stream = nullptr;
    CUdeviceptr arena = 0, workspace = 0;
    /// Collectives' blocks laid out around NCCL (collectiveScratchBytes).
    CUdeviceptr collectives = 0;
    std::vector<CUdeviceptr> scratch;
    /// Held while a call enqueues: two threads on one stream would
    /// interleave their launches over one arena.
    std::mutex calls;
  };

  Executable(const PlanDesc &plan, const GpuContext &ctx) : desc(plan), ctx(ctx) {}
  rt::Error load(const std::vector<std::string_view> &images);
  /// `stream`'s memory, allocated on its first call; the context made
  /// current on this thread.
  rt::Expected<StreamMemory *> memoryFor(CUstream stream);
  /// Allocates `m`; its scratch counters are zeroed on `zero` (and waited
  /// for when `wait`).
  rt::Error allocate(StreamMemory &m, CUstream zero, bool wait);
  void release(StreamMemory &m);
  /// `in` with the bound inputs filled in (`full` holds them where it
  /// differs from `in`), or an error for a wrong count.
  rt::Expected<const std::vector<CUdeviceptr> *>
  withBound(const std::vector<CUdeviceptr> &in, std::vector<CUdeviceptr> &full) const;
  rt::Error enqueueWith(StreamMemory &m, const std::vector<CUdeviceptr> &in,
                        const std::vector<CUdeviceptr> &out, CUstream launch);
  rt::Error enqueueStepWith(StreamMemory &m, size_t i, const std::vector<CUdeviceptr> &in,
                            const std::vector<CUdeviceptr> &out, CUstream launch);
  CUdeviceptr bufferAddress(int id, const std::vector<CUdeviceptr> &in,
                            const std::vector<CUdeviceptr> &out, CUdeviceptr arena) const;
  /// Step `i`'s tensor map `t` for a buffer at `base` into `out`, encoded
  /// again only when the buffer moved since the last launch. Thread-safe:
  /// launches on several streams may ask at once.
  rt::Error tensorMap(size_t i, size_t t, CUdeviceptr base, CUtensorMap &out);

  /// Step `i`, a collective, on `stream` (Nccl.h; the blocks laid out
  /// around NCCL's call where its dim has elements before it).
  rt::Error enqueueCollective(StreamMemory &m, const PlanStep &step,
                              const std::vector<CUdeviceptr> &in,
                              const std::vector<CUdeviceptr> &out, CUstream stream);
  /// For a kernel step that begins with an all-reduce (PlanCollective): the
  /// ranks' regions into `args`, or, where they are not mapped, NCCL's
  /// in-place reduction of its input enqueued first and `args` empty.
  rt::Error reduceFirst(StreamMemory &m, const PlanStep &step, const std::vector<CUdeviceptr> &in,
                        const std::vector<CUdeviceptr> &out, CUstream stream, peer::Args &args);
  /// The error of a split plan's collective without a group of ranks.
  rt::Error noGroup(const PlanStep &step) const;

  PlanDesc desc;
  const GpuContext &ctx;
  NcclComm comm = nullptr;
  std::unique_ptr<PeerMemory> peers;  ///< joinRanks, where the plan has one-shot steps
  std::function<bool()> firstCallMeet;  ///< meetAtFirstCall
  bool firstCallDone = false;
  /// Whether a split plan's collectives have run once outside a capture
  /// (replay() sees to it before its first capture).
  bool ranksConnected = false;
  std::vector<CUmodule> modules;
  std::vector<CUfunction> functions;  ///< per step (null for non-kernel steps)
  std::vector<MatmulPlan> matmuls;    ///< per step (unused for others)
  std::vector<CUdeviceptr> bound;  ///< per input (bindInputs); empty when none is
  /// The inputs a call passes with the bound ones left out.
  size_t unboundInputs() const {
    return size_t(std::count(bound.begin(), bound.end(), CUdeviceptr(0)));
  }
  std::vector<std::unique_ptr<StreamMemory>> streams;
  std::mutex streamsMutex;
  /// Zeroes the scratch of a stream whose first call comes while it is being
  /// captured (the zeroing must run now, not in the caller's graph).
  CUstream setupStream = nullptr;
  /// Per step: the grid launched. Persistent kernels in clusters get no more
  /// clusters than fit on the GPU at once (fewer than SMs / cluster size when
  /// the SMs of a GPC do not divide evenly); the rest would wait a whole turn.
  std::vector<unsigned> grids;
  /// Per step: launched beside the previous kernel's tail (stepOverlaps:
  /// PlanDesc::overlapLaunches on an sm_90+ target, where kernels wait in
  /// fz_after_prior(), less steps that would read an operand too early);
  /// per call, less a step whose early-read input lies under an output
  /// (earlyReadApart).
  std::vector<bool> overlapStep;
  /// A tensor map holds its buffer's address, so it is encoded again when the
  /// address changes (~1 us of host time each). The last few addresses of
  /// each map are kept: callers that rotate among a few input buffers
  /// (double buffering, `fusec bench`'s input sets) encode each once.
  struct EncodedMap {
    CUdeviceptr base = 0;
    CUtensorMap map;
  };
  struct EncodedMaps {
    EncodedMap recent[8];
    unsigned next = 0;  ///< the slot the next new address takes
  };
  std::vector<std::vector<EncodedMaps>> maps;  ///< per step, per tensor map
  std::mutex mapsMutex;
  /// replay(): the executable graph of each recent binding (the stream's
  /// memory, the inputs, then the outputs), the slot the next one takes once all are used, the stream
  /// captures run on.
  struct Replay {
    std::vector<CUdeviceptr> binding;
    CUgraphExec exec = nullptr;
  };
  std::vector<Replay> replays;
  unsigned nextReplay = 0, captureCount = 0;
  CUstream captureStream = nullptr;
  std::mutex replayMutex;
};

} // namespace fusec
