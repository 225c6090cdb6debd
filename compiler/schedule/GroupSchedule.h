//===- GroupSchedule.h - which kernel family can run a group of ops -------===//
//
// A candidate group (a set of compute ops; the views and generators that feed
// them are folded in) either fits one code-generation family or it does not,
// and then the reason says why. Fusion asks this before every merge; codegen
// asks it again for the schedule of each fused group.
//
//   pointwise         every output has the domain shape D
//   row_reduction     reductions share input shape D and axes R, R are the
//                     innermost dims (or any dims, read by gather)
//   column_reduction  as row_reduction, the last dim is kept: R are the
//                     outermost dims, or middle ones in front of a kept run
//                     of at least 32 contiguous bytes
//   matmul            one matmul and an elementwise epilogue on its result
//   attention         a row softmax of a product's scores feeding a second
//                     product over the same axis, streamed (AttentionForm.h)
//   streamed_rows     a row max and sum of exponentials over a product's
//                     output, streamed in its epilogue (RowStatsForm.h)
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fusec {

/// Collective: one all_reduce, all_gather or reduce_scatter between ranks, a
/// step of its own (no kernel of fusec's: NCCL's).
enum class GroupKind { Pointwise, RowReduction, ColumnReduction, Matmul, Attention, StreamedRows,
                       Collective };

/// Marks an all_reduce that fusec's one-shot kernel over peer memory runs
/// (the planner sets it where families::overPeerMemory says so): only such
/// an all-reduce may begin a row kernel instead of being a step of its own.
inline constexpr llvm::StringLiteral kOneShotAttr = "fusec.one_shot";

const char *groupKindName(GroupKind k);
/// The kind a name from groupKindName stands for.
std::optional<GroupKind> parseGroupKind(llvm::StringRef name);

struct GroupSchedule {
  GroupKind kind = GroupKind::Pointwise;
  std::vector<int64_t> domain;       ///< iteration shape D
  std::vector<int64_t> reducedAxes;  ///< sorted; empty for pointwise
  int64_t rows = 1;                  ///< product of the kept dims of D
  int64_t cols = 1;                  ///< product of the reduced dims of D
  /// D with the reduced dims set to 1: the shape of per-row values.
  std::vector<int64_t> keptShape() const;
};

/// "q_proj (matmul)": the graph node an op came from and the op, as the
/// planner's decisions name it (explain's rejections and GEMM choices).
std::string nodeLabel(mlir::Operation *op);

/// The buffers a kernel may take: a launch passes at most 64 parameters
/// (runtime/Executable.cpp), the buffers, a scratch and up to 8 tensor maps
/// among them. A concat of more inputs is joined in rounds of
/// kConcatInputsPerKernel (SplitWideConcats.cpp).
constexpr int64_t kMaxKernelBuffers = 48, kConcatInputsPerKernel = 32;
/// The ops a kernel holds: bounds its source, NVRTC's time on it, and the
/// planner's work per merge (a chain of any length plans in linear time).
constexpr int64_t kMaxKernelOps = 256;

/// Why a kernel of `ops` ops is too large (kMaxKernelOps), or "".
std::string tooManyKernelOps(int64_t ops);

/// The buffers a kernel of `ops` reads and writes: the values it reads from
/// outside (through views, which it reads in place) and those it writes that
/// are read outside.
int64_t kernelBuffers(llvm::ArrayRef<mlir::Operation *> ops);

/// Classifies `ops` (compute ops only, in program order). On failure returns
/// false and sets `why` to a one-line reason, as for a group that would take
/// more than kMaxKernelBuffers buffers.
bool classifyGroup(llvm::ArrayRef<mlir::Operation *> ops, GroupSchedule &schedule,
                   std::string &why);

} // namespace fusec
