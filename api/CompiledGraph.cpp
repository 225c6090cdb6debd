//===- CompiledGraph.cpp - run a compiled artifact, without the compiler --===//
#include "fusec/Runtime.h"

#include "api/RuntimeStatus.h"
#include "api/BoundWeights.h"
#include "api/RankGroup.h"

#include "compiler/support/HostTensor.h"
#include "runtime/ArtifactFile.h"
#include "runtime/CudaDriver.h"
#include "runtime/DeviceBuffers.h"
#include "runtime/Executable.h"

#include <chrono>
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
};

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

const std::vector<TensorSpec> &CompiledGraph::inputs() const { return p->artifact.inputs(); }
const std::vector<TensorSpec> &CompiledGraph::outputs() const { return p->artifact.outputs(); }
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

Status CompiledGraph::run(const std::vector<uint64_t> &in, const std::vector<uint64_t> &out,
                          void *stream) {
  std::vector<CUdeviceptr> i(in.begin(), in.end()), o(out.begin(), out.end());
  return toStatus(p->exe->enqueue(i, o, static_cast<CUstream>(stream)));
}

Status CompiledGraph::replay(const std::vector<uint64_t> &in, const std::vector<uint64_t> &out,
                             void *stream) {
  std::vector<CUdeviceptr> i(in.begin(), in.end()), o(out.begin(), out.end());
  return toStatus(p->exe->replay(i, o, static_cast<CUstream>(stream)));
}

Status CompiledGraph::runHost(const std::vector<HostTensor> &inputs,
                              std::vector<HostTensor> &outputs, bool asGraph) {
  return toStatus(runOnHostTensors(*p->exe, p->gpu->driver(), inputs, outputs, asGraph));
}

} // namespace fusec
