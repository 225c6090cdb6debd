//===- MatmulPaths.cpp - -fusec-choose-gemm-paths: how each matmul group runs //
//
// After the merges (FormGroups.cpp, RecomputeProducers.cpp), each matmul
// group is [prologue] matmul [epilogue] (what computes an operand while the
// kernel loads it, the product, what consumes the product), and the cost
// model prices the ways it can run:
//   * fusec's kernel with the whole group (wgmma on Hopper unless an operand
//     is computed: the TMA copies operands as they lie in memory);
//   * with a prologue, that prologue as a kernel of its own ahead of fusec's
//     kernel for the rest;
//   * cuBLASLt for the product, the epilogue in a kernel of its own (or in
//     its consumer's), after any prologue kernel;
//   * cuBLASLt applying the epilogue itself where it expresses it exactly.
// The choice and the times go on the matmul (fusec.family,
// fusec.gemm_alternatives) for outlining, code generation and `fusec
// explain`; a group that does not run whole is split here.
//
//===----------------------------------------------------------------------===//
#include "compiler/cost/CostModel.h"
#include "compiler/schedule/AttentionForm.h"
#include "compiler/schedule/GemmForms.h"
#include "compiler/schedule/GroupSchedule.h"
#include "compiler/schedule/LibraryEpilogue.h"
#include "compiler/schedule/RowStatsForm.h"
#include "compiler/schedule/StridedView.h"
#include "compiler/transforms/Grouping.h"
#include "compiler/transforms/Passes.h"

#include "mlir/IR/Builders.h"

#include <cstdio>
#include <limits>
#include <optional>

namespace fusec {
#define GEN_PASS_DEF_FUSECCHOOSEGEMMPATHS
#include "compiler/transforms/Passes.h.inc"
} // namespace fusec

using namespace mlir;

namespace fusec::detail {
namespace {

/// What each way of running one matmul group is predicted to take.
struct Prices {
  GemmPath path;       ///< fusec's kernel for the product and its epilogue
  GemmPath fusedPath;  ///< fusec's kernel with the prologue too
  double own = 0, ownApart = 0, library = 0, libraryEpi = 0;
  bool joins = false;  ///< the split-off epilogue joins its consumer's kernel
  bool supported = true;
  std::optional<LibraryEpilogue> libEpi;
  std::string notLibrary;
};

std::string us(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f us", s * 1e6);
  return buf;
}

const char *pathName(GemmPath p) {
  return p == GemmPath::FusecGemv         ? "GEMV"
         : p == GemmPath::FusecTensorGemv ? "GEMV (tensor cores)"
         : p == GemmPath::FusecWgmmaGemv  ? "GEMV (TMA + wgmma)"
         : p == GemmPath::FusecWgmma      ? "GEMM (wgmma)"
                                          : "GEMM";
}

/// The alternatives `fusec explain` shows beside the choice.
std::string describe(const Prices &p, bool prologue, bool epilogue, bool fusecOnly) {
  std::string with = !prologue   ? (epilogue ? " with the epilogue" : "")
                     : !epilogue ? " with the prologue"
                                 : " with the prologue and the epilogue";
  std::string s = "fusec " + std::string(pathName(p.fusedPath)) + with + ": " + us(p.own);
  if (prologue)
    s += std::string("; prologue kernel + fusec ") + pathName(p.path) +
         (epilogue ? " with the epilogue" : "") + ": " + us(p.ownApart);
  s += std::string("; cuBLASLt") + (prologue ? " + prologue kernel" : "") +
       (!epilogue ? "" : p.joins ? " + the epilogue in its consumer's kernel" : " + epilogue kernel") +
       ": " + us(p.library) + (p.supported ? "" : " (fusec's GEMM takes bf16/f16 operands)");
  if (p.libEpi)
    s += "; cuBLASLt with its epilogue (" + p.libEpi->describe() + ")" +
         (prologue ? " + prologue kernel" : "") + ": " + us(p.libraryEpi);
  else if (epilogue && !fusecOnly)
    s += "; no cuBLASLt epilogue: " + p.notLibrary;
  return s;
}

} // namespace

void Grouping::chooseMatmulPaths() {
  // Groups inserted below shift the later ones: the index of each op's group
  // (splitEpilogueSeconds looks up consumers) is rebuilt after each insertion.
  auto reindex = [&] {
    groupOf.clear();
    for (size_t i = 0; i < groups.size(); ++i)
      for (Operation *op : groups[i])
        groupOf[op] = i;
  };
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (size_t g = 0; g < groups.size(); ++g) {
    auto it = llvm::find_if(groups[g], [](Operation *op) { return isa<MatmulOp>(op); });
    if (it == groups[g].end() || isAttentionGroup(groups[g]))
      continue;
    // Streamed row statistics run on fusec's GEMM, their epilogue its own.
    if (std::optional<RowStatsMatch> m = rowStatsGroup(groups[g])) {
      setChosenGemmPath(*it, rowStatsPath(*m, arch));
      continue;
    }
    if (markSiblings(groups[g]))
      continue;
    auto mm = cast<MatmulOp>(*it);
    SmallVector<Operation *> prologueOps = matmulPrologue(mm, groups[g]);
    OpGroup prologue(prologueOps.begin(), prologueOps.end()), epilogue, body;
    for (Operation *op : groups[g]) {
      if (llvm::is_contained(prologue, op))
        continue;
      body.push_back(op);
      if (op != mm)
        epilogue.push_back(op);
    }
    Prices p;
    DType dt = dtypeOf(mm.getLhs());
    p.supported = (dt == DType::BF16 || dt == DType::F16) && dtypeOf(mm.getRhs()) == dt;
    FusecGemmPaths own = fusecGemmPaths(mm, !prologue.empty(), arch, profile);
    p.path = own.path;
    p.fusedPath = own.fusedPath;
    double prologueApart = seconds(prologue);
    p.own = predictSeconds(groupCost(groups[g]), profile, p.fusedPath);
    p.ownApart =
        prologue.empty() ? inf : predictSeconds(groupCost(body), profile, p.path) + prologueApart;
    p.library = predictSeconds(groupCost({mm}), profile, libraryGemmPath(mm)) +
                (epilogue.empty() ? 0.0 : splitEpilogueSeconds(epilogue, p.joins)) +
                prologueApart;
    if (!epilogue.empty() && gemmChoice != "fusec")
      p.libEpi = matchLibraryEpilogue(mm, epilogue, p.notLibrary);
    p.libraryEpi = p.libEpi ? predictSeconds(groupCost(body), profile, GemmPath::LibraryEpilogue) +
                                  prologueApart
                            : inf;
    bool useOwn = p.supported && (gemmChoice == "fusec" ||
                                  (gemmChoice == "auto" && std::min(p.own, p.ownApart) <=
                                                               std::min(p.library, p.libraryEpi)));
    bool useLibEpi = !useOwn && p.libEpi && p.libraryEpi <= p.library;
    bool keepPrologue = useOwn && !prologue.empty() && p.own <= p.ownApart;
    GemmPath path = keepPrologue ? p.fusedPath : p.path;
    Builder b(mm.getContext());
    setChosenGemmPath(mm, useOwn      ? path
                          : useLibEpi ? GemmPath::LibraryEpilogue
                                      : libraryGemmPath(mm));
    mm->setAttr("fusec.gemm_alternatives",
                b.getStringAttr(describe(p, !prologue.empty(), !epilogue.empty(),
                                         gemmChoice == "fusec")));
    if (!prologue.empty() && !keepPrologue) {
      if (useOwn)
        rejections.push_back({nodeLabel(prologue.back()), nodeLabel(mm),
                              "not faster as a prologue: " + us(p.own) + " fused vs " +
                                  us(p.ownApart) + " with a prologue kernel",
                              DecisionReason::PrologueNotFaster, p.own * 1e6, p.ownApart * 1e6});
      else
        rejections.push_back({nodeLabel(prologue.back()), nodeLabel(mm),
                              "the product runs on cuBLASLt, which takes operands from memory",
                              DecisionReason::LibraryReadsOperands});
      // The prologue runs first as one group per op, in order (A's and B's
      // chains may differ in shape): the second round of merges joins them
      // again where that pays.
      groups[g] = body;
      for (Operation *op : prologue)
        groups.insert(groups.begin() + g++, OpGroup{op});
      reindex();
    }
    if (useOwn || useLibEpi || epilogue.empty())
      continue;
    // cuBLASLt computes the product; the epilogue becomes a kernel of its own,
    // next in order (kernel names are numbered by position).
    groups[g] = {mm};
    groups.insert(groups.begin() + g + 1, std::move(epilogue));
    ++g;
    reindex();
  }
  reindex();
  matmulsClosed = true;
}

} // namespace fusec::detail

namespace fusec {
namespace {
struct ChooseGemmPathsPass
    : detail::GroupingPass<ChooseGemmPathsPass, impl::FusecChooseGemmPathsBase> {
  using GroupingPass::GroupingPass;
  void stage(detail::Grouping &g) { g.chooseMatmulPaths(); }
};
} // namespace
} // namespace fusec
