//===- Driver.cpp - shared plumbing of the fusec subcommands --------------===//
#include "tools/fusec/Driver.h"
#include "tools/fusec/GraphIO.h"
#include "compiler/pipeline/PaddedGraph.h"
#include "compiler/pipeline/Shards.h"
#include "tools/fusec/Sharding.h"

#include "compiler/dialect/FusecDialect.h"
#include "compiler/support/AtomicFile.h"
#include "frontends/onnx/OnnxReader.h"
#include "runtime/Safetensors.h"
#include "frontends/json/GraphReader.h"
#include "compiler/transforms/Passes.h"
#include "runtime/CudaDriver.h"
#include "api/ProgramImpl.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "compiler/support/LlvmError.h"
#include "compiler/support/Printable.h"

#include <cmath>
#include <cstdio>

namespace fusec::cli {

int reportError(const std::string &message) {
  llvm::errs() << "fusec: error: " << message << "\n";
  return kUserError;
}

int reportError(llvm::Error err) {
  std::string message = llvm::toString(std::move(err));
  return reportError(message);
}

std::unique_ptr<mlir::MLIRContext> makeContext() {
  auto ctx = std::make_unique<mlir::MLIRContext>();
  ctx->loadDialect<FusecDialect, mlir::func::FuncDialect>();
  return ctx;
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> loadGraph(const std::string &path,
                                                            mlir::MLIRContext &ctx,
                                                            const std::vector<std::string> &bind,
                                                            const std::vector<std::string> &max) {
  llvm::Expected<SizeBindings> sizes = parseSizeBindings(bind);
  if (!sizes)
    return sizes.takeError();
  if (max.empty())
    return importModelFile(path, ctx, *sizes);
  auto padded = paddedSizes(*sizes, max);
  if (!padded)
    return padded.takeError();
  auto bounds = parseSizeBindings(max, "--max");
  return readPadded(
      [&](const SizeMap &at) { return importModelFile(path, ctx, at); }, *padded, *bounds);
}

llvm::Expected<SizeBindings> paddedSizes(const SizeBindings &sizes,
                                         const std::vector<std::string> &max) {
  auto bounds = parseSizeBindings(max, "--max");
  if (!bounds)
    return bounds.takeError();
  SizeBindings out = sizes;
  for (auto [name, bound] : *bounds) {
    if (bound < 1)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--max %s=%lld: a bound is at least 1",
                                     printable(name).c_str(), (long long)bound);
    auto it = sizes.find(name);
    int64_t size = it == sizes.end() ? bound : it->second;
    if (size < 1 || size > bound)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(), "--bind %s=%lld is outside 1..%lld (--max)",
          printable(name).c_str(), (long long)size, (long long)bound);
    out[name] = paddedSize(size, bound);
  }
  return out;
}

void addMaxOption(CLI::App *cmd, std::vector<std::string> &max) {
  cmd->add_option("--max", max,
                  "named dims that vary from call to call, NAME=BOUND: compiled once for a "
                  "padded size (1, 2, 3, 4, 6, 8, 12, ... up to BOUND) that serves every size "
                  "up to it; --bind gives this call's size (default: the bound)");
}

llvm::Error decompose(mlir::ModuleOp module, int ranks) {
  std::string diag;
  mlir::ScopedDiagnosticHandler handler(module.getContext(), [&](mlir::Diagnostic &d) {
    llvm::raw_string_ostream os(diag);
    os << d.getLocation() << ": " << d.str() << "\n";
    return mlir::success();
  });
  mlir::PassManager pm(module.getContext());
  buildDecomposePipeline(pm);
  if (mlir::failed(pm.run(module)))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: decomposition failed:\n%s", diag.c_str());
  if (ranks <= 1)
    return llvm::Error::success();
  // The partition's errors name the argument at fault: the message alone.
  std::string why;
  mlir::ScopedDiagnosticHandler splitHandler(module.getContext(), [&](mlir::Diagnostic &d) {
    why += (why.empty() ? "" : "; ") + d.str();
    return mlir::success();
  });
  mlir::PassManager split(module.getContext());
  buildPartitionPipeline(split, ranks);
  if (mlir::failed(split.run(module)))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot split the graph over %d ranks: %s", ranks, why.c_str());
  return llvm::Error::success();
}

std::string printIR(mlir::Operation *op, bool withLocations) {
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::OpPrintingFlags flags;
  if (withLocations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  op->print(os, flags);
  os << "\n";
  return text;
}

void addPlanFlags(CLI::App *cmd, PlanFlags &flags) {
  cmd->add_flag("--no-fuse", flags.noFuse,
                "one kernel per op (the unfused baseline every speedup is measured against)");
  cmd->add_option("--device", flags.device,
                  "cost-model device profile: h100, h200, a100, l40s (default: the GPU's, else h100)");
  cmd->add_option("--arch", flags.arch, "NVRTC target, e.g. sm_90a, sm_80 (default: the device's)");
  cmd->add_option("--gemm", flags.gemm,
                  "matmul groups: auto (the cost model picks), fusec (fusec's GEMM, epilogue "
                  "fused; a row log-sum-exp over a product always streamed in it), cublaslt "
                  "(cuBLASLt, applying the epilogue itself where it can, else the epilogue in its "
                  "own kernel; nothing streamed in a product's epilogue)")
      ->check(CLI::IsMember({"auto", "fusec", "cublaslt"}));
  cmd->add_flag("--no-share", flags.noShare,
                "give every kernel its own launch (by default, independent small kernels next "
                "to each other share one launch, their grids side by side)");
  addBindOption(cmd, flags.bind);
  addMaxOption(cmd, flags.max);
  addSplitOptions(cmd, flags.ranks, flags.shard);
}

void addBindOption(CLI::App *cmd, std::vector<std::string> &bind) {
  cmd->add_option("--bind", bind,
                  "sizes of the graph's named dims, NAME=N (repeat or separate with commas): "
                  "\"shape\": [\"B\", \"S\", 4096] in JSON, an ONNX model's dynamic axes");
}

void addLaunchFlags(CLI::App *cmd, PlanFlags &flags) {
  cmd->add_flag("--no-overlap", flags.noOverlap,
                "launch each kernel only once the previous one has completed (by default, on "
                "sm_90+ a kernel is launched as the previous one's last blocks exit and waits "
                "for its results: programmatic dependent launch)");
}

llvm::Error notOverAnInput(const std::string &output, const std::vector<std::string> &inputs,
                           const char *flag) {
  if (output.empty() || output == "-")
    return llvm::Error::success();
  for (const std::string &in : inputs) {
    bool same = false;
    if (in.empty() || in == "-" || llvm::sys::fs::equivalent(output, in, same) || !same)
      continue;  // an error: one of them does not exist, so they are not one file
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "%s %s is the file %s, which this command reads: write the output elsewhere", flag,
        printable(output).c_str(), printable(in).c_str());
  }
  return llvm::Error::success();
}

std::vector<std::string> sourceFiles(const TensorSources &sources,
                                     std::initializer_list<std::string> others) {
  std::vector<std::string> files = sources.weights;
  files.push_back(sources.inputs);
  files.push_back(sources.model);
  files.insert(files.end(), others.begin(), others.end());
  return files;
}

CLI::Validator finiteIn(double lo, double hi) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g to %g", lo, hi);
  const std::string range = buf;
  return CLI::Validator(
      [lo, hi, range](std::string &text) {
        double v = 0;
        if (llvm::StringRef(text).trim().getAsDouble(v) || !std::isfinite(v) || v < lo || v > hi)
          return "a number from " + range + ", not '" + printable(text) + "'";
        return std::string();
      },
      "NUMBER from " + range);
}

CLI::Validator nonEmptyPath() {
  return CLI::Validator(
      [](std::string &path) {
        return path.empty() ? std::string("an empty path names no file") : std::string();
      },
      "");
}

CLI::Option *addOutputOption(CLI::App *cmd, std::string &output, const std::string &help) {
  return cmd->add_option("-o,--output", output, help)->check(nonEmptyPath());
}

CLI::Option *addSeedOption(CLI::App *cmd, uint64_t &seed) {
  return cmd->add_option("--seed", seed, "seed for random inputs")
      ->capture_default_str()
      ->check([](const std::string &text) {
        // Digits only and at most 2^64 - 1: "-1" and "1e23" are not seeds.
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
          return std::string("a seed is a decimal integer from 0 to 18446744073709551615");
        uint64_t value = 0;
        if (llvm::StringRef(text).getAsInteger(10, value))  // true: it overflows
          return std::string("a seed is at most 18446744073709551615");
        return std::string();
      });
}

llvm::Expected<std::unique_ptr<Program>> compileGraph(const std::string &path,
                                                      const PlanFlags &flags, bool forGpu,
                                                      mlir::TimingScope *timing) {
  CompileOptions o;
  o.fuse = !flags.noFuse;
  o.device = flags.device;
  o.arch = flags.arch;
  o.gemm = flags.gemm;
  o.gemmCandidate = flags.gemmCandidate;
  o.overlapLaunches = !flags.noOverlap;
  o.shareLaunches = !flags.noShare;
  if (forGpu)
    targetTheGpu(o);
  else if (o.device.empty())
    o.device = "h100";
  o.timing = timing;
  o.ranks = flags.ranks;
  if (!flags.max.empty()) {
    auto sizes = parseSizeBindings(flags.bind);
    if (!sizes)
      return sizes.takeError();
    auto padded = paddedSizes(*sizes, flags.max);  // checks --max and the sizes against it
    if (!padded)
      return padded.takeError();
    auto bounds = parseSizeBindings(flags.max, "--max");
    if (!bounds)
      return bounds.takeError();
    return compilePadded(
        [path](mlir::MLIRContext &ctx, const SizeMap &at) {
          return importModelFile(path, ctx, at);
        },
        *sizes, *bounds, o);
  }
  mlir::TimingScope read = timing ? timing->nest("read and check the graph") : mlir::TimingScope();
  auto ctx = makeContext();
  auto module = loadGraph(path, *ctx, flags.bind);
  if (!module)
    return module.takeError();
  if (llvm::Error err = applyShards(graphFunction(**module), flags.shard, "--shard"))
    return std::move(err);
  read.stop();
  return compileModule(std::move(ctx), std::move(*module), o);
}

llvm::Error writeOutput(const std::string &path, llvm::StringRef text) {
  if (path.empty() || path == "-") {
    llvm::outs() << text;
    llvm::outs().flush();
    return llvm::Error::success();
  }
  return writeFileAtomically(path, text);
}

void addTensorSources(CLI::App *cmd, TensorSources &sources) {
  cmd->add_option("--inputs", sources.inputs,
                  "safetensors file with one tensor per graph input (by name); random inputs "
                  "when left out")
      ->check(nonEmptyPath());
  cmd->add_option("--weights", sources.weights,
                  "safetensors file(s) with the graph's parameters (by name; repeat the option "
                  "or separate with commas for shards). Default: an ONNX model's own weights, "
                  "else random")
      ->delimiter(',');
}

llvm::Expected<std::vector<std::string>> bindFromInputs(const std::string &graph,
                                                        std::vector<std::string> bind,
                                                        const std::string &inputsPath) {
  if (inputsPath.empty())
    return bind;
  llvm::Expected<NamedDims> named = namedDimsOfModelFile(graph);
  if (!named)
    return named.takeError();
  return bindFromInputs(*named, std::move(bind), inputsPath);
}

llvm::Expected<std::vector<std::string>> bindFromInputs(const NamedDims &dims,
                                                        std::vector<std::string> bind,
                                                        const std::string &inputsPath) {
  const NamedDims *named = &dims;
  if (inputsPath.empty() || named->empty())
    return bind;
  llvm::Expected<SizeBindings> given = parseSizeBindings(bind);
  if (!given)
    return given.takeError();
  // The shapes only: the named inputs' tensors (their bytes are read again
  // with the inputs; a file's other tensors never).
  auto tensors = readSafetensorsSelected(
      inputsPath, [&](const std::string &n) { return named->count(n) > 0; });
  if (!tensors)
    return tensors.takeError();
  std::map<std::string, std::pair<int64_t, std::string>> inferred;  // size, from which tensor
  for (const auto &[name, dims] : *named) {
    auto t = tensors->find(name);
    if (t == tensors->end() || t->second.shape().size() != dims.size())
      continue;  // reading the inputs reports it
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d].empty() || given->count(dims[d]))
        continue;
      const int64_t size = t->second.shape()[d];
      auto [it, fresh] = inferred.emplace(dims[d], std::make_pair(size, name));
      if (!fresh && it->second.first != size)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "%s: the size '%s' is %lld in tensor '%s' and %lld in tensor '%s'",
            printable(inputsPath).c_str(), printable(dims[d]).c_str(),
            (long long)it->second.first, printable(it->second.second).c_str(), (long long)size,
            printable(name).c_str());
    }
  }
  for (const auto &[name, size] : inferred)
    bind.push_back(name + "=" + std::to_string(size.first));
  return bind;
}

void noteModel(TensorSources &sources, const std::string &graph) {
  if (llvm::StringRef(graph).ends_with(".onnx"))
    sources.model = graph;
}

void addExpectOptions(CLI::App *cmd, std::string &expect, double &tolerance) {
  CLI::Option *given = cmd->add_option("--expect", expect,
                                       "safetensors file of reference outputs (by name): "
                                       "compare, exit 1 on a mismatch")
                           ->check(nonEmptyPath());
  cmd->add_option("--tolerance", tolerance,
                  "normwise relative tolerance for --expect (default: the dtype's: f32 1e-5, "
                  "f16/bf16 1e-2)")
      ->check(finiteIn(0.0, 1.0))
      ->needs(given);
}

int exitForExpected(const std::vector<std::string> &names, const std::vector<HostTensor> &results,
                    const std::string &expect, double tolerance) {
  if (expect.empty())
    return kOk;
  llvm::Expected<bool> same = checkExpected(names, results, expect, tolerance);
  if (!same)
    return reportError(same.takeError());
  if (!*same) {
    llvm::errs() << "fusec: error: outputs differ from " << printable(expect) << "\n";
    return 1;
  }
  return kOk;
}

} // namespace fusec::cli
