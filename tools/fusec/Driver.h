//===- Driver.h - shared plumbing of the fusec subcommands ----------------===//
#pragma once

#include "mlir/Support/Timing.h"

#include "include/fusec/fusec.h"
#include "frontends/json/GraphReader.h"

#include <CLI/CLI.hpp>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <initializer_list>
#include <string>

namespace fusec::cli {

/// Exit statuses: 0 ok, 1 a user-facing error (bad graph, bad input, no GPU),
/// 2 a command-line usage error (CLI11), 3 an internal error (a bug in fusec).
enum ExitCode { kOk = 0, kUserError = 1, kUsageError = 2, kInternalError = 3 };

/// Prints "fusec: error: <message>" to stderr and returns kUserError.
int reportError(llvm::Error err);
int reportError(const std::string &message);

/// An MLIRContext with the fusec and func dialects loaded.
std::unique_ptr<mlir::MLIRContext> makeContext();

/// Reads and checks a graph file. Names in `max` (--max NAME=BOUND) are
/// read at the padded size of their --bind size (compiler/pipeline/
/// PaddedGraph.h) and the graph is made exact for every size up to it.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> loadGraph(const std::string &path,
                                                            mlir::MLIRContext &ctx,
                                                            const std::vector<std::string> &bind = {},
                                                            const std::vector<std::string> &max = {});
/// `sizes` with each name of `max` at the padded size of its size there
/// (the bound where it has none); an error for a size outside 1..bound.
llvm::Expected<SizeBindings> paddedSizes(const SizeBindings &sizes,
                                         const std::vector<std::string> &max);
/// An error where `output` (a file the command writes; "-" is stdout) is
/// the same file as one of `inputs` (any spelling or link of it): writing
/// it would destroy what the command reads, whether or not it then fails.
llvm::Error notOverAnInput(const std::string &output, const std::vector<std::string> &inputs,
                           const char *flag = "-o");
/// The files `sources` names, and `others` (the graph, --expect).
struct TensorSources;
std::vector<std::string> sourceFiles(const TensorSources &sources,
                                     std::initializer_list<std::string> others = {});

/// A CLI11 check: a number from `lo` to `hi`, not NaN (which CLI::Range
/// lets through: it fails every comparison).
CLI::Validator finiteIn(double lo, double hi);
/// A CLI11 check: a path that is not empty (an empty one names no file).
CLI::Validator nonEmptyPath();

/// --max NAME=BOUND: the named dims that vary from call to call.
void addMaxOption(CLI::App *cmd, std::vector<std::string> &max);

/// Runs the decompose pipeline (decompose, canonicalize, CSE) on `module`,
/// then with ranks > 1 splits it over the ranks by its sharded arguments.
llvm::Error decompose(mlir::ModuleOp module, int ranks = 1);

/// Prints `op` as MLIR text, with or without locations.
std::string printIR(mlir::Operation *op, bool withLocations);

/// Flags shared by the commands that compile: --no-fuse, --device, --arch.
struct PlanFlags {
  bool noFuse = false;
  std::string device;  ///< empty: the GPU's own profile when one is present, else h100
  std::string arch;
  std::string gemm = "auto";
  int gemmCandidate = -1;  ///< autotuning: every GEMM kernel (and cuBLASLt rank) takes this candidate
  bool noOverlap = false;  ///< launch each kernel after the previous one completes
  bool noShare = false;    ///< every kernel in its own launch (CompileOptions::shareLaunches)
  std::vector<std::string> bind;  ///< --bind NAME=N: sizes of named dims
  std::vector<std::string> max;   ///< --max NAME=BOUND: named dims padded (PaddedGraph.h)
  int ranks = 1;                   ///< --ranks: GPUs to split the graph over
  std::vector<std::string> shard;  ///< --shard NAME=DIM (Sharding.h)
};
void addPlanFlags(CLI::App *cmd, PlanFlags &flags);
/// --no-overlap, for the commands that launch kernels (run, bench).
void addLaunchFlags(CLI::App *cmd, PlanFlags &flags);
/// --bind NAME=N (repeatable, or comma-separated): the sizes of a graph's
/// named dims (an ONNX model's dynamic axes).
void addBindOption(CLI::App *cmd, std::vector<std::string> &bind);

/// -o/--output: a path, never empty (an empty one would write nothing and
/// succeed).
CLI::Option *addOutputOption(CLI::App *cmd, std::string &output, const std::string &help);
/// --seed: a decimal integer from 0 to 2^64 - 1 (no sign, no saturation).
CLI::Option *addSeedOption(CLI::App *cmd, uint64_t &seed);

struct TensorSources;
/// --inputs and --weights, for the commands that evaluate a graph; `graph`
/// (an .onnx model) also binds the model's own weights.
void addTensorSources(CLI::App *cmd, TensorSources &sources);
/// `bind` with the sizes of the graph's named dims that the tensors of
/// `inputsPath` (a safetensors file, "" for none) give, where `bind` leaves
/// them out; two tensors giving one name different sizes is an error.
llvm::Expected<std::vector<std::string>> bindFromInputs(const std::string &graph,
                                                        std::vector<std::string> bind,
                                                        const std::string &inputsPath);
/// The same for dims named per input (a compiled artifact's that vary).
llvm::Expected<std::vector<std::string>> bindFromInputs(const NamedDims &named,
                                                        std::vector<std::string> bind,
                                                        const std::string &inputsPath);
/// Sets `sources.model` where `graph` is an ONNX model.
void noteModel(TensorSources &sources, const std::string &graph);
/// --expect FILE and --tolerance (a stored reference, GraphIO's checkExpected).
void addExpectOptions(CLI::App *cmd, std::string &expect, double &tolerance);
/// checkExpected as a command's exit status: 0 where every output matches (or
/// `expect` is empty), 1 where one differs, an error's status otherwise.
int exitForExpected(const std::vector<std::string> &names, const std::vector<HostTensor> &results,
                    const std::string &expect, double tolerance);

/// Reads, fuses and plans a graph. With `forGpu`, an unset device/arch is taken
/// from the GPU at hand (when there is one). With `timing`, each phase is
/// timed in that scope (`fusec explain --timings`).
llvm::Expected<std::unique_ptr<Program>> compileGraph(const std::string &path,
                                                      const PlanFlags &flags, bool forGpu,
                                                      mlir::TimingScope *timing = nullptr);

/// Writes `text` to `path` atomically ("-" means stdout).
llvm::Error writeOutput(const std::string &path, llvm::StringRef text);

} // namespace fusec::cli
