//===- fusec.h - the public C++ API of fusec --------------------------------===//
//
// What the `fusec` CLI does, for host applications: compile a graph file into
// fused kernels (no GPU needed), inspect them, and run them on device buffers
// or host tensors. add_subdirectory this repository and link target
// `fusec::fusec`; this header includes only fusec/Status.h, fusec/Tensor.h
// and the standard library. To run compiled artifacts without the compiler,
// see fusec/Runtime.h.
//
//   std::unique_ptr<fusec::Program> program;
//   fusec::Status s = fusec::Program::compileFile("model.json", {}, program);
//   if (!s) { std::cerr << s.message() << "\n"; return 1; }
//   s = program->load();                          // NVRTC (cached) + module load
//   s = program->run(deviceInputs, deviceOutputs, stream);
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

/// The library's version, "major.minor.patch".
const char *version();

struct Options {
  bool fuse = true;  ///< false: one kernel per op (the unfused baseline)
  /// Cost-model profile: h100, h200, a100, l40s. Empty: the GPU's (device
  /// $FUSEC_DEVICE, else 0) where it is one of those, else h100.
  std::string device;
  /// NVRTC target ("sm_90a", "sm_80"). Empty: the GPU's; without a GPU, the
  /// profile's. load() refuses kernels built for another architecture.
  std::string arch;
  /// How matmul groups run: "auto" (the cost model picks), "fusec" (fusec's
  /// GEMM with the epilogue fused, a row log-sum-exp over a product always
  /// streamed in it), "cublaslt" (cuBLASLt, applying the epilogue itself where
  /// it can, else the epilogue as its own kernel; nothing streamed).
  std::string gemm = "auto";
  /// Testing and autotuning: every fusec GEMM kernel takes its i-th tile
  /// configuration candidate and every cuBLASLt product the i-th usable result
  /// of cuBLASLt's heuristic (-1: the tuning cache's, else the heuristic's).
  int gemmCandidate = -1;
  /// On sm_90+, launch each kernel while the one before it finishes
  /// (programmatic dependent launch; it waits for the other's writes before
  /// touching memory). False: every launch waits for the previous step.
  bool overlapLaunches = true;
  /// Independent small kernels next to each other share one launch, their
  /// grids side by side (`--no-share` on the CLI turns it off).
  bool shareLaunches = true;
  /// Sizes of the graph's named dims ("shape": ["B", "S", 4096]; an ONNX
  /// model's dynamic axes); every named dim must be given one.
  std::map<std::string, int64_t> sizes;
  /// Named dims that vary from call to call, each with the largest size it
  /// takes (`fusec ... --max S=4096`). The program is compiled at a padded
  /// size of each (1, 2, 3, 4, 6, 8, 12, ... up to the bound: at most a
  /// third of a call is padding), which is exact at every size up to it;
  /// resize() moves to other sizes, compiling a padded size on its first use
  /// and keeping it. A name here starts at its size in `sizes`, else at the
  /// bound. See docs/graph-format.md for what cannot be padded.
  std::map<std::string, int64_t> maxSizes;
  /// Tensor parallelism (docs/tensor-parallel.md): split the graph over this
  /// many GPUs, 1 to 64, by its sharded arguments (the graph's "shard" fields
  /// and `shards`). The program is then one rank's: inputs(), outputs() and
  /// the weights bound are that rank's blocks, and it runs once joinGroup()
  /// has made it a rank of a group.
  int ranks = 1;
  /// "NAME=DIM" entries, as `--shard` takes them: split input or parameter
  /// NAME (a glob: "*.q_proj.weight=0") along DIM; an output so named stays
  /// split where the program computes it so.
  std::vector<std::string> shards;
};

/// One generated kernel (or library call) of a compiled graph.
struct KernelInfo {
  std::string name, family, schedule, source;  ///< source is empty for library calls
  std::vector<std::string> nodes;              ///< graph nodes it covers
  int64_t bytes = 0, bytesUnfused = 0;         ///< HBM bytes fused, and if each op ran alone
  double predictedUs = 0, unfusedUs = 0;
  unsigned grid = 0, block = 0;
};

class Program {
public:
  /// Reads, checks, decomposes and fuses a graph; generates its kernels.
  static Status compileFile(const std::string &path, const Options &options,
                            std::unique_ptr<Program> &out);
  static Status compileText(const std::string &json, const std::string &name,
                            const Options &options, std::unique_ptr<Program> &out);
  ~Program();

  const std::vector<TensorSpec> &inputs() const;
  const std::vector<TensorSpec> &outputs() const;
  /// Whether graph input `i` is a parameter (a weight: "parameter": true in
  /// the graph file, an ONNX initializer) rather than a per-call input.
  bool isParameter(size_t i) const;
  std::vector<KernelInfo> kernels() const;
  /// The fused module as MLIR text (fusec.fusion groups with their costs).
  std::string fusedMlir() const;
  /// Random inputs for testing, deterministic in `seed`: floats uniform in
  /// [-2, 2), scaled by 1/sqrt(K) where a matmul contracts the input over K (so
  /// random weights behave like trained ones); integers in [-8, 8).
  std::vector<HostTensor> randomInputs(uint64_t seed) const;
  /// Runs the CPU reference interpreter on the graph as written.
  Status evaluateReference(const std::vector<HostTensor> &inputs,
                           std::vector<HostTensor> &outputs) const;

  /// For a program with Options::maxSizes: the sizes of those names for the
  /// calls that follow (names left out keep theirs). inputs(), outputs() and
  /// every call then take tensors of these sizes. Compiles the padded size
  /// that serves them where no earlier resize (or the compile) did, and
  /// loads it where the program is loaded, with the weights bound before.
  /// Not while another thread is inside run(), replay() or runHost() of this
  /// program; calls already enqueued are waited for (where it loads). Where
  /// the new padded size fails to load or bind, the program stays at its
  /// sizes.
  /// InvalidArgument for a name not in maxSizes or a size outside 1..bound;
  /// CompileFailed where the padded size does not compile.
  Status resize(const std::map<std::string, int64_t> &sizes);
  /// The sizes of Options::maxSizes' names the calls run at, and the padded
  /// sizes the program they run is compiled at (empty without maxSizes).
  std::map<std::string, int64_t> sizes() const;
  std::map<std::string, int64_t> paddedSizes() const;
  /// How many padded sizes have been compiled (1 without maxSizes).
  int compiles() const;
  /// Input `i`'s shape at the padded sizes the calls run at now (its
  /// inputs()[i] shape without maxSizes).
  std::vector<int64_t> paddedShape(size_t i) const;
  /// For a program with Options::maxSizes: whether run() and replay() take
  /// input `i` at paddedShape(i), in place, instead of at the call's sizes,
  /// copied. For an input kept from call to call, such as a KV cache: its
  /// rows past the call's sizes must be zero. The padded shape changes when
  /// resize() crosses into another padded size, the caller then moving the
  /// rows into a buffer of the new shape (once per padded size, not per
  /// call). InvalidArgument for an input out of range.
  Status setInputPadded(size_t i, bool padded = true);

  /// Compiles the kernels (NVRTC, through the kernel cache; no GPU needed)
  /// and writes an artifact that fusec::CompiledGraph (fusec/Runtime.h) loads
  /// and runs without the compiler. The file is written whole or not at all.
  Status saveArtifact(const std::string &path);

  /// Compiles (through the kernel cache) and loads the kernels on the GPU.
  /// Fails with WrongArchitecture where they were built for an architecture
  /// this GPU cannot run (sm_90a kernels on an A100, sm_80 ones on an H100).
  Status load();
  /// Binds the graph's parameters from safetensors files (one, or a model's
  /// shards), each by name: loads the program, copies the weights to the
  /// GPU once and keeps them there for every later call. Those calls then
  /// pass only the inputs that are not parameters (or every input, 0 in a
  /// bound parameter's place). Reads the files in pieces: host memory stays
  /// small whatever the model's size. InvalidArgument where a parameter is
  /// missing, has another dtype or shape, or a file holds a tensor that is no
  /// parameter. Not while calls are in flight; binding again replaces the
  /// weights (after the GPU has finished the calls that read them).
  Status bindWeights(const std::vector<std::string> &files);
  /// Whether bindWeights has bound the parameters.
  bool weightsBound() const;

  /// A program split over ranks (Options::ranks > 1) runs as one process a
  /// GPU: one process makes a group id with newGroupId() and the host
  /// application passes it to every rank's process, where the program,
  /// compiled with the same graph and options, joins as rank `rank` on this
  /// process's GPU ($FUSEC_DEVICE, else 0). joinGroup returns once every
  /// rank has joined (NCCL's communicator); bindWeights then binds this
  /// rank's blocks of the weights, which the files hold whole, and run()
  /// meets the other ranks at the program's collectives (every rank must
  /// make the same calls in the same order). InvalidArgument for a program
  /// that is not split, a rank out of range, an id not from newGroupId;
  /// RuntimeFailed where NCCL is missing or refuses.
  static Status newGroupId(std::string &id);
  Status joinGroup(int rank, const std::string &groupId);
  /// This program's rank in its group, -1 before joinGroup; the group's size.
  int rank() const;
  int ranks() const;

  /// Enqueues the graph on `stream` (a CUstream; null: the default stream).
  /// One 16-byte-aligned device pointer per input (less the bound weights,
  /// bindWeights) and output. With Options::maxSizes the tensors have the
  /// sizes of resize(): they are copied into padded buffers of the program's
  /// and the outputs back. Those buffers are the program's, not a stream's:
  /// such calls must not overlap on two streams, and the first call
  /// allocates them (make it before capturing run() into a graph of your
  /// own). An output may
  /// lie over an input (a cache updated in place); inputs are read only.
  /// On sm_90+ each kernel may start beside the end of the one before it, and
  /// the first reads nothing before the work already in `stream` completes.
  /// run() may be captured into a CUDA graph of the caller's (the kernels are
  /// loaded and the stream's memory allocated outside the capture; call
  /// load() first so that no compile happens inside it).
  ///
  /// Threads and streams: compile and inspect from any thread. Calls of
  /// run() and replay() on different streams may be in flight at once and
  /// may come from different threads: each stream writes its intermediates
  /// to memory of its own (an arena, allocated on the stream's first call
  /// and kept until the Program is destroyed). Calls on one stream are
  /// ordered by it, but must not be made from two threads at once (their
  /// launches would interleave). runHost() uses the legacy default stream.
  Status run(const std::vector<uint64_t> &deviceInputs,
             const std::vector<uint64_t> &deviceOutputs, void *stream = nullptr);
  /// What run() does, as one CUDA graph launch: the plan's launches are
  /// captured once per binding (these device pointers; the last 16 bindings
  /// are kept, a new one past that updates the oldest graph in place) with
  /// the launch overlap of run() kept, and replayed on `stream` for the host
  /// cost of one launch. The same rules on streams and threads as run().
  Status replay(const std::vector<uint64_t> &deviceInputs,
                const std::vector<uint64_t> &deviceOutputs, void *stream = nullptr);
  /// Copies `inputs` (every input, or those not bound) to the GPU, runs, and
  /// copies the outputs back. The outputs and the intermediates are filled
  /// with NaN first, so a kernel
  /// that leaves an element unwritten, or reads one before it is written,
  /// shows in the result.
  /// With `asGraph`, the run is one CUDA graph launch, as replay() makes it.
  Status runHost(const std::vector<HostTensor> &inputs, std::vector<HostTensor> &outputs,
                 bool asGraph = false);

  struct Impl;  ///< what a program holds (api/ProgramImpl.h; fusec's own tools only)

private:
  friend struct ProgramAccess;
  Program();
  std::unique_ptr<Impl> p;
};

} // namespace fusec
