//===- RowReductionKernel.cpp - the row reduction / normalization family --===//
//
// TPR threads own one row (the reduced dims of the domain); rows are spread
// over a grid-stride loop. Each thread holds SL slots of VEC consecutive row
// elements. Inputs read along the row are loaded once into registers (when the
// row fits) and every phase — one per level of dependent reductions, e.g. mean
// then variance for layer_norm — recomputes its values from those registers, so
// the row is read from HBM once. Reductions combine per thread, then across the
// row's threads by warp shuffles (TPR <= 32) or through shared memory. The last
// phase computes and stores the outputs.
//
// Few long rows (a whole-tensor sum, a mean over all but a few elements) would
// leave most SMs idle at one block per row, so such a row is split over
// several blocks that combine their partials (RowPlan::splitRows).
//
// A group may begin with an all-reduce of one of its inputs (tensor parallel:
// the residual add and the norm after a row-parallel product): each block
// then takes whole rows, reduces them over the ranks into shared memory
// first (peerExchange), and reads them from there.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/ElementEmitter.h"
#include "compiler/codegen/KernelSpec.h"
#include "compiler/codegen/ReductionPhases.h"
#include "compiler/codegen/RowPlan.h"
#include "compiler/codegen/ScalarOps.h"
#include "compiler/plan/PeerRegion.h"
#include "compiler/shape/ShapeRules.h"

#include <algorithm>
#include <map>

using namespace mlir;

namespace fusec::codegen::detail {
namespace {

struct RowShape {
  std::vector<int64_t> domain, reduced, kept;
  int64_t rows = 1, cols = 1;
  int lane = -1;  ///< the innermost reduced dim, along which lanes vary
  int64_t vec = 1, tpr = 1, slots = 1, tpb = 256, splits = 1;
  bool cached = true;
};

/// Blocks per row when a row is split: enough that the grid fills the device
/// once at 256 threads a block, each block at least 8 vectors per thread (less
/// would spend more on the combine than it saves). 1: do not split, which is
/// when at least half the SMs would have a row anyway. Only a one-phase group
/// whose outputs are all per row can split: a phase after it, or an output
/// along the row, would need every split's result first.
int64_t rowSplits(FusionOp fusion, const RowShape &r, int smCount) {
  constexpr int64_t kThreads = 256, kMinSlots = 8;
  int64_t nvec = r.cols / r.vec;
  int64_t target = int64_t(std::max(smCount, 1)) * (2048 / kThreads);
  if (r.rows * 2 > smCount || nvec < 2 * kThreads * kMinSlots)
    return 1;
  if (!readsOnce(fusion))  // phases counted without the online rule
    return 1;
  int64_t splits = std::min((target + r.rows - 1) / r.rows, nvec / (kThreads * kMinSlots));
  return std::min<int64_t>(splits, 65535);
}

/// The all-reduce a group begins with (GroupSchedule.cpp admits one, of an
/// input, before a row kernel that reads it by whole rows), or null.
AllReduceOp reducedFirst(FusionOp fusion) {
  for (Operation &op : fusion.getBodyBlock())
    if (auto r = dyn_cast<AllReduceOp>(op))
      return r;
  return {};
}

/// The widest element a row kernel moves along its rows: inputs whose last
/// dim runs along the row's (a per-row input, last dim 1, is read one value
/// a row) and outputs of the domain's shape. A per-row output (a log-sum-
/// exp in f32 of bf16 rows) is stored once a row and does not narrow the
/// row's vectors.
int64_t rowElementBytes(FusionOp fusion, ArrayRef<int64_t> domain) {
  int64_t m = 1;
  for (Value v : fusion.getInputs()) {
    ArrayRef<int64_t> s = shapeOf(v);
    if (!s.empty() && s.back() == domain.back() && s.back() > 1)
      m = std::max(m, dtypeBytes(dtypeOf(v)));
  }
  for (Value v : fusion.getResults())
    if (shapeOf(v) == domain)
      m = std::max(m, dtypeBytes(dtypeOf(v)));
  return m;
}

/// `wholeRows`: a block takes whole rows, at most 32 threads' worth when a
/// row has fewer, so that the rows of an all-reduce ahead of the kernel fit
/// one block's share of the exchange.
RowShape planRows(FusionOp fusion, const DeviceProfile &profile, bool wholeRows) {
  RowShape r;
  ReductionDomain rd = reductionDomain(fusion);
  r.domain = rd.domain;
  r.reduced = rd.reduced;
  r.kept = rd.kept;
  r.rows = rd.keptCount;
  r.cols = rd.reducedCount;
  ArrayRef<int64_t> d = r.domain;
  r.lane = r.reduced.back();
  // Vectors only along a contiguous innermost reduced dim.
  if (r.lane == (int)d.size() - 1) {
    r.vec = 16 / rowElementBytes(fusion, d);
    while (r.vec > 1 && d[r.lane] % r.vec != 0)
      r.vec /= 2;
  }
  int64_t nvec = r.cols / r.vec;
  if (nvec <= 32) {
    r.tpr = 1;
    while (r.tpr < nvec)
      r.tpr *= 2;
  } else {
    // Enough threads that each holds at most 16 elements of a row, up to 1024.
    // Up to 32 elements of each cached input per thread (the fastest;
    // docs/kernels.md, "Grids").
    int64_t maxSlots = std::max<int64_t>(1, 32 / r.vec);
    r.tpr = 32;
    while (r.tpr < 1024 && (nvec + r.tpr - 1) / r.tpr > maxSlots)
      r.tpr *= 2;
  }
  r.slots = (nvec + r.tpr - 1) / r.tpr;
  r.splits = wholeRows ? 1 : rowSplits(fusion, r, profile.smCount);
  if (r.splits > 1) {
    r.tpr = 256;
    r.slots = (nvec + r.tpr * r.splits - 1) / (r.tpr * r.splits);
    r.splits = (nvec + r.tpr * r.slots - 1) / (r.tpr * r.slots);  // no split left empty
  }
  r.cached = r.slots * r.vec <= 64;
  r.tpb = r.tpr > 32 ? r.tpr : wholeRows ? 32 : 256;
  return r;
}

/// The exchange ahead of the rows: block b reduces its rows of the all-
/// reduce's operand over the ranks into shared memory (fz_peer_reduce,
/// PeerAllReduce.cpp), and the operand's name then points there, so the
/// rows read the reduced tensor wherever they read the operand (the emitter
/// takes an all-reduce as its operand). The operand's parameter becomes
/// fz_partial; the ranks' regions come last.
llvm::Expected<std::string> peerExchange(FusionOp fusion, AllReduceOp first, const RowShape &rs,
                                         KernelSpec &spec) {
  auto arg = dyn_cast<BlockArgument>(first.getOperand());
  const int64_t rpb = rs.tpb / rs.tpr, range = rpb * rs.cols;
  const int64_t blocks = (rs.rows + rpb - 1) / rpb;
  if (!arg || shapeOf(first.getResult()) != ArrayRef<int64_t>(rs.domain) || rs.splits != 1 ||
      range * dtypeBytes(dtypeOf(arg)) > peer::kChunkBytes || blocks > peer::kMaxBlocks)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "internal error: group %s begins with an all-reduce its row kernel cannot take",
        fusion->getAttrOfType<StringAttr>("name").str().c_str());
  const std::string t = storageType(dtypeOf(arg)), k = ElementEmitter::argName(arg.getArgNumber());
  spec.text.params[arg.getArgNumber()].name = "fz_partial";
  spec.text.params.push_back({"fz_peer_args ", "peers"});
  spec.text.helpers += peerReduceHelpers(dtypeOf(arg), first.getKind());
  // The rows' loads (fz_load, fz_load1) take the operand's name; in shared
  // memory they are plain loads, not the read-only path's.
  spec.text.helpers +=
      "template <typename S> struct fz_shared_rows { const S *p; };\n"
      "template <typename S, int N, typename C>\n"
      "__device__ __forceinline__ void fz_load(fz_shared_rows<S> r, long long off, C (&out)[N]) {\n"
      "  fz_load_shared<S, N>(r.p + off, out);\n}\n"
      "template <typename S>\n"
      "__device__ __forceinline__ auto fz_load1(fz_shared_rows<S> r, long long off) "
      "-> decltype(fz_in(*r.p)) {\n  return fz_in(r.p[off]);\n}\n";
  spec.text.staticShared = true;
  const std::string n = std::to_string(range);
  std::string s = "  // this block's rows of the all-reduced tensor, from every rank\n";
  s += "  __shared__ __align__(16) " + t + " fz_reduced[" + n + "];\n";
  s += "  const long long fz_first = (long long)blockIdx.x * " + n + ";\n";
  s += "  fz_peer_reduce(fz_partial + fz_first, fz_reduced, min(" + n + "LL, " +
       std::to_string(rs.rows * rs.cols) + "LL - fz_first), peers);\n";
  s += "  const fz_shared_rows<" + t + "> " + k + "{fz_reduced - fz_first};  // read at its rows only\n";
  return s;
}

} // namespace

llvm::Expected<KernelSpec> generateRowReduction(FusionOp fusion, const DeviceProfile &profile) {
  AllReduceOp first = reducedFirst(fusion);
  RowShape rs = planRows(fusion, profile, bool(first));
  RowPlan plan(fusion, rs.domain, rs.reduced, rs.kept, rs.lane, rs.vec, rs.tpr, rs.slots,
               rs.cached);
  if (rs.splits > 1) {
    // rowSplits splits only groups of one phase as counted without the
    // online rule, so no online sum is split: combineSplits merges plain
    // accumulators, not (max, sum) pairs.
    if (plan.onlineCount() > 0)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "internal error: group %s splits its rows and keeps an "
                                     "online sum",
                                     fusion->getAttrOfType<StringAttr>("name").str().c_str());
    plan.splitRows(rs.splits);
  }
  KernelSpec spec;
  spec.name = fusion->getAttrOfType<StringAttr>("name").str();
  spec.family = "row_reduction";
  int64_t rpb = rs.tpb / rs.tpr;
  spec.text.qualifiers = "__launch_bounds__(" + std::to_string(rs.tpb) + ")";
  spec.text.params = parameters(fusion);
  if (rs.splits > 1)
    spec.text.params.push_back(kScratchParam);
  spec.text.staticShared = !plan.sharedDeclarations().empty();
  spec.text.helpers += plan.helpers();
  std::string src = "  typedef " + std::string(indexType(fusion)) + " fz_idx;\n";
  src += "  const int tl = threadIdx.x % " + std::to_string(rs.tpr) + ";\n";
  src += plan.sharedDeclarations();
  if (first) {
    auto exchange = peerExchange(fusion, first, rs, spec);
    if (!exchange)
      return exchange.takeError();
    src += *exchange;
  }
  src += "  for (fz_idx rb = blockIdx.x * " + std::to_string(rpb) + "; rb < " +
         std::to_string(rs.rows) + "; rb += gridDim.x * " + std::to_string(rpb) + ") {\n";
  src += "    fz_idx row = rb + threadIdx.x / " + std::to_string(rs.tpr) + ";\n";
  src += "    const bool active = row < " + std::to_string(rs.rows) + ";\n";
  src += "    if (!active) row = " + std::to_string(rs.rows - 1) + ";  // compute, store nothing\n";
  src += plan.keptIndices("row", "    ");
  src += plan.body();
  src += "  }\n";

  int64_t blocks = (rs.rows + rpb - 1) / rpb;
  // One block per row group: blocks that finish early make room for new ones,
  // where a grid-stride loop would leave the tail to the slowest blocks.
  int64_t cap = int64_t(1) << 31;
  spec.grid = static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, cap)));
  spec.block = static_cast<unsigned>(rs.tpb);
  if (rs.splits > 1) {
    spec.gridY = static_cast<unsigned>(rs.splits);
    spec.scratchBytes = static_cast<unsigned>(plan.scratchBytes());
    spec.scratchZeroOnce = static_cast<unsigned>(plan.counterBytes());
  }
  spec.text.body = src;
  spec.schedule = std::to_string(rs.rows) + " rows x " + std::to_string(rs.cols) +
                  " cols; " + std::to_string(rs.tpr) + " threads/row, " +
                  std::to_string(rs.slots) + " slots of vec " + std::to_string(rs.vec) +
                  (rs.cached ? ", row cached in registers" : ", row streamed per phase") +
                  (plan.onlineCount() ? ", " + std::to_string(plan.onlineCount()) +
                                           " sum(s) of exp beside their max (online)"
                                     : std::string()) +
                  "; " + std::to_string(rs.tpb) + " threads x " + std::to_string(spec.grid) +
                  (rs.splits > 1 ? " x " + std::to_string(rs.splits) +
                                       " blocks (each row split over " +
                                       std::to_string(rs.splits) +
                                       "; the row's last block combines their partials)"
                                 : " blocks") +
                  (first ? "; each block's rows all-reduced over peer memory first" : "");
  return spec;
}

} // namespace fusec::codegen::detail
