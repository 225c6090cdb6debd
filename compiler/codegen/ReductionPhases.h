//===- ReductionPhases.h - what the reduction kernel families share -------===//
#pragma once

#include "compiler/codegen/ElementEmitter.h"
#include "compiler/dialect/FusecDialect.h"

#include <functional>
#include <optional>
#include <string>

#include <map>
#include <vector>

namespace fusec::codegen::detail {

/// Whether `op` is one of sum, mean, max, min.
bool isReduction(mlir::Operation *op);

/// Sums of exp(x - max(x)) over one row in f32 (softmax's and log-sum-exp's
/// denominator), each with its max: such a sum can be kept beside the max in
/// one pass, rescaled whenever the running max grows (the online rule).
using OnlineSums = std::map<mlir::Operation *, mlir::Operation *>;
OnlineSums onlineSums(FusionOp fusion);

/// The reductions of a fusion body grouped into phases: a reduction that needs
/// another's result (layer_norm's variance needs its mean) comes a phase later,
/// except a sum of `online`, which comes in its max's phase.
/// Keys are 1, 2, ...; each phase's reductions in body order.
std::map<int, std::vector<mlir::Operation *>> reductionPhases(FusionOp fusion,
                                                              const OnlineSums &online = {});

/// Whether a reduction group reads its data once anyway: one phase and no
/// output along the reduced dims, so keeping it on chip saves nothing.
bool readsOnce(FusionOp fusion);

/// The iteration domain of a reduction group, from its schedule attributes.
struct ReductionDomain {
  std::vector<int64_t> domain, reduced, kept;
  int64_t reducedCount = 1, keptCount = 1;  ///< elements along the reduced / kept dims
};
ReductionDomain reductionDomain(FusionOp fusion);

/// The tile of both column kernels: `vec` elements per lane along the last
/// (kept) dim, as many as divide it in 16 bytes, and `tx` threads across 64
/// bytes of a row (whole DRAM bursts; docs/reductions.md, "Last dim kept"), fewer
/// when the kept dims are narrower.
struct ColumnTile {
  int64_t vec = 1, tx = 1;
};
ColumnTile columnTile(FusionOp fusion, const ReductionDomain &rd);

/// The op defining `v`, looked through broadcast_to (a reduction's result as
/// its consumers read it); null for a block argument.
mlir::Operation *throughBroadcasts(mlir::Value v);
/// The max op when `v` is exp(x - max(x)) over the same x (softmax's
/// numerator, which lies in (0, 1]); null otherwise.
mlir::Operation *shiftedExpMax(mlir::Value v);

/// Fills a column kernel's plan fields (domain, reduced, kept, rr = rows,
/// kc = columns, last = the last dim) from the group's domain; returns it.
template <typename Plan> ReductionDomain takeColumnDomain(Plan &p, FusionOp fusion) {
  ReductionDomain rd = reductionDomain(fusion);
  p.domain = rd.domain;
  p.reduced = rd.reduced;
  p.kept = rd.kept;
  p.rr = rd.reducedCount;
  p.kc = rd.keptCount;
  p.last = static_cast<int>(p.domain.size()) - 1;
  return rd;
}

/// A column kernel's load hook. A load that moves along the reduced dims as
/// a 16-byte vector of `vec` elements along the last dim goes to `cached`
/// (the argument, its pointer's name, its offset at the lane base "kl"),
/// which keeps it per row; any other is a scalar load where it is used.
using CachedLoad = std::function<std::string(mlir::BlockArgument, const std::string &ptr,
                                             const std::string &offset)>;
ElementEmitter::LoadHook columnLoads(std::vector<int64_t> reduced, int last, int64_t vec,
                                     CachedLoad cached);

/// A column kernel's names for the domain indices: "r<d>" for the reduced
/// dims, "k<d>" for the kept ones (ElementEmitter's domVars).
std::vector<std::string> columnIndexNames(size_t rank, llvm::ArrayRef<int64_t> reduced,
                                          llvm::ArrayRef<int64_t> kept);
/// Declarations of the reduced dims' indices "r<d>" from the flat row `row`.
std::string reducedIndexDecls(llvm::ArrayRef<int64_t> domain, llvm::ArrayRef<int64_t> reduced,
                              const std::string &row, const std::string &indent);
/// Declarations of the kept dims' indices from the flat column "kb": "kl" for
/// the last dim (a lane adds l to it), "k<d>" for the others.
std::string keptIndexDecls(llvm::ArrayRef<int64_t> domain, llvm::ArrayRef<int64_t> kept,
                           int64_t last, const std::string &indent);

/// The output code of a column kernel (stored through `store`, fz_store's signature), whose kept dims are "k<d>", the lane
/// base of the last (kept) dim "kl", the lane "l" and the column base "kbase".
struct ColumnOutputCode {
  std::string decls;      ///< per-row result arrays, before the lane loop
  std::string lanes;      ///< per lane: results of the domain's shape
  std::string post;       ///< after the lane loop: their vector stores
  std::string perColumn;  ///< values with one element per column, stored once
};
ColumnOutputCode columnOutputs(FusionOp fusion,
                               const std::function<ElementEmitter()> &makeEmitter,
                               llvm::ArrayRef<int64_t> domain, llvm::ArrayRef<int64_t> reduced,
                               int last, int64_t vec,
                               const std::string &store = "fz_store");

} // namespace fusec::codegen::detail
