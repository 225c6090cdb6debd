//===- CompiledGraph.cpp - run a compiled artifact, without the compiler --===//
#include "fusec/Runtime.h"

#include "api/RuntimeStatus.h"
#include "api/BoundWeights.h"
#include "api/RankGroup.h"

#include "compiler/support/HostTensor.h"
#include "compiler/support/Printable.h"
#include "runtime/ArtifactFile.h"
#include "runtime/CudaDriver.h"
#include "runtime/DeviceBuffers.h"
#include "runtime/Executable.h"
#include "runtime/PaddedCall.h"

#include <chrono>
#include <map>
#include <optional>

namespace fusec {

struct CompiledGraph::Impl {
  Artifact artifact;
  const ArtifactTarget *target = nullptr;
  std::optional<GpuContext> gpu;
  RankSeat seat;  ///< joinGroup; left after the executable, before the context
  std::unique_ptr<Executable> exe;
  std::unique_ptr<DeviceWeights> weights;
  LoadTimes times;

  /// An artifact whose sizes vary (Artifact::padded): the target's padded
  /// compiles, the sizes calls run at and what they pass and get, the
  /// compile that serves them (`target`, `exe`) and its buffers; the
  /// compiles loaded before, kept for the sizes that return to them.
  std::vector<const ArtifactTarget *> compiles;
  PaddedCallSpecs call;
  std::unique_ptr<PaddedBuffers> padBuffers;
  std::vector<bool> inputPadded;
  struct Loaded {
    std::unique_ptr<Executable> exe;
    std::unique_ptr<PaddedBuffers> padBuffers;
  };
  std::map<SizeMap, Loaded> kept;

  /// Whether its sizes vary (the compile in use may still be exact: at 1).
  bool varies() const { return !target->plan.sizeBounds.empty(); }
  const SizeMap &bounds() const { return target->plan.sizeBounds; }
  /// resize(): the compile that serves `sizes`, loaded, weights bound.
  Status resize(const SizeMap &sizes);
};

Status CompiledGraph::Impl::resize(const SizeMap &sizes) {
  if (bounds().empty())
    return Status::error("resize: the artifact was compiled without --max (its sizes are fixed)",
                         ErrorCode::InvalidArgument);
  SizeMap now = call.sizes;
  for (const auto &[name, size] : sizes) {
    auto bound = bounds().find(name);
    if (bound == bounds().end())
      return Status::error("resize: '" + printable(name) + "' is not a size that varies",
                           ErrorCode::InvalidArgument);
    if (size < 1 || size > bound->second)
      return Status::error("resize: " + printable(name) + "=" + std::to_string(size) +
                               " is outside 1.." + std::to_string(bound->second),
                           ErrorCode::InvalidArgument);
    now[name] = size;
  }
  SizeMap at;
  for (const auto &[name, bound] : bounds())
    at[name] = paddedSize(now.at(name), bound);
  if (at != target->plan.paddedAt) {
    const ArtifactTarget *next = nullptr;
    for (const ArtifactTarget *t : compiles)
      if (t->plan.paddedAt == at)
        next = t;
    if (!next) {
      std::string want;
      for (const auto &[name, size] : at)
        want += (want.empty() ? "" : ",") + printable(name) + "=" + std::to_string(size);
      return Status::error("resize: the artifact holds no compile at " + want +
                               " (compile it again with --max)",
                           ErrorCode::InvalidArgument);
    }
    CudaDriver &drv = gpu->driver();
    // Calls in flight still read this compile's buffers.
    if (Status s = toStatus(drv.check(drv.cuCtxSynchronize(), "resize")); !s)
      return s;
    Loaded loaded;
    if (auto it = kept.find(at); it != kept.end()) {
      loaded = std::move(it->second);
      kept.erase(it);
    } else {
      std::vector<std::string_view> images(next->cubins.begin(), next->cubins.end());
      auto made = Executable::create(next->plan, images, *gpu);
      if (!made)
        return toStatus(made.takeError());
      loaded.exe = std::move(*made);
    }
    if (weights) {
      if (Status s = toStatus(bindWeightsOfAnotherCompile(*loaded.exe, weights->pointers())); !s) {
        kept[at] = std::move(loaded);  // this compile stays as it was
        return s;
      }
    }
    std::swap(loaded.exe, exe);
    std::swap(loaded.padBuffers, padBuffers);
    kept[target->plan.paddedAt] = std::move(loaded);
    target = next;
  }
  call = paddedCallSpecs(target->plan.padding, target->plan.inputs, target->plan.outputs, now);
  return Status::success();
}

namespace {
/// Milliseconds since `start`, and restarts it.
double lap(std::chrono::steady_clock::time_point &start) {
  auto now = std::chrono::steady_clock::now();
  double ms = std::chrono::duration<double, std::milli>(now - start).count();
  start = now;
  return ms;
}

} // namespace

CompiledGraph::CompiledGraph() : p(std::make_unique<Impl>()) {}
CompiledGraph::~CompiledGraph() {
  p->weights.reset();  // the weights, modules and buffers go before the context
  p->exe.reset();
}

Status CompiledGraph::load(const std::string &path, std::unique_ptr<CompiledGraph> &out) {
  std::unique_ptr<CompiledGraph> g(new CompiledGraph());
  Impl &impl = *g->p;
  auto start = std::chrono::steady_clock::now();
  auto artifact = readArtifact(path);
  if (!artifact)
    return toStatus(artifact.takeError(), ErrorCode::InvalidArtifact);
  impl.artifact = std::move(*artifact);
  impl.times.read = lap(start);
  int ordinal = 0;
  DeviceInfo info;
  if (Status s = selectedDevice(ordinal, info); !s)
    return s;
  auto target = impl.artifact.targetFor(info, path);
  if (!target)
    return toStatus(target.takeError(), ErrorCode::WrongArchitecture);
  impl.target = *target;
  if (impl.artifact.sizesVary()) {
    // Loaded at the bounds (the first compile of each architecture).
    impl.compiles = impl.artifact.targetsOf((*target)->plan.arch);
    for (const ArtifactTarget *t : impl.compiles)
      if (t->plan.paddedAt == t->plan.sizeBounds)
        impl.target = t;
    impl.call = paddedCallSpecs(impl.target->plan.padding, impl.target->plan.inputs,
                                impl.target->plan.outputs, impl.target->plan.paddedAt);
  }
  auto gpu = GpuContext::create(ordinal);
  if (!gpu)
    return toStatus(gpu.takeError(), ErrorCode::NoGpu);
  impl.gpu.emplace(std::move(*gpu));
  impl.times.gpu = lap(start);
  std::vector<std::string_view> images(impl.target->cubins.begin(), impl.target->cubins.end());
  auto exe = Executable::create(impl.target->plan, images, *impl.gpu);
  if (!exe)
    return toStatus(exe.takeError());
  impl.exe = std::move(*exe);
  impl.times.kernels = lap(start);
  if (!impl.artifact.weights.empty()) {
    if (Status s = bindWeightFiles(*impl.exe, *impl.gpu,
                                   WeightFiles::inMemory(path + " (embedded weights)",
                                                         impl.artifact.weights),
                                   impl.artifact.parameters, impl.weights);
        !s)
      return s;
    impl.artifact.weights = std::string();  // on the GPU now
    impl.times.weights = lap(start);
  }
  out = std::move(g);
  return Status::success();
}

const std::vector<TensorSpec> &CompiledGraph::inputs() const {
  return p->varies() ? p->call.inputs : p->target->plan.inputs;
}
const std::vector<TensorSpec> &CompiledGraph::outputs() const {
  return p->varies() ? p->call.outputs : p->target->plan.outputs;
}

Status CompiledGraph::resize(const std::map<std::string, int64_t> &sizes) {
  return p->resize(sizes);
}
std::map<std::string, int64_t> CompiledGraph::sizes() const {
  return p->varies() ? p->call.sizes : SizeMap();
}
std::map<std::string, int64_t> CompiledGraph::maxSizes() const { return p->bounds(); }
std::map<std::string, int64_t> CompiledGraph::paddedSizes() const {
  return p->target->plan.paddedAt;
}
std::vector<std::string> CompiledGraph::inputDimNames(size_t i) const {
  if (i >= inputs().size())
    return {};
  const std::vector<std::vector<std::string>> &dims = p->target->plan.padding.argDims;
  return i < dims.size() ? dims[i] : std::vector<std::string>(inputs()[i].shape.size());
}
std::vector<int64_t> CompiledGraph::paddedShape(size_t i) const {
  return i < inputs().size() ? p->target->plan.inputs[i].shape : std::vector<int64_t>();
}
Status CompiledGraph::setInputPadded(size_t i, bool padded) {
  if (!p->varies())
    return Status::error("setInputPadded: the artifact was compiled without --max",
                         ErrorCode::InvalidArgument);
  return toStatus(setInputPaddedFlag(p->inputPadded, p->call.inputs.size(), i, padded),
                  ErrorCode::InvalidArgument);
}
bool CompiledGraph::isParameter(size_t i) const {
  return i < p->artifact.parameters.size() && p->artifact.parameters[i];
}
double CompiledGraph::inputScale(size_t i) const {
  const std::vector<double> &scales = p->target->plan.inputScales;
  return i < scales.size() ? scales[i] : 1.0;
}

std::vector<HostTensor> CompiledGraph::randomInputs(uint64_t seed) const {
  return drawRandomInputs(inputs(), p->target->plan.inputScales, seed);
}

Status CompiledGraph::bindWeights(const std::vector<std::string> &files) {
  auto start = std::chrono::steady_clock::now();
  std::optional<RankBlocks> blocks;
  if (Status s = p->seat.weightBlocks(p->exe->plan(), blocks); !s)
    return s;
  Status s = bindWeightFiles(*p->exe, *p->gpu, WeightFiles::open(files), p->artifact.parameters,
                             p->weights, blocks);
  p->times.weights = lap(start);
  return s;
}

Status CompiledGraph::newGroupId(std::string &id) { return newRankGroupId(id); }

Status CompiledGraph::joinGroup(int rank, const std::string &groupId) {
  return p->seat.join(*p->exe, rank, groupId);
}

int CompiledGraph::rank() const { return p->seat.rank(); }
int CompiledGraph::ranks() const { return p->exe->plan().ranks; }

bool CompiledGraph::weightsBound() const { return p->weights != nullptr; }

const std::string &CompiledGraph::arch() const { return p->target->plan.arch; }
const std::string &CompiledGraph::producer() const { return p->artifact.producer; }
const CompiledGraph::LoadTimes &CompiledGraph::loadTimes() const { return p->times; }

/// run() and replay() of a padded artifact (runtime/PaddedCall.h).
static Status runPadded(CompiledGraph::Impl &p, const std::vector<uint64_t> &in,
                        const std::vector<uint64_t> &out, void *stream, bool asGraph) {
  if (!p.padBuffers)
    p.padBuffers = std::make_unique<PaddedBuffers>(p.gpu->driver());
  return toStatus(enqueuePadded(*p.exe, *p.padBuffers, p.call, p.artifact.parameters,
                                p.weights != nullptr, p.inputPadded, in, out,
                                static_cast<CUstream>(stream), asGraph));
}

Status CompiledGraph::run(const std::vector<uint64_t> &in, const std::vector<uint64_t> &out,
                          void *stream) {
  if (p->varies())
    return runPadded(*p, in, out, stream, false);
  std::vector<CUdeviceptr> i(in.begin(), in.end()), o(out.begin(), out.end());
  return toStatus(p->exe->enqueue(i, o, static_cast<CUstream>(stream)));
}

Status CompiledGraph::replay(const std::vector<uint64_t> &in, const std::vector<uint64_t> &out,
                             void *stream) {
  if (p->varies())
    return runPadded(*p, in, out, stream, true);
  std::vector<CUdeviceptr> i(in.begin(), in.end()), o(out.begin(), out.end());
  return toStatus(p->exe->replay(i, o, static_cast<CUstream>(stream)));
}

Status CompiledGraph::runHost(const std::vector<HostTensor> &inputs,
                              std::vector<HostTensor> &outputs, bool asGraph) {
  if (p->varies()) {
    bool inputsWrong = false;
    rt::Error err = runPaddedOnHost(*p->exe, p->gpu->driver(), p->call, p->artifact.parameters,
                                    p->weights != nullptr, inputs, outputs, asGraph, inputsWrong);
    return toStatus(std::move(err), inputsWrong ? ErrorCode::InvalidArgument : ErrorCode::RuntimeFailed);
  }
  return toStatus(runOnHostTensors(*p->exe, p->gpu->driver(), inputs, outputs, asGraph));
}

} // namespace fusec
