//===- BenchTiming.cpp - CUDA-event timing of plans and of a copy ---------===//
#include "tools/fusec/BenchTiming.h"
#include "tools/fusec/ProgramExplanation.h"

#include "frontends/json/GraphReader.h"

#include "compiler/cost/DeviceProfile.h"
#include "api/ProgramImpl.h"
#include "runtime/Safetensors.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <cmath>
#include "compiler/support/LlvmError.h"

namespace fusec::cli {

namespace {

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

/// Records `iters` (start, stop) event pairs around `body` and returns each
/// interval in ms. `body(i)` enqueues one run.
template <typename F>
llvm::Expected<std::vector<float>> timeRuns(CudaDriver &drv, int warmup, double warmupSeconds,
                                            int iters, F body) {
  // `warmup` runs, then more in batches until warmupSeconds have passed
  // with the GPU busy (BenchSettings::warmupSeconds says why).
  auto start = std::chrono::steady_clock::now();
  int runs = 0;  // the timed runs go on from here: input sets keep rotating in turn
  for (;; ++runs) {
    if (runs >= warmup && runs % 8 == 0) {
      if (llvm::Error err = drv.check(drv.cuCtxSynchronize(), "warm-up runs"))
        return std::move(err);
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >=
          warmupSeconds)
        break;
    }
    if (llvm::Error err = body(runs))
      return std::move(err);
  }
  std::vector<CUevent> events(2 * iters);
  for (CUevent &e : events)
    if (llvm::Error err = drv.check(drv.cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate"))
      return std::move(err);
  llvm::Error failure = llvm::Error::success();
  for (int i = 0; i < iters && !failure; ++i) {
    drv.cuEventRecord(events[2 * i], nullptr);
    failure = body(runs + i);
    drv.cuEventRecord(events[2 * i + 1], nullptr);
  }
  std::vector<float> ms;
  if (!failure)
    failure = drv.check(drv.cuCtxSynchronize(), "timed runs");
  for (int i = 0; i < iters && !failure; ++i) {
    float t = 0;
    failure = drv.check(drv.cuEventElapsedTime(&t, events[2 * i], events[2 * i + 1]),
                        "cuEventElapsedTime");
    ms.push_back(t);
  }
  for (CUevent e : events)
    drv.cuEventDestroy(e);
  if (failure)
    return std::move(failure);
  return ms;
}

double predictedUs(const PlanStep &s, const DeviceProfile &p, double copyBw) {
  double memory = s.cost.bytesFused / copyBw;
  bool ownGemm = s.kind == PlanStep::Kind::Kernel && s.kernel.family == "matmul";
  double math = s.kind == PlanStep::Kind::Matmul ? s.cost.flops / p.tensorFlopsPerSec
                : ownGemm && !s.kernel.tensorMaps.empty() && p.wgmmaFlopsPerSec > 0
                    ? s.cost.flops / p.wgmmaFlopsPerSec
                : ownGemm                        ? s.cost.flops / p.gemmFlopsPerSec
                                                 : s.cost.flops / p.fp32FlopsPerSec;
  return std::max(memory, math) * 1e6;
}

/// A step timed alone reads the same inputs run after run. The plan's input
/// sets rotate enough of them to keep the whole plan's inputs out of L2, but
/// a step may read only a few of them: a 33 MB weight of a plan whose inputs
/// total 1 GB came from L2 at 114% of the copy rate. This rotates copies of
/// the step's own graph inputs as well, where they fit in 3x L2 (enough sets
/// that one run's copies are out of L2 when they come round again).
class StepInputs {
public:
  StepInputs(CudaDriver &drv, const PlanDesc &plan, const PlanStep &step, int planSets,
             int64_t l2Bytes, const std::vector<CUdeviceptr> &base)
      : drv(drv), sets_(planSets) {
    std::vector<int> ids;
    auto add = [&](int buffer) {
      if (buffer >= 0 && plan.buffers[buffer].kind == PlanBuffer::Kind::Input &&
          !llvm::is_contained(ids, plan.buffers[buffer].index))
        ids.push_back(plan.buffers[buffer].index);
    };
    if (step.kind == PlanStep::Kind::Kernel)
      for (int b : step.kernel.args)
        add(b);
    else if (step.kind == PlanStep::Kind::Matmul)
      for (int b : {step.matmul.a, step.matmul.b, step.matmul.residual, step.matmul.bias})
        add(b);
    else
      add(step.copy.src);
    int64_t bytes = 0;
    for (int id : ids)
      bytes += plan.inputs[id].bytes();
    if (bytes <= 0 || bytes >= 3 * l2Bytes)
      return;
    // At most 8 for a kernel with tensor maps: the runtime keeps the maps of
    // 8 recent addresses, and more would encode one on every launch.
    int most = step.kind == PlanStep::Kind::Kernel && !step.kernel.tensorMaps.empty() ? 8 : 16;
    int sets = static_cast<int>(std::min<int64_t>(most, (3 * l2Bytes + bytes - 1) / bytes));
    if (sets <= planSets)
      return;
    for (int k = 1; k < sets; ++k) {
      std::vector<CUdeviceptr> ptrs = base;
      bool made = true;
      for (int id : ids) {
        size_t n = static_cast<size_t>(plan.inputs[id].bytes());
        CUdeviceptr p = 0;
        made = drv.cuMemAlloc(&p, n) == CUDA_SUCCESS;
        if (!made)
          break;
        owned.push_back(p);
        made = drv.cuMemcpyDtoDAsync(p, base[id], n, nullptr) == CUDA_SUCCESS;
        if (!made)
          break;
        ptrs[id] = p;
      }
      if (!made)  // no room: the step rotates the copies made so far
        break;
      copies.push_back(std::move(ptrs));
    }
    if (!copies.empty()) {
      // Set 0 is the plan's first, the rest the copies: the step's inputs
      // then take copies.size() addresses in turn, no more (a kernel's tensor
      // maps are cached for 8 recent addresses).
      copies.insert(copies.begin(), base);
      sets_ = static_cast<int>(copies.size());
    }
  }
  ~StepInputs() {
    for (CUdeviceptr p : owned)
      drv.cuMemFree(p);
  }
  /// The inputs of run i: `planInputs` (the plan's set for that run) where
  /// the step's inputs are not rotated here.
  const std::vector<CUdeviceptr> &of(int i, const std::vector<CUdeviceptr> &planInputs) const {
    return copies.empty() ? planInputs : copies[i % copies.size()];
  }
  /// Sets of the step's inputs its runs rotate through.
  int sets() const { return sets_; }

private:
  CudaDriver &drv;
  int sets_;
  std::vector<CUdeviceptr> owned;
  std::vector<std::vector<CUdeviceptr>> copies;
};

} // namespace

llvm::Expected<BenchEnvironment> measureEnvironment(Program &program) {
  Program::Impl &impl = ProgramAccess::of(program);
  if (llvm::Error err = impl.ensureLoaded())
    return std::move(err);
  CudaDriver &drv = impl.gpu->driver();
  BenchEnvironment env;
  auto info = queryDevice(impl.gpu->ordinal());
  if (!info)
    return info.takeError();
  env.deviceName = info->name;
  env.l2Bytes = info->l2Bytes;
  env.smCount = info->smCount;
  size_t bytes = std::min<size_t>(size_t(1) << 30, info->totalMem / 8);
  CUdeviceptr a = 0, b = 0;
  if (llvm::Error err = drv.check(drv.cuMemAlloc(&a, bytes), "cuMemAlloc (copy test)"))
    return std::move(err);
  if (llvm::Error err = drv.check(drv.cuMemAlloc(&b, bytes), "cuMemAlloc (copy test)")) {
    drv.cuMemFree(a);
    return std::move(err);
  }
  drv.cuMemsetD8Async(a, 0x3C, bytes, nullptr);
  auto ms = timeRuns(drv, 3, 0.0, 10, [&](int) {
    return drv.check(drv.cuMemcpyDtoDAsync(b, a, bytes, nullptr), "cuMemcpyDtoDAsync");
  });
  drv.cuMemFree(a);
  drv.cuMemFree(b);
  if (!ms)
    return ms.takeError();
  env.copyBytesPerSec = 2.0 * bytes / (median(*ms) * 1e-3);
  return env;
}

std::string tuningKeyOf(const PlanStep &s) {
  if (s.kind == PlanStep::Kind::Kernel && s.kernel.family == "matmul")
    return s.kernel.gemmKey;
  if (s.kind == PlanStep::Kind::Matmul)
    return s.matmul.tuningKey;
  return "";
}

bool tunableStep(const PlanStep &s) { return !tuningKeyOf(s).empty(); }

namespace {

/// What timing a plan takes, on one rank or the only one.
struct PlanRun {
  CudaDriver &drv;
  Executable &exe;
  const PlanDesc &plan;
  DeviceProfile profile;
  /// The host inputs of set k (this rank's blocks of a split plan's).
  std::function<std::vector<HostTensor>(int)> inputsOf;
  int inputSets = 1;
};

/// Enough input sets that one run's inputs are out of L2 when they come
/// round again.
int inputSetsFor(const PlanDesc &plan, const BenchEnvironment &env) {
  int64_t inputBytes = 0;
  for (const TensorSpec &s : plan.inputs)
    inputBytes += s.bytes();
  if (inputBytes > 0 && inputBytes < 3 * env.l2Bytes)
    return static_cast<int>(std::min<int64_t>(16, (3 * env.l2Bytes + inputBytes - 1) / inputBytes));
  return 1;
}

/// Tensors from files are the same in every set (parameters bound once, as
/// a model's weights are); without files each set is drawn from its seed.
llvm::Expected<std::function<std::vector<HostTensor>(int)>>
hostInputs(const Program &program, const BenchSettings &settings) {
  const Program::Impl &impl = ProgramAccess::of(program);
  const PlanDesc &plan = impl.plan;
  if (impl.padded()) {
    // Sets at the call's sizes padded as a call pads them (the sizes the
    // program takes among them): the kernels time what they run.
    if (!settings.sources.inputs.empty() || !settings.sources.weights.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--max draws inputs at random; it takes no --inputs or "
                                     "--weights in bench");
    uint64_t seed = settings.seed;
    return std::function<std::vector<HostTensor>(int)>([&program, &impl, seed](int k) {
      auto padded =
          padInputs(impl.plan.padding, program.randomInputs(seed * 1000003 + k), impl.call.sizes);
      if (!padded) {  // the program's own specs: cannot fail
        (void)padded.takeError();
        return std::vector<HostTensor>();
      }
      return std::move(*padded);
    });
  }
  if (settings.sources.inputs.empty() && settings.sources.weights.empty()) {
    uint64_t seed = settings.seed;
    return std::function<std::vector<HostTensor>(int)>(
        [&program, seed](int k) { return program.randomInputs(seed * 1000003 + uint64_t(k)); });
  }
  std::vector<GraphArgument> args;
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const TensorSpec &s = plan.inputs[i];
    args.push_back({s.name, s.dtype, s.shape, program.isParameter(i),
                    i < plan.inputScales.size() ? plan.inputScales[i] : 1.0});
  }
  auto read = prepareInputs(args, settings.sources, settings.seed * 1000003);
  if (!read)
    return read.takeError();
  auto given = std::make_shared<std::vector<HostTensor>>(std::move(*read));
  return std::function<std::vector<HostTensor>(int)>([given](int) { return *given; });
}

llvm::Expected<PlanTiming> timeRun(const PlanRun &run, const BenchEnvironment &env,
                                   const BenchSettings &settings);

} // namespace

llvm::Expected<PlanTiming> timePlan(Program &program, const BenchEnvironment &env,
                                    const BenchSettings &settings) {
  Program::Impl &impl = ProgramAccess::of(program);
  if (llvm::Error err = impl.ensureLoaded())
    return std::move(err);
  auto inputs = hostInputs(program, settings);
  if (!inputs)
    return inputs.takeError();
  PlanRun run{impl.gpu->driver(), *impl.exe, impl.plan, impl.profile(), *inputs,
              inputSetsFor(impl.plan, env)};
  auto t = timeRun(run, env, settings);
  if (t && !settings.tunedStepsOnly)
    // The planner's figure for the whole plan is explain's (launches chained
    // where they overlap), not its steps' sum.
    t->plannerUs = explainProgram(program, {}).predictedUs();
  return t;
}

llvm::Expected<PlanTiming> timeSplitPlan(Program &program, const BenchEnvironment &env,
                                         BenchSettings settings, double &slowestUs) {
  Program::Impl &impl = ProgramAccess::of(program);
  const PlanDesc &plan = impl.plan;
  const int n = plan.ranks;
  // Every rank makes the same calls, or a collective waits forever: warm-up
  // by count alone (a time-based one ends after different counts).
  settings.warmup = std::max(settings.warmup, 32);
  settings.warmupSeconds = 0;
  // The whole graph's sets (its own arguments, not a rank's blocks), drawn
  // once and cut by each rank.
  mlir::func::FuncOp func = graphFunction(*impl.original);
  const int sets = inputSetsFor(plan, env);
  std::vector<std::vector<HostTensor>> whole;
  for (int k = 0; k < sets; ++k) {
    auto drawn = prepareInputs(func, settings.sources, settings.seed * 1000003 + uint64_t(k));
    if (!drawn)
      return drawn.takeError();
    whole.push_back(std::move(*drawn));
  }
  std::vector<std::optional<PlanTiming>> timings(static_cast<size_t>(n));
  const DeviceProfile profile = impl.profile();
  auto eachRank = [&](int r, const GpuContext &gpu, Executable &exe) -> llvm::Error {
    PlanRun run{gpu.driver(), exe, plan, profile,
                [&](int k) { return rankInputs(plan.inputShards, whole[size_t(k)], r, n); },
                sets};
    auto t = timeRun(run, env, settings);
    if (!t)
      return t.takeError();
    t->peerFallback = exe.peerFallback();
    timings[size_t(r)] = std::move(*t);
    return llvm::Error::success();
  };
  if (llvm::Error err = onRanks(impl, eachRank))
    return std::move(err);
  slowestUs = 0;
  for (const auto &t : timings)
    slowestUs = std::max(slowestUs, t->medianUs);
  PlanTiming first = std::move(*timings[0]);
  // What ran, not what was planned: one-shot steps that fell back to NCCL.
  if (!first.peerFallback.empty())
    for (size_t i = 0; i < first.steps.size() && i < plan.steps.size(); ++i)
      if (plan.steps[i].collective.peer)
        first.steps[i].family = stepRunner(plan.steps[i], /*fellBack=*/true);
  first.plannerUs = explainProgram(program, {}).predictedUs();
  return first;
}

namespace {

llvm::Expected<PlanTiming> timeRun(const PlanRun &run, const BenchEnvironment &env,
                                   const BenchSettings &settings) {
  CudaDriver &drv = run.drv;
  const PlanDesc &plan = run.plan;
  const DeviceProfile &profile = run.profile;
  PlanTiming t;
  t.inputSets = run.inputSets;
  std::vector<std::unique_ptr<DeviceBuffers>> sets;
  for (int k = 0; k < t.inputSets; ++k) {
    sets.push_back(std::make_unique<DeviceBuffers>(drv));
    if (llvm::Error err = sets.back()->upload(run.inputsOf(k)))
      return std::move(err);
  }
  DeviceBuffers outs(drv);
  if (llvm::Error err = outs.allocatePoisoned(plan.outputs))
    return std::move(err);
  Executable &exe = run.exe;
  auto inputsOf = [&](int i) -> const std::vector<CUdeviceptr> & {
    return sets[i % t.inputSets]->pointers();
  };
  // Step s run alone (its own inputs rotated too: StepInputs): its median
  // and the sets of its inputs it went through, in `st`.
  auto timeAlone = [&](size_t s, StepTiming &st) -> llvm::Error {
    StepInputs rotated(drv, plan, plan.steps[s], t.inputSets, env.l2Bytes, inputsOf(0));
    auto ms = timeRuns(drv, settings.warmup, settings.warmupSeconds, settings.iters, [&](int i) {
      return exe.enqueueStep(s, rotated.of(i, inputsOf(i)), outs.pointers(), nullptr);
    });
    if (!ms)
      return ms.takeError();
    st.medianUs = median(*ms) * 1e3;
    st.inputSets = rotated.sets();
    return llvm::Error::success();
  };
  if (settings.tunedStepsOnly) {
    if (llvm::Error err = exe.enqueue(inputsOf(0), outs.pointers(), nullptr))
      return std::move(err);
    for (const PlanStep &step : plan.steps) {
      StepTiming st;
      st.name = step.name;
      if (tunableStep(step))
        if (llvm::Error err = timeAlone(&step - plan.steps.data(), st))
          return std::move(err);
      t.steps.push_back(st);
    }
    return t;
  }
  // The whole graph, and the host time it takes to enqueue it.
  auto call = [&](int i) -> llvm::Error {
    if (settings.cudaGraph)
      return exe.replay(inputsOf(i), outs.pointers(), nullptr);
    return exe.enqueue(inputsOf(i), outs.pointers(), nullptr);
  };
  auto whole = timeRuns(drv, settings.warmup, settings.warmupSeconds, settings.iters, call);
  if (!whole)
    return whole.takeError();
  t.medianUs = median(*whole) * 1e3;
  // Host cost of a launch: each enqueue timed alone, the median taken. Few
  // enough runs that the driver's launch queue never fills (a full queue
  // blocks the host and would time the GPU instead).
  const int hostRuns = 21;
  std::vector<float> hostUs;
  for (int i = 0; i < hostRuns; ++i) {
    auto h0 = std::chrono::steady_clock::now();
    if (llvm::Error err = call(i))
      return std::move(err);
    hostUs.push_back(std::chrono::duration<float, std::micro>(
                         std::chrono::steady_clock::now() - h0).count());
  }
  if (llvm::Error err = drv.check(drv.cuCtxSynchronize(), "host-cost runs"))
    return std::move(err);
  t.hostUsPerCall = median(hostUs);
  t.hostUsPerLaunch = t.hostUsPerCall / std::max<size_t>(1, plan.steps.size());
  // Steps 0..i in a row, for each i before the last (the whole graph is that
  // one). The GPU is warm by now: warm-up runs, not seconds.
  std::vector<double> prefixUs(plan.steps.size(), t.medianUs);
  for (size_t last = 0; settings.perStep && last + 1 < plan.steps.size(); ++last) {
    auto ms = timeRuns(drv, settings.warmup, 0.0, settings.iters, [&](int i) -> llvm::Error {
      for (size_t s = 0; s <= last; ++s)
        if (llvm::Error err = exe.enqueueStep(s, inputsOf(i), outs.pointers(), nullptr))
          return err;
      return llvm::Error::success();
    });
    if (!ms)
      return ms.takeError();
    prefixUs[last] = median(*ms) * 1e3;
  }
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlanStep &step = plan.steps[s];
    StepTiming st;
    if (settings.perStep) {
      if (llvm::Error err = timeAlone(s, st))
        return std::move(err);
      st.inGraphUs = prefixUs[s] - (s > 0 ? prefixUs[s - 1] : 0.0);
    }
    st.name = step.name;
    st.family = stepRunner(step);
    st.nodes = step.cost.nodes;
    st.bytes = static_cast<double>(step.kind == PlanStep::Kind::Copy
                                       ? 2 * plan.buffers[step.copy.dst].tensor.bytes()
                                       : step.cost.bytesFused);
    if (step.kind == PlanStep::Kind::Matmul ||
        (step.kind == PlanStep::Kind::Kernel && step.kernel.family == "matmul"))
      st.flops = static_cast<double>(step.cost.flops);
    st.predictedUs = predictedUs(step, profile, env.copyBytesPerSec);
    st.plannerUs = step.cost.predictedUs;
    t.bytes += st.bytes;
    t.predictedUs += st.predictedUs;
    t.plannerUs += st.plannerUs;
    t.steps.push_back(st);
  }
  t.predictedUs += plan.steps.size() * profile.launchSeconds * 1e6;
  t.matmulPeak = profile.tensorFlopsPerSec;
  return t;
}

} // namespace

} // namespace fusec::cli
