//===- PlanPadding.h - how a plan compiled at padded sizes is called ------===//
//
// A named dim given a bound (`--max S=4096`, Options::maxSizes) varies from
// call to call. The graph is compiled at a padded size, the next of 1, 2, 3,
// 4, 6, 8, 12, ... (powers of two and one and a half times them) that holds
// the call's size, so that a few compiles serve every size and a call wastes
// at most a third of its work on padding (compiler/pipeline/PaddedGraph.h
// makes the padded graph). What a call of such a plan passes and gets is
// here, without the compiler: the runtime and artifacts use it too.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/plan/TensorSpec.h"
#include "compiler/support/Error.h"
#include "compiler/support/HostTensor.h"

#include <cstdint>
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
/// Every padded size of 1..bound, ascending: the compiles that serve them all.
std::vector<int64_t> paddedSizesUpTo(int64_t bound);

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

/// `padded` (an argument's or result's padded shape) with its marked dims
/// at `sizes`.
std::vector<int64_t> shapeAtSizes(const std::vector<int64_t> &padded,
                                  const std::vector<std::string> &dims, const SizeMap &sizes);

/// The arguments of a padded graph for a call at `sizes`: each input (at
/// the call's sizes) copied into zeros of its padded shape, each size
/// argument the size. `inputs` holds the graph's arguments less the size
/// arguments and less those `skip` marks (weights bound), which the result
/// leaves out too.
rt::Expected<std::vector<HostTensor>> padInputs(const PaddedSignature &sig,
                                                const std::vector<HostTensor> &inputs,
                                                const SizeMap &sizes,
                                                const std::vector<bool> &skip = {});
/// The outputs at the call's sizes: the padding cut from each.
std::vector<HostTensor> cropOutputs(const PaddedSignature &sig,
                                    const std::vector<HostTensor> &outputs, const SizeMap &sizes);

/// What the calls of a plan pass and get at `sizes`: the plan's inputs less
/// its size arguments, and its outputs, with the marked dims at `sizes`.
struct PaddedCallSpecs {
  SizeMap sizes;
  std::vector<TensorSpec> inputs, outputs;
};
PaddedCallSpecs paddedCallSpecs(const PaddedSignature &sig, const std::vector<TensorSpec> &inputs,
                                const std::vector<TensorSpec> &outputs, const SizeMap &sizes);

} // namespace fusec
