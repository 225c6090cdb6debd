//===- Executable.cpp - a loaded plan: modules, arena, matmul plans -------===//
#include "runtime/Executable.h"

#include <algorithm>
#include <iterator>

namespace fusec {
namespace {

/// The launch of `grid` blocks of `k` with its attributes: its cluster shape
/// when it has one, and with `overlap` the programmatic stream serialization
/// that lets it be launched as the previous kernel's last blocks exit, before
/// that grid has completed (it waits in fz_after_prior()). `attrs` holds them;
/// it must outlive the launch call.
CUlaunchConfig kernelLaunch(const PlanKernel &k, unsigned grid, CUstream stream, bool overlap,
                            CUlaunchAttribute (&attrs)[3]) {
  unsigned n = 0;
  if (k.clusterX > 1) {
    CUlaunchAttribute &a = attrs[n++];
    a = CUlaunchAttribute{};
    a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    a.value.clusterDim.x = k.clusterX;
    a.value.clusterDim.y = a.value.clusterDim.z = 1;
  }
  if (k.spreadClusters) {
    CUlaunchAttribute &a = attrs[n++];
    a = CUlaunchAttribute{};
    a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
    a.value.clusterSchedulingPolicyPreference = CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
  }
  if (overlap) {
    CUlaunchAttribute &a = attrs[n++];
    a = CUlaunchAttribute{};
    a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    a.value.programmaticStreamSerializationAllowed = 1;
  }
  CUlaunchConfig cfg{};
  cfg.gridDimX = grid;
  cfg.gridDimY = k.gridY;
  cfg.gridDimZ = k.gridZ;
  cfg.blockDimX = k.block;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.sharedMemBytes = k.sharedBytes;
  cfg.hStream = stream;
  cfg.attrs = attrs;
  cfg.numAttrs = n;
  return cfg;
}

} // namespace

rt::Expected<std::unique_ptr<Executable>>
Executable::create(const PlanDesc &plan, const std::vector<std::string_view> &images,
                   const GpuContext &ctx) {
  std::unique_ptr<Executable> exe(new Executable(plan, ctx));
  if (rt::Error err = exe->load(images))
    return std::move(err);
  return std::move(exe);
}

Executable::~Executable() {
  CudaDriver &drv = ctx.driver();
  // The frees need the context current on this thread (another object's
  // release may have cleared it).
  (void)makeCurrent();
  for (Replay &r : replays)
    if (r.exec)
      drv.cuGraphExecDestroy(r.exec);
  if (captureStream)
    drv.cuStreamDestroy(captureStream);
  for (CUmodule m : modules)
    if (m)
      drv.cuModuleUnload(m);
  for (auto &m : streams)
    release(*m);
  if (setupStream)
    drv.cuStreamDestroy(setupStream);
}

rt::Error Executable::makeCurrent() const {
  CUcontext current = nullptr;
  if (ctx.driver().cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == ctx.context())
    return rt::Error::success();
  return ctx.makeCurrent();
}

void Executable::release(StreamMemory &m) {
  CudaDriver &drv = ctx.driver();
  for (CUdeviceptr p : m.scratch)
    if (p)
      drv.cuMemFree(p);
  if (m.arena)
    drv.cuMemFree(m.arena);
  if (m.workspace)
    drv.cuMemFree(m.workspace);
  if (m.collectives)
    drv.cuMemFree(m.collectives);
}

rt::Error Executable::allocate(StreamMemory &m, CUstream zero, bool wait) {
  CudaDriver &drv = ctx.driver();
  m.scratch.assign(desc.steps.size(), 0);
  for (size_t i = 0; i < desc.steps.size(); ++i) {
    const PlanKernel &k = desc.steps[i].kernel;
    if (desc.steps[i].kind != PlanStep::Kind::Kernel || k.scratchBytes == 0)
      continue;
    if (rt::Error err = drv.check(drv.cuMemAlloc(&m.scratch[i], k.scratchBytes),
                                  "cuMemAlloc (kernel scratch)"))
      return err;
    // Zeroed in the stream's order, before its first launch.
    if (k.scratchZeroOnce > 0)
      if (rt::Error err = drv.check(drv.cuMemsetD8Async(m.scratch[i], 0, k.scratchZeroOnce, zero),
                                    "cuMemsetD8Async (kernel scratch)"))
        return err;
  }
  if (wait)
    if (rt::Error err = drv.check(drv.cuStreamSynchronize(zero), "cuStreamSynchronize"))
      return err;
  if (desc.arenaBytes > 0)
    if (rt::Error err = drv.check(drv.cuMemAlloc(&m.arena, desc.arenaBytes), "cuMemAlloc (arena)"))
      return err;
  if (desc.workspaceBytes > 0)
    if (rt::Error err = drv.check(drv.cuMemAlloc(&m.workspace, desc.workspaceBytes),
                                  "cuMemAlloc (matmul workspace)"))
      return err;
  if (desc.collectiveScratchBytes > 0)
    if (rt::Error err = drv.check(drv.cuMemAlloc(&m.collectives, desc.collectiveScratchBytes),
                                  "cuMemAlloc (collective scratch)"))
      return err;
  return rt::Error::success();
}

rt::Expected<Executable::StreamMemory *> Executable::memoryFor(CUstream stream) {
  CudaDriver &drv = ctx.driver();
  // A thread that never used the context gets it current first.
  if (rt::Error err = makeCurrent())
    return std::move(err);
  std::lock_guard<std::mutex> lock(streamsMutex);
  for (auto &m : streams)
    if (m->stream == stream)
      return m.get();
  auto m = std::make_unique<StreamMemory>();
  m->stream = stream;
  // A stream's first call may come while the caller captures it into a
  // graph of its own: allocating is then allowed only in relaxed mode, and
  // the zeroing runs at once on a stream of ours instead of being captured.
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  if (stream)
    (void)drv.cuStreamIsCapturing(stream, &capture);
  rt::Error made = rt::Error::success();
  if (capture == CU_STREAM_CAPTURE_STATUS_NONE) {
    made = allocate(*m, stream, /*wait=*/false);
  } else {
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    (void)drv.cuThreadExchangeStreamCaptureMode(&mode);
    if (!setupStream)
      made = drv.check(drv.cuStreamCreate(&setupStream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    if (!made)
      made = allocate(*m, setupStream, /*wait=*/true);
    (void)drv.cuThreadExchangeStreamCaptureMode(&mode);  // back to the caller's
  }
  if (made) {
    release(*m);
    return std::move(made);
  }
  streams.push_back(std::move(m));
  return streams.back().get();
}

rt::Error Executable::load(const std::vector<std::string_view> &images) {
  CudaDriver &drv = ctx.driver();
  if (rt::Error err = ctx.makeCurrent())
    return err;
  KernelBodies bodies = kernelBodies(desc);
  const std::vector<size_t> &kernelSteps = bodies.steps;
  if (images.size() != bodies.firstStep.size())
    return rt::errorf("plan %s has %zu distinct kernels but %zu images were given",
                      desc.graphName.c_str(), bodies.firstStep.size(), images.size());
  overlapStep.assign(desc.steps.size(), false);
  for (size_t i = 0; i < desc.steps.size(); ++i)
    overlapStep[i] = stepOverlaps(desc, i);
  functions.assign(desc.steps.size(), nullptr);
  grids.assign(desc.steps.size(), 0);
  matmuls.resize(desc.steps.size());
  maps.resize(desc.steps.size());
  for (size_t i = 0; i < desc.steps.size(); ++i)
    maps[i].resize(desc.steps[i].kernel.tensorMaps.size());
  for (size_t k = 0; k < kernelSteps.size(); ++k) {
    std::string_view image = images[bodies.bodyOf[k]];
    const PlanStep &step = desc.steps[kernelSteps[k]];
    CUmodule module = nullptr;
    if (rt::Error err = drv.check(drv.cuModuleLoadData(&module, image.data()),
                                  (step.name + ": cuModuleLoadData").c_str()))
      return err;
    modules.push_back(module);
    CUfunction fn = nullptr;
    if (rt::Error err = drv.check(drv.cuModuleGetFunction(&fn, module, step.kernel.entry.c_str()),
                                    "cuModuleGetFunction"))
      return err;
    // Static plus dynamic shared memory over 48 KB needs the opt-in, and the
    // static part is not known here: opt in whenever dynamic memory is used.
    if (step.kernel.sharedBytes > 0)
      if (rt::Error err = drv.check(
              drv.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     step.kernel.sharedBytes),
              "cuFuncSetAttribute"))
        return err;
    functions[kernelSteps[k]] = fn;
    grids[kernelSteps[k]] = step.kernel.grid;
    if (step.kernel.clusterX > 1) {
      CUlaunchAttribute attrs[3];
      CUlaunchConfig cfg = kernelLaunch(step.kernel, step.kernel.grid, nullptr, false, attrs);
      int fit = 0;
      if (rt::Error err = drv.check(drv.cuOccupancyMaxActiveClusters(&fit, fn, &cfg),
                                      "cuOccupancyMaxActiveClusters"))
        return err;
      if (fit > 0)
        grids[kernelSteps[k]] =
            std::min<unsigned>(step.kernel.grid, unsigned(fit) * step.kernel.clusterX);
    }
    // Pairs of clusters (OnlineColumnSoftmax.cpp) wait for each other: both
    // must be resident at once (their grid is whole, never shrunk above; the
    // cluster shape is the kernel's own). Where only one fits, as on a GPU
    // shared through MPS or green contexts, say so instead of the kernel
    // trapping after seconds of waiting. The query is the plain one (no
    // attributes, the kernel's own cluster shape: bench/micro's runner read
    // 45 on an H100 this way); should the driver refuse it, the launch goes
    // ahead unchecked.
    if (step.kernel.spreadClusters) {
      if (step.kernel.clusterX > 1)  // its grid would have been shrunk above
        return rt::errorf("kernel %s: pairs of clusters with a launch-time "
                                       "cluster shape (internal error)",
                                       step.name.c_str());
      CUlaunchAttribute none[3];
      CUlaunchConfig cfg = kernelLaunch(step.kernel, step.kernel.grid, nullptr, false, none);
      cfg.numAttrs = 0;
      int fit = 0;
      if (drv.cuOccupancyMaxActiveClusters(&fit, fn, &cfg) == CUDA_SUCCESS && fit == 1)
        return rt::errorf("kernel %s: its pairs of thread-block clusters wait for each other and need 2 "
            "resident at once, but this device fits 1; give the process the whole GPU",
            step.name.c_str());
    }
  }
  for (size_t i = 0; i < desc.steps.size(); ++i) {
    if (desc.steps[i].kind != PlanStep::Kind::Matmul)
      continue;
    auto lt = CublasLt::get();
    if (!lt)
      return lt.takeError();
    const PlanMatmul &m = desc.steps[i].matmul;
    auto p = (*lt)->plan(m.desc, desc.workspaceBytes, m.algoRank);
    if (!p)
      return p.takeError();
    matmuls[i] = *p;
  }
  // The legacy default stream's memory now, so that a load that cannot
  // hold one call's intermediates fails here.
  auto first = memoryFor(nullptr);
  if (!first)
    return first.takeError();
  return rt::Error::success();
}

rt::Error Executable::tensorMap(size_t i, size_t t, CUdeviceptr base, CUtensorMap &out) {
  std::lock_guard<std::mutex> lock(mapsMutex);
  EncodedMaps &kept = maps[i][t];
  for (const EncodedMap &r : kept.recent)
    if (r.base != 0 && r.base == base) {  // 0: a slot not yet filled
      out = r.map;
      return rt::Error::success();
    }
  EncodedMap &e = kept.recent[kept.next];
  const TensorMapParam &p = desc.steps[i].kernel.tensorMaps[t];
  CudaDriver &drv = ctx.driver();
  const bool batched = p.batches > 1;
  if (base % 16 != 0 || p.rowStrideBytes % 16 != 0 || (batched && p.batchStrideBytes % 16 != 0))
    return rt::errorf("%s: a TMA operand is not 16-byte aligned (address %llx, row "
                                   "stride %llu bytes, batch stride %llu bytes)",
                                   desc.steps[i].name.c_str(), (unsigned long long)base,
                                   (unsigned long long)p.rowStrideBytes,
                                   (unsigned long long)p.batchStrideBytes);
  cuuint64_t dims[3] = {p.cols, p.rows, p.batches}, strides[2] = {p.rowStrideBytes, p.batchStrideBytes};
  cuuint32_t box[3] = {p.boxCols, p.boxRows, 1}, unit[3] = {1, 1, 1};
  CUtensorMap fresh;  // the cached map stays whole if encoding fails
  if (rt::Error err = drv.check(
          drv.cuTensorMapEncodeTiled(
              &fresh, p.bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
              batched ? 3 : 2, reinterpret_cast<void *>(base), dims, strides, box, unit,
              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
          "cuTensorMapEncodeTiled"))
    return err;
  e.map = fresh;
  e.base = base;
  kept.next = (kept.next + 1) % std::size(kept.recent);
  out = fresh;
  return rt::Error::success();
}

CUdeviceptr Executable::bufferAddress(int id, const std::vector<CUdeviceptr> &in,
                                      const std::vector<CUdeviceptr> &out,
                                      CUdeviceptr arena) const {
  const PlanBuffer &b = desc.buffers[id];
  switch (b.kind) {
  case PlanBuffer::Kind::Input: return in[b.index];
  case PlanBuffer::Kind::Output: return out[b.index];
  case PlanBuffer::Kind::Temp: return arena + b.arenaOffset;
  }
  return 0;
}

rt::Error Executable::bindInputs(std::vector<CUdeviceptr> addresses) {
  if (addresses.size() != desc.inputs.size())
    return rt::errorf("plan %s takes %zu inputs, %zu bound", desc.graphName.c_str(),
                      desc.inputs.size(), addresses.size());
  for (CUdeviceptr p : addresses)
    if (p % 16 != 0)
      return rt::errorf("bound input buffers must be 16-byte aligned");
  const bool none = std::count(addresses.begin(), addresses.end(), CUdeviceptr(0)) ==
                    std::ptrdiff_t(addresses.size());
  bound = none ? std::vector<CUdeviceptr>() : std::move(addresses);
  return rt::Error::success();
}

std::vector<size_t> Executable::passedInputs(size_t given) const {
  std::vector<size_t> idx;
  const bool compact = !bound.empty() && given == unboundInputs();
  for (size_t i = 0; i < desc.inputs.size(); ++i)
    if (given == desc.inputs.size() || (compact && !bound[i]))
      idx.push_back(i);
  return idx.size() == given ? idx : std::vector<size_t>();
}

rt::Expected<const std::vector<CUdeviceptr> *>
Executable::withBound(const std::vector<CUdeviceptr> &in, std::vector<CUdeviceptr> &full) const {
  if (bound.empty())
    return &in;
  if (in.size() == desc.inputs.size()) {
    full = in;
    for (size_t i = 0; i < full.size(); ++i)
      if (bound[i] && !full[i])
        full[i] = bound[i];
    return &full;
  }
  if (size_t unbound = unboundInputs(); in.size() != unbound)
    return rt::errorf("plan %s takes %zu inputs (%zu with its bound weights left out), got %zu",
                      desc.graphName.c_str(), desc.inputs.size(), unbound, in.size());
  full = bound;
  for (size_t i = 0, next = 0; i < full.size(); ++i)
    if (!full[i])
      full[i] = in[next++];
  return &full;
}

rt::Error Executable::enqueueStep(size_t i, const std::vector<CUdeviceptr> &given,
                                  const std::vector<CUdeviceptr> &out, CUstream stream) {
  std::vector<CUdeviceptr> full;
  auto in = withBound(given, full);
  if (!in)
    return in.takeError();
  auto m = memoryFor(stream);
  if (!m)
    return m.takeError();
  std::lock_guard<std::mutex> calls((*m)->calls);
  return enqueueStepWith(**m, i, **in, out, stream);
}

rt::Error Executable::enqueueStepWith(StreamMemory &mem, size_t i,
                                      const std::vector<CUdeviceptr> &in,
                                      const std::vector<CUdeviceptr> &out, CUstream stream) {
  CudaDriver &drv = ctx.driver();
  const PlanStep &step = desc.steps[i];
  switch (step.kind) {
  case PlanStep::Kind::Kernel: {
    CUdeviceptr ptrs[64];
    void *params[64];
    // At most: A, three Bs and three outputs (products side by side), or A,
    // two Bs (a dual product), the output and a residual.
    constexpr size_t kMaxMaps = 8;
    CUtensorMap tmaps[kMaxMaps];  // copies: cuLaunchKernelEx reads them before returning
    size_t n = step.kernel.args.size();
    if (step.kernel.tensorMaps.size() > kMaxMaps)
      return rt::errorf("kernel %s takes more than %zu tensor maps",
                                     step.name.c_str(), kMaxMaps);
    if (n + 1 + step.kernel.tensorMaps.size() > 64)
      return rt::errorf("kernel %s has more than 64 buffers", step.name.c_str());
    for (size_t a = 0; a < n; ++a) {
      ptrs[a] = bufferAddress(step.kernel.args[a], in, out, mem.arena);
      params[a] = &ptrs[a];
    }
    const PlanKernel &k = step.kernel;
    if (k.scratchBytes > 0) {
      ptrs[n] = mem.scratch[i];
      params[n] = &ptrs[n];
      ++n;
    }
    peer::Args peerArgs;
    if (step.collective.peer) {
      if (rt::Error err = reduceFirst(mem, step, in, out, stream, peerArgs))
        return err;
      params[n++] = &peerArgs;
    }
    for (size_t t = 0; t < k.tensorMaps.size(); ++t, ++n) {
      const TensorMapParam &tm = k.tensorMaps[t];
      if (rt::Error err = tensorMap(i, t, ptrs[tm.arg] + tm.offsetBytes, tmaps[t]))
        return err;
      params[n] = &tmaps[t];
    }
    if (!k.cooperative) {
      CUlaunchAttribute attrs[3];
      bool overlap = overlapStep[i] && earlyReadApart(desc, i, in, out);
      CUlaunchConfig cfg = kernelLaunch(k, grids[i], stream, overlap, attrs);
      return drv.check(drv.cuLaunchKernelEx(&cfg, functions[i], params, nullptr),
                       step.name.c_str());
    }
    if (k.scratchZeroBytes > 0)
      if (rt::Error err = drv.check(drv.cuMemsetD32Async(mem.scratch[i], 0, k.scratchZeroBytes / 4,
                                                           stream),
                                      "cuMemsetD32Async (kernel scratch)"))
        return err;
    return drv.check(drv.cuLaunchCooperativeKernel(functions[i], k.grid, 1, 1, k.block, 1, 1,
                                                   k.sharedBytes, stream, params),
                     step.name.c_str());
  }
  case PlanStep::Kind::Matmul: {
    auto lt = CublasLt::get();
    if (!lt)
      return lt.takeError();
    const PlanMatmul &m = step.matmul;
    CUdeviceptr result = bufferAddress(m.c, in, out, mem.arena);
    // With a residual, cuBLASLt reads it as C and writes the result apart (D).
    CUdeviceptr c = m.residual >= 0 ? bufferAddress(m.residual, in, out, mem.arena) + m.residualOffset : result;
    CUdeviceptr bias = m.bias >= 0 ? bufferAddress(m.bias, in, out, mem.arena) + m.biasOffset : 0;
    return (*lt)->run(matmuls[i], bufferAddress(m.a, in, out, mem.arena) + m.aOffset,
                      bufferAddress(m.b, in, out, mem.arena) + m.bOffset, c, bias, mem.workspace,
                      desc.workspaceBytes, stream, result);
  }
  case PlanStep::Kind::Collective:
    return enqueueCollective(mem, step, in, out, stream);
  case PlanStep::Kind::Copy: {
    const PlanBuffer &dst = desc.buffers[step.copy.dst];
    return drv.check(drv.cuMemcpyDtoDAsync(bufferAddress(step.copy.dst, in, out, mem.arena),
                                           bufferAddress(step.copy.src, in, out, mem.arena),
                                           dst.tensor.bytes(), stream),
                     "cuMemcpyDtoDAsync");
  }
  }
  return rt::Error::success();
}

rt::Error Executable::poisonArena(CUstream stream) {
  auto m = memoryFor(stream);
  if (!m)
    return m.takeError();
  if (!(*m)->arena)
    return rt::Error::success();
  std::lock_guard<std::mutex> calls((*m)->calls);
  CudaDriver &drv = ctx.driver();
  return drv.check(drv.cuMemsetD8Async((*m)->arena, 0xFF, desc.arenaBytes, stream),
                   "cuMemsetD8Async (arena)");
}

rt::Error Executable::enqueue(const std::vector<CUdeviceptr> &given,
                              const std::vector<CUdeviceptr> &out, CUstream stream) {
  std::vector<CUdeviceptr> full;
  auto in = withBound(given, full);
  if (!in)
    return in.takeError();
  auto m = memoryFor(stream);
  if (!m)
    return m.takeError();
  std::lock_guard<std::mutex> calls((*m)->calls);
  return enqueueWith(**m, **in, out, stream);
}

rt::Error Executable::enqueueWith(StreamMemory &mem, const std::vector<CUdeviceptr> &in,
                                  const std::vector<CUdeviceptr> &out, CUstream stream) {
  if (in.size() != desc.inputs.size() || out.size() != desc.outputs.size())
    return rt::errorf("plan %s takes %zu inputs and %zu outputs, got %zu and %zu",
                                   desc.graphName.c_str(), desc.inputs.size(),
                                   desc.outputs.size(), in.size(), out.size());
  for (CUdeviceptr p : in)
    if (p % 16 != 0)
      return rt::errorf("input buffers must be 16-byte aligned");
  for (CUdeviceptr p : out)
    if (p % 16 != 0)
      return rt::errorf("output buffers must be 16-byte aligned");
  const bool lockstep = firstCallMeet && !firstCallDone;
  // The stream drained, then every rank met (meetAtFirstCall).
  auto meet = [&]() -> rt::Error {
    if (rt::Error err = ctx.driver().check(ctx.driver().cuStreamSynchronize(stream),
                                           "cuStreamSynchronize (first call)"))
      return err;
    if (!firstCallMeet())
      return rt::errorf("%s: another rank failed during the first call", desc.graphName.c_str());
    return rt::Error::success();
  };
  for (size_t i = 0; i < desc.steps.size(); ++i) {
    const PlanStep &s = desc.steps[i];
    const bool meets = lockstep && (s.kind == PlanStep::Kind::Collective || s.collective.peer);
    if (meets)
      if (rt::Error err = meet())
        return err;
    if (rt::Error err = enqueueStepWith(mem, i, in, out, stream))
      return err;
    if (meets)
      if (rt::Error err = meet())
        return err;
  }
  firstCallDone = firstCallDone || lockstep;
  return rt::Error::success();
}

rt::Error Executable::replay(const std::vector<CUdeviceptr> &given,
                             const std::vector<CUdeviceptr> &out, CUstream stream) {
  CudaDriver &drv = ctx.driver();
  std::vector<CUdeviceptr> full;
  auto resolved = withBound(given, full);
  if (!resolved)
    return resolved.takeError();
  const std::vector<CUdeviceptr> &in = **resolved;
  // The stream's memory first: nothing is allocated while capturing.
  auto mem = memoryFor(stream);
  if (!mem)
    return mem.takeError();
  std::lock_guard<std::mutex> lock(replayMutex);
  std::lock_guard<std::mutex> calls((*mem)->calls);
  std::vector<CUdeviceptr> binding{reinterpret_cast<CUdeviceptr>(*mem)};
  binding.insert(binding.end(), in.begin(), in.end());
  binding.insert(binding.end(), out.begin(), out.end());
  for (const Replay &r : replays)
    if (r.exec && r.binding == binding)
      return drv.check(drv.cuGraphLaunch(r.exec, stream), "cuGraphLaunch");
  if (!captureStream)
    if (rt::Error err = drv.check(drv.cuStreamCreate(&captureStream, CU_STREAM_NON_BLOCKING),
                                  "cuStreamCreate (graph capture)"))
      return err;
  // NCCL connects a communicator's peers at its first collectives, which
  // cannot happen inside a capture: a split plan runs once on the stream
  // before its first capture (on two H200s a first collective captured
  // failed with ncclInternalError; ranks that had run once captured and
  // replayed correctly).
  if (desc.ranks > 1 && !ranksConnected) {
    if (rt::Error err = enqueueWith(**mem, in, out, stream))
      return err;
    ranksConnected = true;
  }
  // Thread-local capture: other threads' CUDA calls go on while this one
  // captures. The capture is ended whatever enqueue says, so the stream is
  // never left capturing.
  if (rt::Error err = drv.check(
          drv.cuStreamBeginCapture(captureStream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
          "cuStreamBeginCapture"))
    return err;
  rt::Error enqueued = enqueueWith(**mem, in, out, captureStream);
  CUgraph graph = nullptr;
  rt::Error ended = drv.check(drv.cuStreamEndCapture(captureStream, &graph), "cuStreamEndCapture");
  if (enqueued || ended) {
    if (graph)
      drv.cuGraphDestroy(graph);
    return enqueued ? std::move(enqueued) : std::move(ended);
  }
  constexpr size_t kKept = 16;
  Replay *slot = nullptr;
  if (replays.size() < kKept) {
    slot = &replays.emplace_back();
  } else {
    slot = &replays[nextReplay];
    nextReplay = (nextReplay + 1) % kKept;
    CUgraphExecUpdateResultInfo info{};
    if (slot->exec && drv.cuGraphExecUpdate(slot->exec, graph, &info) != CUDA_SUCCESS) {
      drv.cuGraphExecDestroy(slot->exec);  // another topology: instantiated anew below
      slot->exec = nullptr;
    }
  }
  rt::Error made = rt::Error::success();
  if (!slot->exec)
    made = drv.check(drv.cuGraphInstantiate(&slot->exec, graph, 0), "cuGraphInstantiate");
  drv.cuGraphDestroy(graph);
  if (made) {
    slot->binding.clear();  // a slot without an executable graph matches no binding
    slot->exec = nullptr;
    return made;
  }
  slot->binding = std::move(binding);
  ++captureCount;
  return drv.check(drv.cuGraphLaunch(slot->exec, stream), "cuGraphLaunch");
}

} // namespace fusec
