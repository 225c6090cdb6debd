//===- FuseSiblings.cpp - -fusec-fuse-siblings: sibling matmuls of one A -===//
//
// After the GEMM choice (MatmulPaths.cpp), matmuls that read the same A
// share a kernel: at decode sizes fusec's dot-product kernel streams all the
// weights with A read once (their epilogues joined where they meet); on
// Hopper, products written as they are (Q/K/V) become one wgmma kernel over
// their tiles side by side. markSiblings records the choice and the
// prediction of the alternative for outlining and `fusec explain`.
//
//===----------------------------------------------------------------------===//
#include "compiler/schedule/GroupSchedule.h"
#include "compiler/transforms/Grouping.h"
#include "compiler/transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

#include <cstdio>
#include <limits>

namespace fusec {
#define GEN_PASS_DEF_FUSECFUSESIBLINGS
#include "compiler/transforms/Passes.h.inc"
} // namespace fusec

using namespace mlir;

namespace fusec::detail {

bool Grouping::markSiblings(const OpGroup &g, double gemvApart) {
  SmallVector<Operation *> mms;
  for (Operation *op : g)
    if (isa<MatmulOp>(op))
      mms.push_back(op);
  if (mms.size() < 2)
    return false;
  // Only fusec's kernels run several matmuls (classifySiblings): the
  // dot-product kernel, or a dual product or products side by side on the
  // wgmma GEMM.
  bool dual = isDual(g), sideBySide = isSideBySide(g), wgv = false;
  char buf[200];
  if (sideBySide) {
    // The alternative: each product in a launch of its own, on the faster of
    // cuBLASLt and fusec's kernel (what chooseMatmulPaths would pick).
    double apart = 0;
    for (Operation *mm : mms) {
      Cost c = groupCost({mm});
      apart += std::min(predictSeconds(c, profile, libraryGemmPath(mm)),
                        predictSeconds(c, profile, GemmPath::FusecWgmma));
    }
    std::snprintf(buf, sizeof buf,
                  "fusec GEMM (wgmma) of %zu sibling products side by side, one launch: %.1f us; "
                  "each in its own launch: %.1f us",
                  mms.size(), predictSeconds(groupCost(g), profile, GemmPath::FusecWgmma) * 1e6,
                  apart * 1e6);
  } else if (dual) {
    // The alternative: one product alone on cuBLASLt, the other with the
    // epilogue on fusec's kernel reading it (as on a target without the
    // dual kernel), whichever way round is faster.
    double apart = std::numeric_limits<double>::infinity();
    for (Operation *alone : mms) {
      OpGroup rest;
      for (Operation *op : g)
        if (op != alone)
          rest.push_back(op);
      apart = std::min(apart, predictSeconds(groupCost({alone}), profile, libraryGemmPath(alone)) +
                                  predictSeconds(groupCost(rest), profile, GemmPath::FusecWgmma));
    }
    std::snprintf(buf, sizeof buf,
                  "fusec GEMM (wgmma) of 2 sibling products, A read once, neither product "
                  "written: %.1f us; one product apart: %.1f us",
                  predictSeconds(groupCost(g), profile, GemmPath::FusecWgmma) * 1e6, apart * 1e6);
  } else {
    // On sm_90a, siblings that are the group's results as they are run as
    // the TMA + wgmma kernel side by side (GemmLaunch.cpp), priced as that
    // kernel (siblingGemvPath).
    GemmPath path = siblingGemvPath(g, arch, profile.smCount);
    wgv = path == GemmPath::FusecWgmmaGemv;
    int n = std::snprintf(buf, sizeof buf, "fusec GEMV%s of %zu sibling matmuls, A read once: %.1f us",
                          wgv ? " (TMA + wgmma, side by side)"
                          : path == GemmPath::FusecTensorGemv ? " (tensor cores)"
                                                              : "",
                          mms.size(), predictSeconds(groupCost(g), profile, path) * 1e6);
    if (gemvApart >= 0 && n > 0 && n < (int)sizeof buf)
      std::snprintf(buf + n, sizeof buf - n, "; as separate kernels: %.1f us", gemvApart * 1e6);
  }
  Builder b(mms.front()->getContext());
  for (Operation *mm : mms) {
    mm->setAttr("fusec.gemm_alternatives", b.getStringAttr(buf));
    setChosenGemmPath(mm, dual || sideBySide ? GemmPath::FusecWgmma
                          : wgv              ? GemmPath::FusecWgmmaGemv
                                             : gemvPath(mm));
  }
  return true;
}

void Grouping::mergeSiblings() {
  if (gemmChoice == "cublaslt")
    return;
  // Groups whose matmuls run on fusec's dot-product kernel, by the A they read.
  auto gemvMatmul = [&](size_t g) -> Operation * {
    Operation *mm = nullptr;
    for (Operation *op : groups[g])
      if (isa<MatmulOp>(op)) {
        GemmPath path = chosenGemmPath(op);
        // A sibling group already side by side (priced as the Hopper form,
        // FusecWgmmaGemv) may take more siblings; a single product on that
        // path is not the dot-product kernel's.
        bool sideBySideGroup = path == GemmPath::FusecWgmmaGemv && matmulsOf(groups[g]).size() >= 2;
        if ((path != GemmPath::FusecGemv && path != GemmPath::FusecTensorGemv && !sideBySideGroup))
          return nullptr;
        mm = op;
      }
    return mm;
  };
  auto own = [&](const OpGroup &x) {
    return predictSeconds(groupCost(x), profile, siblingGemvPath(x, arch, profile.smCount));
  };
  mergeTensorCoreSiblings();
  forSiblingPairs(gemvMatmul, [&](size_t g, size_t h, Operation *mg, Operation *mh) {
    OpGroup merged = united(groups[g], groups[h]);
    GroupSchedule schedule;
    std::string why;
    if (!classifyGroup(merged, schedule, why) || createsCycle(merged) ||
        own(merged) >= own(groups[g]) + own(groups[h])) {
      if (!why.empty())
        rejections.push_back({nodeLabel(mg), nodeLabel(mh), why, DecisionReason::NoKernelFamily});
      return;
    }
    // The parts' own kernels, summed over every merge into g.
    auto apartOf = [&](size_t x) {
      auto it = gemvApart.find(x);
      return it != gemvApart.end() ? it->second : own(groups[x]);
    };
    double apart = apartOf(g) + apartOf(h);
    gemvApart[g] = apart;
    joinSiblings(g, {h}, std::move(merged), apart);
  });
  mergeSideBySide();
}

void Grouping::mergeTensorCoreSiblings() {
  // Products of 9-64 rows alone in their groups, by the A they read, on
  // whatever path each chose (cuBLASLt for plain Llama layers): all of one A
  // in one tensor-core dot-product kernel when the model predicts that
  // faster than each apart. All at once, not in pairs: Q with K alone is
  // predicted slower than apart, Q with K and V faster (one launch and one
  // ramp instead of three).
  llvm::MapVector<Value, SmallVector<size_t>> byA;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].empty() ||
        !llvm::all_of(groups[g], [](Operation *op) { return isa<MatmulOp>(op) || isView(op); }))
      continue;
    SmallVector<Operation *> mms = matmulsOf(groups[g]);
    if (mms.size() == 1 && tensorCoreGemvApplies(mms.front()))
      byA[viewSource(cast<MatmulOp>(mms.front()).getLhs())].push_back(g);
  }
  auto tryJoinAll = [&](ArrayRef<size_t> gs) {
    OpGroup merged;
    double apart = 0;
    for (size_t g : gs) {
      merged = united(merged, groups[g]);
      apart += predictSeconds(groupCost(groups[g]), profile,
                              chosenGemmPath(matmulsOf(groups[g]).front()));
    }
    auto reject = [&](DecisionReason code, std::string reason, double fused = -1) {
      rejections.push_back({nodeLabel(matmulsOf(groups[gs.front()]).front()),
                            nodeLabel(matmulsOf(groups[gs.back()]).front()), std::move(reason),
                            code, fused, fused < 0 ? -1 : apart * 1e6});
    };
    GroupSchedule schedule;
    std::string why;
    if (!classifyGroup(merged, schedule, why) || createsCycle(merged))
      return why.empty() ? reject(DecisionReason::Cycle, "would create a cycle through another kernel")
                         : reject(DecisionReason::NoKernelFamily, why);
    double together =
        predictSeconds(groupCost(merged), profile, siblingGemvPath(merged, arch, profile.smCount));
    if (together >= apart) {
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "not faster as one dot-product kernel of %zu siblings: %.1f us "
                    "vs %.1f us apart",
                    gs.size(), together * 1e6, apart * 1e6);
      return reject(DecisionReason::NotFaster, buf, together * 1e6);
    }
    gemvApart[gs.front()] = apart;
    joinSiblings(gs.front(), gs.drop_front(), std::move(merged), apart);
  };
  for (auto &[a, gs] : byA)
    if (gs.size() >= 2)
      tryJoinAll(gs);
}

void Grouping::forSiblingPairs(
    llvm::function_ref<Operation *(size_t)> pick,
    llvm::function_ref<void(size_t, size_t, Operation *, Operation *)> tryJoin) {
  for (size_t g = 0; g < groups.size(); ++g) {
    Operation *mg = pick(g);
    if (!mg)
      continue;
    Value a = viewSource(cast<MatmulOp>(mg).getLhs());
    for (size_t h = g + 1; h < groups.size(); ++h)
      if (Operation *mh = pick(h); mh && viewSource(cast<MatmulOp>(mh).getLhs()) == a)
        tryJoin(g, h, mg, mh);
  }
}

void Grouping::joinSiblings(size_t g, ArrayRef<size_t> others, OpGroup merged,
                            double gemvApart) {
  for (size_t h : others) {
    for (Operation *op : groups[h])
      groupOf[op] = g;
    groups[h].clear();
  }
  groups[g] = std::move(merged);
  markSiblings(groups[g], gemvApart);
}

void Grouping::mergeSideBySide() {
  if (profile.wgmmaFlopsPerSec <= 0)
    return;
  // Groups of products alone (written as they are), by the A they read:
  // Q/K/V become one wgmma kernel over their tiles when the model predicts
  // the one launch faster than each on its chosen path.
  auto productsOnly = [&](size_t g) -> Operation * {
    bool only =
        !groups[g].empty() &&
        llvm::all_of(groups[g], [](Operation *op) { return isa<MatmulOp>(op) || isView(op); }) &&
        llvm::all_of(matmulsOf(groups[g]),
                     [&](Operation *op) { return wgmmaApplies(op, "sm_90a"); });
    return only ? matmulsOf(groups[g]).front() : nullptr;
  };
  auto priced = [&](const OpGroup &x) {
    SmallVector<Operation *> mms = matmulsOf(x);
    return predictSeconds(groupCost(x), profile,
                          mms.size() > 1 ? GemmPath::FusecWgmma : chosenGemmPath(mms.front()));
  };
  forSiblingPairs(productsOnly, [&](size_t g, size_t h, Operation *mg, Operation *mh) {
    OpGroup merged = united(groups[g], groups[h]);
    GroupSchedule schedule;
    std::string why;
    auto reject = [&](DecisionReason code, std::string reason, double fused = -1,
                      double apart = -1) {
      rejections.push_back({nodeLabel(mg), nodeLabel(mh), std::move(reason), code, fused, apart});
    };
    if (!concatWgmmaApplies(matmulsOf(merged), arch))
      return reject(DecisionReason::NeedsHopper, "sibling products share one kernel side by side only on Hopper's wgmma "
                    "GEMM (target " + arch + "), as up to 3 2-D products of one K and dtype "
                    "with 16-byte result rows");
    if (!classifyGroup(merged, schedule, why) || createsCycle(merged))
      return why.empty() ? reject(DecisionReason::Cycle, "would create a cycle through another kernel")
                         : reject(DecisionReason::NoKernelFamily, why);
    double apart = priced(groups[g]) + priced(groups[h]), together = priced(merged);
    if (together >= apart) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "not faster side by side: %.1f us fused vs %.1f us apart",
                    together * 1e6, apart * 1e6);
      return reject(DecisionReason::NotFaster, buf, together * 1e6, apart * 1e6);
    }
    joinSiblings(g, {h}, std::move(merged));
  });
}

} // namespace fusec::detail

namespace fusec {
namespace {
struct FuseSiblingsPass : detail::GroupingPass<FuseSiblingsPass, impl::FusecFuseSiblingsBase> {
  using GroupingPass::GroupingPass;
  void stage(detail::Grouping &g) { g.mergeSiblings(); }
};
} // namespace
} // namespace fusec
