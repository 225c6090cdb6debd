//===- PaddedGraph.h - one compile for every size up to a bound ------------===//
//
// A named dim given a bound (`--max S=4096`, Options::maxSizes) varies from
// call to call. The graph is compiled at a padded size, the next of 1, 2, 3,
// 4, 6, 8, 12, ... (powers of two and one and a half times them) that holds
// the call's size, so that a few compiles serve every size and a call wastes
// at most a third of its work on padding. The padded graph takes each size
// as an argument and is exact at every size up to the padded one
// (-fusec-pad-sizes); the caller pads the inputs with zeros and drops the
// padding from the outputs (HostTensor helpers below; the runtime does the
// same on the GPU).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/interp/Interpreter.h"
#include "compiler/support/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace fusec {

using SizeMap = std::map<std::string, int64_t>;

/// The largest bound of a size that varies: the program takes it as an i32.
constexpr int64_t kMaxPaddedBound = 2147483647;

/// The padded size that serves `size` (1 <= size <= bound): the next of 1, 2,
/// 3, 4, 6, 8, 12, 16, ... at or above it, at most `bound`.
int64_t paddedSize(int64_t size, int64_t bound);

/// Reads a graph with its named dims bound to `sizes`.
using GraphRead = std::function<llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>(const SizeMap &)>;

/// The graph read at `sizes` and made exact for every size up to them of
/// the names in `bounds` (each read at `sizes`' size of it, which should be
/// a padded size, and once more at another size to find its dims). A name
/// read at size 1 is not padded. Errors name the node that cannot be padded.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> readPadded(const GraphRead &read,
                                                              const SizeMap &sizes,
                                                              const SizeMap &bounds);

/// Where a padded graph takes its sizes, and which dims of its arguments and
/// results they are.
struct PaddedSignature {
  std::vector<std::string> sizeArgs;                 ///< per argument: its name, or ""
  std::vector<std::vector<std::string>> argDims;     ///< per argument, per dim: a name or ""
  std::vector<std::vector<std::string>> resultDims;  ///< per result
  std::vector<std::vector<int64_t>> argShapes;       ///< per argument, padded
  /// Whether any dim is padded (a graph that combines nothing along its
  /// padded dims takes no size arguments, yet its inputs still are padded).
  bool padded() const;
};
PaddedSignature paddedSignature(mlir::func::FuncOp graph);

/// The arguments of a padded graph for a call at `sizes`: each input (at
/// the call's sizes) copied into zeros of its padded shape, each size
/// argument the size. `inputs` holds the graph's arguments less the size
/// arguments and less those `skip` marks (weights bound), which the result
/// leaves out too.
llvm::Expected<std::vector<HostTensor>> padInputs(const PaddedSignature &sig,
                                                  const std::vector<HostTensor> &inputs,
                                                  const SizeMap &sizes,
                                                  const std::vector<bool> &skip = {});
/// `padded` (an argument's or result's padded shape) with its marked dims
/// at `sizes`.
std::vector<int64_t> shapeAtSizes(const std::vector<int64_t> &padded,
                                  const std::vector<std::string> &dims, const SizeMap &sizes);
/// The outputs at the call's sizes: the padding cut from each.
std::vector<HostTensor> cropOutputs(const PaddedSignature &sig,
                                    const std::vector<HostTensor> &outputs, const SizeMap &sizes);
/// The reference interpreter on padded graph `graph` for a call at `sizes`:
/// padInputs, interpret, cropOutputs.
llvm::Expected<std::vector<HostTensor>> interpretPadded(mlir::func::FuncOp graph,
                                                        const std::vector<HostTensor> &inputs,
                                                        const SizeMap &sizes,
                                                        const InterpOptions &options = {});

} // namespace fusec
