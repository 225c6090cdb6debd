//===- CompileCommand.cpp - `fusec compile` ---------------------------------===//
#include "tools/fusec/Commands.h"
#include "tools/fusec/Driver.h"
#include "compiler/pipeline/Shards.h"
#include "tools/fusec/Sharding.h"
#include "tools/fusec/GraphIO.h"

#include "api/ProgramImpl.h"
#include "compiler/codegen/KernelSpec.h"
#include "compiler/cost/DeviceProfile.h"
#include "compiler/support/AtomicFile.h"
#include "runtime/Nvrtc.h"
#include "runtime/Safetensors.h"
#include "compiler/support/ReadBytes.h"
#include "frontends/json/GraphReader.h"
#include "compiler/support/Printable.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "compiler/support/LlvmError.h"


namespace fusec::cli {

namespace {
struct CompileOptions {
  std::string graph;
  std::string emit = "mlir";
  std::string output = "-";
  bool locations = false;
  bool embedWeights = false;
  TensorSources sources;  ///< --weights, for --embed-weights
  PlanFlags plan;
};

/// The graph's parameters as one safetensors image, for an artifact that
/// carries its weights: from --weights, else an ONNX model's own.
llvm::Expected<std::string> weightsImage(Program &program, const CompileOptions &opts) {
  TensorSources sources = opts.sources;
  noteModel(sources, opts.graph);
  if (sources.weights.empty() && sources.model.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--embed-weights needs the weights: give --weights FILE (an "
                                   "ONNX model carries its own)");
  std::vector<GraphArgument> parameters;
  for (const GraphArgument &arg : graphArguments(graphFunction(*ProgramAccess::of(program).original)))
    if (arg.parameter)
      parameters.push_back(arg);
  if (parameters.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--embed-weights: the graph has no parameters (inputs marked "
                                   "\"parameter\": true) to embed");
  auto tensors = prepareInputs(parameters, sources, /*seed=*/0);
  if (!tensors)
    return tensors.takeError();
  TensorMap byName;
  for (size_t i = 0; i < parameters.size(); ++i)
    byName.emplace(parameters[i].name, std::move((*tensors)[i]));
  return serializeSafetensors(byName);
}

/// One file per kernel in `dir` (created if needed), or all of them on stdout.
int writeKernels(const std::vector<std::pair<std::string, std::string>> &files,
                 const std::string &dir) {
  if (dir == "-") {
    for (const auto &[name, text] : files)
      llvm::outs() << "// ===== " << name << " =====\n" << text << "\n";
    return kOk;
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return reportError("cannot create output directory '" + dir + "': " + ec.message());
  // All or nothing: a target that cannot take a file (a directory of that
  // name) is found before anything is written, and on a later failure the
  // files this call created are removed again.
  std::vector<std::string> paths;
  for (const auto &[name, text] : files) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    if (llvm::sys::fs::is_directory(path))
      return reportError("cannot write '" + std::string(path) + "': it is a directory");
    paths.push_back(std::string(path));
  }
  std::vector<std::string> created;
  for (size_t i = 0; i < files.size(); ++i) {
    bool existed = llvm::sys::fs::exists(paths[i]);
    if (llvm::Error err = writeFileAtomically(paths[i], files[i].second)) {
      for (const std::string &c : created)
        llvm::sys::fs::remove(c);
      return reportError(std::move(err));
    }
    if (!existed)
      created.push_back(paths[i]);
  }
  llvm::errs() << "fusec: wrote " << files.size() << " file(s) to " << dir << "\n";
  return kOk;
}

int emitKernels(Program &program, const CompileOptions &opts) {
  const PlanDesc &plan = ProgramAccess::of(program).plan;
  std::vector<std::pair<std::string, std::string>> files;
  KernelBodies bodies = kernelBodies(plan);
  if (opts.emit == "cuda") {
    for (size_t i : bodies.steps)
      files.push_back({plan.steps[i].name + ".cu", codegen::annotatedSource(plan.steps[i].kernel)});
  } else {
    // Each distinct body compiled once, its PTX written for every kernel
    // that has it.
    std::vector<std::string> ptx;
    for (size_t i : bodies.firstStep) {
      const PlanStep &s = plan.steps[i];
      auto compiled = compile({s.name, s.kernel.source, plan.arch, {}, /*emitPtx=*/true});
      if (!compiled)
        return reportError(compiled.takeError());
      ptx.push_back(std::move(compiled->ptx));
    }
    for (size_t k = 0; k < bodies.steps.size(); ++k)
      files.push_back({plan.steps[bodies.steps[k]].name + ".ptx", ptx[bodies.bodyOf[k]]});
    if (ptx.size() < bodies.steps.size())
      llvm::errs() << "fusec: " << bodies.steps.size() << " kernels, " << ptx.size()
                   << " distinct bodies: each body compiled once\n";
  }
  if (files.empty())
    llvm::errs() << "fusec: note: this graph has no generated kernels (only library calls)\n";
  return writeKernels(files, opts.output);
}

/// `fusec compile -o model.fusec`: the graph compiled for each architecture
/// of --arch (comma-separated; default the GPU's, else the profile's), the
/// kernels through NVRTC, written as one artifact.
int emitArtifact(const CompileOptions &opts) {
  if (opts.output == "-")
    return reportError("an artifact is binary: give a file with -o (model.fusec)");
  std::vector<std::string> archs;
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(opts.plan.arch).split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef a : parts)
    archs.push_back(a.trim().str());
  if (archs.empty())
    archs.push_back("");  // the GPU's, else the profile's
  std::vector<std::unique_ptr<Program>> programs;
  std::vector<Program *> raw;
  for (const std::string &arch : archs) {
    PlanFlags flags = opts.plan;
    flags.arch = arch;
    // Without --device, each target is planned for the first profile of its
    // architecture (sm_80: a100), not the GPU's or h100.
    if (flags.device.empty() && !arch.empty())
      for (const DeviceProfile &p : deviceProfiles())
        if (p.arch == arch) {
          flags.device = p.name;
          break;
        }
    auto program = compileGraph(opts.graph, flags, /*forGpu=*/true);
    if (!program)
      return reportError(program.takeError());
    raw.push_back(program->get());
    programs.push_back(std::move(*program));
  }
  std::string weights;
  if (opts.embedWeights) {
    auto image = weightsImage(*raw.front(), opts);
    if (!image)
      return reportError(image.takeError());
    weights = std::move(*image);
  }
  KernelCache cache(CacheOptions::fromEnvironment());
  auto progress = [](const std::string &what) {
    llvm::errs() << "fusec: compiling " << what << "\n";
  };
  if (llvm::Error err = saveArtifact(raw, opts.output, cache, weights, progress))
    return reportError(std::move(err));
  llvm::errs() << "fusec: wrote " << printable(opts.output) << " (";
  for (size_t i = 0; i < raw.size(); ++i) {
    const Program::Impl &impl = ProgramAccess::of(*raw[i]);
    llvm::errs() << (i ? ", " : "") << impl.plan.arch;
    size_t compiles = 1;
    std::string bounds;
    for (const auto &[name, bound] : impl.bounds) {
      compiles *= paddedSizesUpTo(bound).size();
      bounds += (bounds.empty() ? "" : ", ") + printable(name) + " up to " + std::to_string(bound);
    }
    if (!impl.bounds.empty())
      llvm::errs() << " at " << compiles << " padded sizes of " << bounds;
  }
  if (!weights.empty())
    llvm::errs() << "; weights embedded, " << byteCount(weights.size());
  llvm::errs() << ")\n";
  return kOk;
}

int runCompile(const CompileOptions &opts) {
  if (llvm::Error err = notOverAnInput(opts.output, sourceFiles(opts.sources, {opts.graph})))
    return reportError(std::move(err));
  if (opts.emit == "artifact")
    return emitArtifact(opts);
  if (opts.embedWeights || !opts.sources.weights.empty())
    return reportError("--embed-weights and --weights apply to an artifact (-o model.fusec)");
  if (opts.plan.arch.find(',') != std::string::npos)
    return reportError("--arch takes several architectures only for an artifact (-o model.fusec)");
  if (opts.emit == "mlir" || opts.emit == "decomposed") {
    auto ctx = makeContext();
    auto module = loadGraph(opts.graph, *ctx, opts.plan.bind, opts.plan.max);
    if (!module)
      return reportError(module.takeError());
    if (llvm::Error err = applyShards(graphFunction(**module), opts.plan.shard, "--shard"))
      return reportError(std::move(err));
    if (opts.emit == "decomposed")
      if (llvm::Error err = decompose(**module, opts.plan.ranks))
        return reportError(std::move(err));
    if (llvm::Error err = writeOutput(opts.output, printIR(**module, opts.locations)))
      return reportError(std::move(err));
    return kOk;
  }
  auto program = compileGraph(opts.graph, opts.plan, /*forGpu=*/false);
  if (!program)
    return reportError(program.takeError());
  if (opts.emit == "fused-mlir") {
    std::string text = printIR(*ProgramAccess::of(**program).fused, opts.locations);
    if (llvm::Error err = writeOutput(opts.output, text))
      return reportError(std::move(err));
    return kOk;
  }
  return emitKernels(**program, opts);
}
} // namespace

void addCompileCommand(CLI::App &app, int &exitCode) {
  auto opts = std::make_shared<CompileOptions>();
  CLI::App *cmd = app.add_subcommand("compile", "Compile a graph and print or save what it becomes");
  cmd->footer("Examples:\n"
              "  fusec compile examples/gelu_bias.json                      # the graph as MLIR\n"
              "  fusec compile examples/softmax.json --emit decomposed\n"
              "  fusec compile examples/rms_norm.json --emit fused-mlir     # groups and costs\n"
              "  fusec compile examples/layer_norm.json --emit cuda -o kernels/\n"
              "  fusec compile examples/softmax.json --emit ptx --arch sm_80 -o ptx/\n"
              "  fusec compile examples/rms_norm.json -o rms_norm.fusec --arch sm_90a,sm_80\n"
              "  fusec compile model.json -o model.fusec --embed-weights --weights w.safetensors\n"
              "No GPU is needed for any of these (an artifact needs NVRTC).");
  cmd->add_option("graph", opts->graph, "graph file (JSON, docs/graph-format.md)")->required();
  cmd->add_option("--emit", opts->emit,
                  "mlir (as read), decomposed (composites expanded), fused-mlir (fusion groups "
                  "with costs), cuda (one .cu per kernel), ptx (one .ptx per kernel), artifact "
                  "(plan and cubins in one file that `fusec run` and fusec::runtime load; the "
                  "default when -o ends in .fusec)")
      ->check(CLI::IsMember({"mlir", "decomposed", "fused-mlir", "cuda", "ptx", "artifact"}))
      ->capture_default_str();
  addOutputOption(cmd, opts->output,
                  "output file for MLIR, output directory for cuda/ptx ('-': stdout)")
      ->capture_default_str();
  cmd->add_flag("--locations", opts->locations, "print source locations (graph node names)");
  cmd->add_flag("--embed-weights", opts->embedWeights,
                "an artifact carries the graph's parameters, bound when it is loaded (from "
                "--weights, else an ONNX model's own); without it they stay in their files and "
                "are bound at load (docs/artifact.md)");
  cmd->add_option("--weights", opts->sources.weights,
                  "safetensors file(s) with the parameters to embed (repeat the option or "
                  "separate with commas for shards)")
      ->delimiter(',');
  addPlanFlags(cmd, opts->plan);
  cmd->callback([opts, cmd, &exitCode] {
    llvm::StringRef out(opts->output);
    if (cmd->count("--emit") == 0 && out.ends_with(".fusec"))
      opts->emit = "artifact";
    exitCode = runCompile(*opts);
  });
}

} // namespace fusec::cli
