//===- Runtime.h - run a compiled artifact, without the compiler ----------===//
//
// `fusec compile model.json -o model.fusec` writes an artifact: the plan and
// the kernels' machine code for one or more GPU architectures. A deployed
// application loads it with this class alone: link `fusec::runtime`, which
// holds no compiler (no LLVM, MLIR or NVRTC) and needs only the CUDA driver
// (and cuBLASLt where the plan calls it) at run time. docs/artifact.md.
//
//   std::unique_ptr<fusec::CompiledGraph> graph;
//   fusec::Status s = fusec::CompiledGraph::load("model.fusec", graph);
//   if (!s) { std::cerr << s.message() << "\n"; return 1; }
//   s = graph->run(deviceInputs, deviceOutputs, stream);
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fusec/Status.h"
#include "fusec/Tensor.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fusec {

/// A block of device memory on the GPU fusec runs on, freed when the last
/// owner lets go: outputs for run() where the caller has no allocator of its
/// own (the Python package returns them as DLPack tensors).
class DeviceMemory {
public:
  /// At least `bytes` (16 when 0), 16-byte aligned or better, from the device's
  /// memory pool in the order of `stream` (a CUstream; null: the legacy
  /// default stream): neither the allocation nor the free waits for the GPU.
  /// The memory is freed in the order of the legacy default stream, after
  /// the work queued there (and on every blocking stream) before the free.
  static Status allocate(uint64_t bytes, std::shared_ptr<DeviceMemory> &out,
                         void *stream = nullptr);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;
  uint64_t address() const { return ptr; }
  uint64_t bytes() const { return size; }
  /// The device's ordinal.
  int device() const { return ordinal; }
  /// Copies to and from host memory (synchronous; a copy to the host first
  /// waits for all work on the device).
  Status copyFromHost(const void *src, uint64_t bytes) {
    return copy(false, const_cast<void *>(src), bytes);
  }
  Status copyToHost(void *dst, uint64_t bytes) const { return copy(true, dst, bytes); }

private:
  DeviceMemory() = default;
  Status copy(bool toHost, void *host, uint64_t bytes) const;
  uint64_t ptr = 0, size = 0;
  int ordinal = 0;
  std::shared_ptr<void> context;  ///< the device's context, held while the memory lives
};

class CompiledGraph {
public:
  /// Reads the artifact at `path`, checks it (format version, size,
  /// checksum, every field of its plans), picks the target this process's
  /// GPU ($FUSEC_DEVICE, else 0) runs and loads its kernels there. Fails
  /// with InvalidArtifact for a file that is not a whole artifact of this
  /// format, WrongArchitecture where it holds no kernels this GPU runs, NoGpu
  /// without a GPU. Weights embedded in the artifact (`fusec compile
  /// --embed-weights`) are bound here.
  static Status load(const std::string &path, std::unique_ptr<CompiledGraph> &out);
  ~CompiledGraph();

  const std::vector<TensorSpec> &inputs() const;
  const std::vector<TensorSpec> &outputs() const;
  /// Whether graph input `i` is a parameter (a weight, bound from a
  /// safetensors file by name) rather than a per-call input.
  bool isParameter(size_t i) const;
  /// Random inputs for testing, as Program::randomInputs draws them (the same
  /// seed gives the same tensors): floats uniform in [-2, 2), scaled by
  /// 1/sqrt(K) where a matmul contracts the input over K.
  std::vector<HostTensor> randomInputs(uint64_t seed) const;
  /// That scale of input `i`'s random values (1 for most inputs).
  double inputScale(size_t i) const;
  /// The architecture of the kernels loaded ("sm_90a").
  const std::string &arch() const;
  /// The compiler that wrote the artifact ("fusec 0.1.0").
  const std::string &producer() const;

  /// Where load() spent its time, in milliseconds.
  struct LoadTimes {
    double read = 0;     ///< reading and checking the file
    double gpu = 0;      ///< the CUDA driver and the device's context (once per process)
    double kernels = 0;  ///< modules, cuBLASLt plans, the arena
    double weights = 0;  ///< the embedded weights, or the last bindWeights, to the GPU
  };
  const LoadTimes &loadTimes() const;

  /// Binds the parameters from safetensors files, as Program::bindWeights:
  /// copied to the GPU once; later calls pass only the other inputs.
  Status bindWeights(const std::vector<std::string> &files);
  /// Whether the parameters are bound (embedded in the artifact, or
  /// bindWeights).
  bool weightsBound() const;

  /// An artifact of a program split over ranks (`fusec compile --ranks N`)
  /// runs one process a GPU as Program does: newGroupId() in one process,
  /// the id passed to every rank's, joinGroup(rank, id) there, then
  /// bindWeights (this rank's blocks of the whole weights) and run().
  static Status newGroupId(std::string &id);
  Status joinGroup(int rank, const std::string &groupId);
  int rank() const;   ///< -1 before joinGroup
  int ranks() const;  ///< 1 for a program that is not split

  /// Enqueues the graph on `stream` (a CUstream; null: the default stream):
  /// one 16-byte-aligned device pointer per input (less the bound weights)
  /// and output, as
  /// Program::run takes them, with the same rules on threads and streams
  /// (calls on different streams at once, each stream with an arena of its
  /// own; one thread at a time per stream).
  Status run(const std::vector<uint64_t> &deviceInputs,
             const std::vector<uint64_t> &deviceOutputs, void *stream = nullptr);
  /// run() as one CUDA graph launch, captured once per set of buffers, as
  /// Program::replay (docs/embedding.md, "CUDA graphs").
  Status replay(const std::vector<uint64_t> &deviceInputs,
                const std::vector<uint64_t> &deviceOutputs, void *stream = nullptr);
  /// Copies `inputs` to the GPU, runs, and copies the outputs back.
  /// With `asGraph`, the run is one CUDA graph launch, as replay() makes it.
  Status runHost(const std::vector<HostTensor> &inputs, std::vector<HostTensor> &outputs,
                 bool asGraph = false);

  /// An artifact compiled with sizes that vary (`fusec compile --max
  /// S=4096`) holds a compile per padded size and calls at any sizes up to
  /// the bounds, as a Program with Options::maxSizes: it loads at the
  /// bounds; resize() sets the sizes of the calls that follow (names left
  /// out keep theirs), loading the compile that serves them on its first
  /// use (the weights bound to it), and inputs(), outputs() and every call
  /// then take tensors of those sizes. Not while another thread is inside
  /// run(), replay() or runHost(); calls already enqueued are waited for.
  /// InvalidArgument for an artifact of fixed sizes, a name that does not
  /// vary or a size outside 1..bound.
  Status resize(const std::map<std::string, int64_t> &sizes);
  /// The sizes calls run at, the bounds, and the padded sizes of the
  /// compile that serves them (all empty for an artifact of fixed sizes).
  std::map<std::string, int64_t> sizes() const;
  std::map<std::string, int64_t> maxSizes() const;
  std::map<std::string, int64_t> paddedSizes() const;
  /// The names of input `i`'s dims that vary ("" for a fixed dim; all ""
  /// for an artifact of fixed sizes).
  std::vector<std::string> inputDimNames(size_t i) const;
  /// As Program::paddedShape and Program::setInputPadded.
  std::vector<int64_t> paddedShape(size_t i) const;
  Status setInputPadded(size_t i, bool padded = true);

  struct Impl;

private:
  CompiledGraph();
  std::unique_ptr<Impl> p;
};

} // namespace fusec
