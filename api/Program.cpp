//===- Program.cpp - the public C++ API -----------------------------------===//
#include "api/ProgramImpl.h"
#include "runtime/PaddedCall.h"
#include "api/RuntimeStatus.h"
#include "api/BoundWeights.h"

#include "compiler/codegen/KernelSpec.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/pipeline/Shards.h"
#include "compiler/interp/Interpreter.h"
#include "compiler/support/Printable.h"
#include "frontends/onnx/OnnxReader.h"
#include "frontends/json/GraphReader.h"
#include "runtime/CompileKernels.h"
#include "runtime/DeviceMeasurements.h"
#include "compiler/support/LlvmError.h"
#include "runtime/TuningCache.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/raw_ostream.h"

namespace fusec {

namespace {
Status toStatus(llvm::Error err, ErrorCode code = ErrorCode::RuntimeFailed) {
  if (!err)
    return Status::success();
  return Status::error(llvm::toString(std::move(err)), code);
}
} // namespace

void targetTheGpu(CompileOptions &o) {
  const bool device = o.device.empty(), arch = o.arch.empty();
  if (device)
    o.device = "h100";
  if (!device && !arch)
    return;
  auto ordinal = selectedDeviceOrdinal();
  if (!ordinal) {
    llvm::consumeError(ordinal.takeError());
    return;
  }
  auto info = queryDevice(*ordinal);
  if (!info) {
    llvm::consumeError(info.takeError());
    return;
  }
  if (device)
    if (const DeviceProfile *p = profileForDeviceName(info->name))
      o.device = p->name;
  if (arch)
    o.arch = info->nvrtcArch();
}

Program::Program() : p(std::make_unique<Impl>()) {}
Program::~Program() = default;

llvm::Expected<std::unique_ptr<Program>>
compileModule(std::unique_ptr<mlir::MLIRContext> ctx, mlir::OwningOpRef<mlir::ModuleOp> module,
              const CompileOptions &options) {
  std::unique_ptr<Program> program = ProgramAccess::make();
  Program::Impl &impl = ProgramAccess::of(*program);
  impl.options = options;
  {
    mlir::TimingScope read = options.timing ? options.timing->nest("tuning cache and measurements")
                                            : mlir::TimingScope();
    // GEMM tile configurations measured by `fusec bench --autotune`.
    impl.options.gemmTuning = TuningCache::defaultEntries();
    impl.options.gemmTuningFile = printable(TuningCache::defaultPath().value_or(""));
    // The copy bandwidth `fusec bench` measured on this machine, if it did.
    if (std::optional<std::string> path = measuredDevicePath())
      impl.options.measured = loadMeasuredDevice(*path, options.device);
  }
  impl.original = std::move(module);
  {
    mlir::TimingScope copy = options.timing ? options.timing->nest("copy of the graph")
                                            : mlir::TimingScope();
    impl.fused = impl.original->clone();
  }
  impl.ctx = std::move(ctx);
  if (llvm::Error err = fuseModule(*impl.fused, impl.options))
    return std::move(err);
  auto plan = buildPlan(*impl.fused, impl.options);
  if (!plan)
    return plan.takeError();
  impl.plan = std::move(*plan);
  for (const std::string &w : impl.plan.warnings)
    llvm::errs() << "fusec: warning: " << w << "\n";
  mlir::func::FuncOp func = graphFunction(*impl.original);
  impl.plan.inputScales = randomInputScales(func);
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    impl.parameters.push_back(isParameter(func, i));
  impl.options.timing = nullptr;  // the caller's scope ends with the compile
  return program;
}

/// The compiler's options for the API's (the GPU's profile and target
/// where they are left empty).
static Status compileOptionsOf(const Options &options, CompileOptions &o) {
  o.fuse = options.fuse;
  o.device = options.device;
  o.arch = options.arch;
  targetTheGpu(o);
  o.gemm = options.gemm;
  o.gemmCandidate = options.gemmCandidate;
  o.overlapLaunches = options.overlapLaunches;
  o.shareLaunches = options.shareLaunches;
  if (options.ranks < 1 || options.ranks > int(kMaxRanks))
    return Status::error("Options::ranks is " + std::to_string(options.ranks) +
                             ": a graph splits over 1 to " + std::to_string(kMaxRanks) + " ranks",
                         ErrorCode::InvalidArgument);
  o.ranks = options.ranks;
  return Status::success();
}

static Status compileWith(llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> read,
                          std::unique_ptr<mlir::MLIRContext> context, const Options &options,
                          std::unique_ptr<Program> &out) {
  // Owned here, the context first: a return before compileModule takes them
  // erases the module while its context lives (the order parameters die in
  // is the compiler's).
  std::unique_ptr<mlir::MLIRContext> ctx = std::move(context);
  if (!read)
    return toStatus(read.takeError(), ErrorCode::InvalidGraph);
  mlir::OwningOpRef<mlir::ModuleOp> module = std::move(*read);
  CompileOptions o;
  if (Status s = compileOptionsOf(options, o); !s)
    return s;
  if (llvm::Error err = applyShards(graphFunction(*module), options.shards, "Options::shards"))
    return toStatus(std::move(err), ErrorCode::InvalidArgument);
  auto program = compileModule(std::move(ctx), std::move(module), o);
  if (!program)
    return toStatus(program.takeError(), ErrorCode::CompileFailed);
  out = std::move(*program);
  return Status::success();
}

/// Options::maxSizes: compiled at padded sizes by compilePadded, `read`
/// reading the graph at each.
static Status compilePaddedWith(
    std::function<llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>(mlir::MLIRContext &,
                                                                    const SizeMap &)>
        read,
    const Options &options, std::unique_ptr<Program> &out) {
  CompileOptions o;
  if (Status s = compileOptionsOf(options, o); !s)
    return s;
  auto program = compilePadded(std::move(read), options.sizes, options.maxSizes, o);
  if (!program)
    return toStatus(program.takeError(), ErrorCode::CompileFailed);
  out = std::move(*program);
  return Status::success();
}

Status Program::compileFile(const std::string &path, const Options &options,
                            std::unique_ptr<Program> &out) {
  if (!options.maxSizes.empty())
    return compilePaddedWith(
        [path](mlir::MLIRContext &ctx, const SizeMap &at) {
          return importModelFile(path, ctx, at);
        },
        options, out);
  auto ctx = std::make_unique<mlir::MLIRContext>();
  auto module = importModelFile(path, *ctx, options.sizes);
  return compileWith(std::move(module), std::move(ctx), options, out);
}

Status Program::compileText(const std::string &json, const std::string &name,
                            const Options &options, std::unique_ptr<Program> &out) {
  if (!options.maxSizes.empty())
    return compilePaddedWith(
        [json, name](mlir::MLIRContext &ctx, const SizeMap &at) {
          return importGraphText(json, name, ctx, at);
        },
        options, out);
  auto ctx = std::make_unique<mlir::MLIRContext>();
  auto module = importGraphText(json, name, *ctx, options.sizes);
  return compileWith(std::move(module), std::move(ctx), options, out);
}

const std::vector<TensorSpec> &Program::inputs() const {
  return p->padded() ? p->call.inputs : p->plan.inputs;
}
const std::vector<TensorSpec> &Program::outputs() const {
  return p->padded() ? p->call.outputs : p->plan.outputs;
}
bool Program::isParameter(size_t i) const {
  return i < p->parameters.size() && p->parameters[i];
}

std::vector<KernelInfo> Program::kernels() const {
  std::vector<KernelInfo> out;
  for (const PlanStep &s : p->plan.steps) {
    KernelInfo k;
    k.name = s.name;
    k.nodes = s.cost.nodes;
    k.bytes = s.cost.bytesFused;
    k.bytesUnfused = s.cost.bytesUnfused;
    k.predictedUs = s.cost.predictedUs;
    k.unfusedUs = s.cost.unfusedUs;
    if (s.kind == PlanStep::Kind::Kernel) {
      k.family = s.kernel.family;
      k.schedule = s.kernel.schedule;
      k.source = codegen::annotatedSource(s.kernel);
      k.grid = s.kernel.grid;
      k.block = s.kernel.block;
    } else {
      k.family = stepRunner(s);
      if (s.kind == PlanStep::Kind::Matmul)
        k.schedule = CublasLt::describe(s.matmul.desc);
    }
    out.push_back(std::move(k));
  }
  return out;
}

std::string Program::fusedMlir() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  p->fused->print(os);
  return text;
}

std::vector<HostTensor> Program::randomInputs(uint64_t seed) const {
  return drawRandomInputs(inputs(), p->plan.inputScales, seed);
}

Status Program::evaluateReference(const std::vector<HostTensor> &inputs,
                                  std::vector<HostTensor> &outputs) const {
  mlir::func::FuncOp func = graphFunction(*p->original);
  auto results =
      p->padded() ? interpretPadded(func, inputs, p->call.sizes) : interpret(func, inputs);
  if (!results)
    return toStatus(results.takeError(), ErrorCode::InvalidArgument);
  outputs = std::move(*results);
  return Status::success();
}

llvm::Error Program::Impl::ensureLoaded() {
  if (exe)
    return llvm::Error::success();
  if (!gpu) {
    auto g = GpuContext::create();
    if (!g)
      return g.takeError();
    gpu.emplace(std::move(*g));
  }
  if (!cache)
    cache = std::make_unique<KernelCache>(CacheOptions::fromEnvironment());
  auto compiled = compileKernels(plan, *cache);
  if (!compiled)
    return compiled.takeError();
  auto e = Executable::create(plan, compiled->images(), *gpu);
  if (!e)
    return e.takeError();
  exe = std::move(*e);
  return llvm::Error::success();
}

Status Program::Impl::load() {
  std::lock_guard<std::mutex> lock(loading);
  if (exe)
    return Status::success();
  int ordinal = 0;
  DeviceInfo info;
  if (Status s = selectedDevice(ordinal, info); !s)
    return s;
  if (!plan.arch.empty() && !info.runs(plan.arch))
    return Status::error("the kernels were built for " + plan.arch + ", which device " +
                             std::to_string(ordinal) + " (" + info.name + ", " +
                             info.nvrtcArch() + ") cannot run: compile with Options::arch \"" +
                             info.nvrtcArch() + "\", or leave it empty for the GPU's",
                         ErrorCode::WrongArchitecture);
  return toStatus(ensureLoaded());
}

Status Program::load() { return p->load(); }

Status Program::bindWeights(const std::vector<std::string> &files) {
  if (Status s = p->load(); !s)
    return s;
  std::optional<RankBlocks> blocks;
  if (Status s = p->seat.weightBlocks(p->plan, blocks); !s)
    return s;
  return bindWeightFiles(*p->exe, *p->gpu, WeightFiles::open(files), p->parameters, p->weights,
                         blocks);
}

Status Program::newGroupId(std::string &id) { return newRankGroupId(id); }

Status Program::joinGroup(int rank, const std::string &groupId) {
  if (Status s = p->seat.admit(p->plan, rank, groupId); !s)  // no GPU needed to say so
    return s;
  if (Status s = p->load(); !s)
    return s;
  return p->seat.join(*p->exe, rank, groupId);
}

int Program::rank() const { return p->seat.rank(); }
int Program::ranks() const { return p->plan.ranks; }

bool Program::weightsBound() const { return p->weights != nullptr; }

Status Program::run(const std::vector<uint64_t> &in, const std::vector<uint64_t> &out,
                    void *stream) {
  if (Status s = p->load(); !s)
    return s;
  if (p->padded())
    return toStatus(runPadded(*p, in, out, static_cast<CUstream>(stream), false));
  std::vector<CUdeviceptr> i(in.begin(), in.end()), o(out.begin(), out.end());
  return toStatus(p->exe->enqueue(i, o, static_cast<CUstream>(stream)));
}

Status Program::replay(const std::vector<uint64_t> &in, const std::vector<uint64_t> &out,
                       void *stream) {
  if (Status s = p->load(); !s)
    return s;
  if (p->padded())
    return toStatus(runPadded(*p, in, out, static_cast<CUstream>(stream), true));
  std::vector<CUdeviceptr> i(in.begin(), in.end()), o(out.begin(), out.end());
  return toStatus(p->exe->replay(i, o, static_cast<CUstream>(stream)));
}

Status Program::runHost(const std::vector<HostTensor> &inputs, std::vector<HostTensor> &outputs,
                        bool asGraph) {
  if (Status s = p->load(); !s)
    return s;
  if (p->plan.padded()) {
    bool inputsWrong = false;
    rt::Error err = runPaddedOnHost(*p->exe, p->gpu->driver(), p->call, p->parameters,
                                    p->weights != nullptr, inputs, outputs, asGraph, inputsWrong);
    return toStatus(std::move(err), inputsWrong ? ErrorCode::InvalidArgument : ErrorCode::RuntimeFailed);
  }
  return toStatus(runOnHostTensors(*p->exe, p->gpu->driver(), inputs, outputs, asGraph));
}

} // namespace fusec
