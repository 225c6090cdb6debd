//===- GemmLaunch.cpp - the matmul family's entry: kernel, tiles, launch ---===//
//
// generateGemm runs a matmul group on the kernel of the family the planner
// chose (the dot-product kernel, the portable mma.sync GEMM, or on Hopper
// the TMA + wgmma kernel, alone, as a dual product or with sibling products
// side by side): it picks that kernel's tile configuration (heuristic,
// candidate or tuned) and assembles the launch: grid, shared memory and the
// TMA tensor maps. The kernels' sources are in GemmKernel.cpp and
// WgmmaGemm.cpp.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/ElementEmitter.h"
#include "compiler/schedule/GemmConfig.h"
#include "compiler/codegen/GemmGen.h"
#include "compiler/codegen/KernelSpec.h"
#include "compiler/codegen/ScalarOps.h"
#include "compiler/cost/CostModel.h"
#include "compiler/support/Printable.h"
#include "compiler/schedule/GemmForms.h"
#include "compiler/schedule/StridedView.h"

#include <limits>
#include <optional>
#include <vector>

using namespace mlir;

namespace fusec::codegen::detail {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

/// Sibling products that are the group's results as they are (Q/K/V): for
/// each matmul, which result it is; none when any op of the group computes
/// something else.
std::optional<std::vector<unsigned>> productsAsResults(FusionOp fusion,
                                                       llvm::ArrayRef<MatmulOp> mms) {
  for (Operation &op : fusion.getBodyBlock().without_terminator())
    if (!isa<MatmulOp>(op) && !isView(&op))
      return std::nullopt;
  auto yields = fusion.getYield().getValues();
  if (yields.size() != mms.size())
    return std::nullopt;
  std::vector<unsigned> out;
  for (MatmulOp mm : mms) {
    auto it = llvm::find(yields, mm.getResult());
    if (it == yields.end())
      return std::nullopt;
    out.push_back(static_cast<unsigned>(it - yields.begin()));
  }
  return out;
}

/// What the schedule line says of computed operands.
std::string prologueNote(const GemmGen &g) {
  if (!g.a.computed && !g.b.computed)
    return "";
  return std::string(", ") + (g.a.computed && g.b.computed ? "A and B" : g.a.computed ? "A" : "B") +
         " computed by the prologue as loaded";
}

/// What the schedule line says of streamed row statistics.
std::string rowStatsNote(const GemmGen &g) {
  if (!g.rowStats)
    return "";
  const size_t picks = g.rowStats->picks.size();
  return std::string("; rows reduced to a (max, sum of exponentials) pair a tile") +
         (picks ? " and " + std::to_string(picks) + " picked sum" + (picks > 1 ? "s" : "") : "") +
         ", merged by each row tile's last tile; the product never written";
}

} // namespace

llvm::Expected<KernelSpec> generateGemm(FusionOp fusion, KernelFamily path,
                                        const DeviceProfile &profile, const std::string &arch,
                                        const GemmChoice &choice) {
  auto fail = [](const std::string &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", why.c_str());
  };
  // The planner chose the family for the group as outlined; one the group
  // does not fit is a planner error, not a second choice.
  auto mismatch = [&](const std::string &why) {
    return fail("internal error: the group does not fit its family " +
                stringifyKernelFamily(path).str() + ": " + why);
  };
  GemmGen g;
  g.fusion = fusion;
  std::vector<MatmulOp> mms;
  for (Operation &op : fusion.getBodyBlock())
    if (auto m = dyn_cast<MatmulOp>(op))
      mms.push_back(m);
  std::vector<Operation *> mmOps(mms.begin(), mms.end());
  // Sibling products: side by side (Q/K/V written as they are) or one dual
  // product on the wgmma GEMM; side by side on its dot-product form at
  // 9-64 rows on sm_90a (a cluster's weight rows in one of them); else the
  // sibling dot-product kernel.
  std::optional<std::vector<unsigned>> sideBySide;
  int64_t partsRows = 0;
  if (mms.size() > 1) {
    switch (path) {
    case KernelFamily::FusecWgmma:
      if (concatWgmmaApplies(mmOps, arch))
        sideBySide = productsAsResults(fusion, mms);
      if (!sideBySide) {
        if (mms.size() != 2 || !dualWgmmaApplies(mms[0], mms[1], arch))
          return mismatch("sibling products neither side by side nor one dual product");
        g.mm2 = mms[1];
      }
      break;
    case KernelFamily::FusecWgmmaGemv:
      partsRows = wgmmaGemvPartsRows(mmOps, arch, profile.smCount);
      if (partsRows == 0 || !(sideBySide = productsAsResults(fusion, mms)))
        return mismatch("sibling products that are not the dot-product kernel's parts");
      break;
    default:
      return generateSiblingGemv(fusion, profile);
    }
  }
  if (!mms.empty())
    g.mm = mms[0];
  // Streamed row statistics: fusec's GEMM (the portable or the wgmma
  // kernel, as rowStatsPath chose) with their epilogue.
  g.rowStats = rowStatsOf(fusion);
  if (g.rowStats && ((path != KernelFamily::Fusec && path != KernelFamily::FusecWgmma) ||
                     mms.size() != 1))
    return mismatch("streamed row statistics run on fusec's GEMM, one product");
  if (!g.mm)
    return fail("no matmul in the group");
  DType dt = dtypeOf(g.mm.getLhs());
  if ((dt != DType::BF16 && dt != DType::F16) || dtypeOf(g.mm.getRhs()) != dt)
    return fail("fusec's GEMM takes bf16 or f16 operands (this one is " +
                std::string(dtypeName(dt).data(), dtypeName(dt).size()) + ")");
  g.elem = storageType(dt);
  g.batchShape = matmulBatchShape(g.mm);
  auto argOf = [](Value v) -> std::optional<unsigned> {
    if (auto arg = dyn_cast<BlockArgument>(viewSource(v)))
      return arg.getArgNumber();
    return std::nullopt;
  };
  auto ia = argOf(g.mm.getLhs()), ib = argOf(g.mm.getRhs());
  // A computed operand (the group's prologue) keeps its view's layout
  // (prologueFits requires one): the prologue's loads then run along the
  // shared-memory tile's contiguous dim.
  auto la = matmulOperandLayout(g.mm.getLhs(), g.batchShape, 'r');
  auto lb = matmulOperandLayout(g.mm.getRhs(), g.batchShape, 'c');
  if (!la || !lb)
    return fail("a matmul operand is not a strided view");
  if ((!ia || !ib) && (g.mm2 || sideBySide))
    return fail("sibling products take their operands from memory, not from a prologue");
  g.shape.m = la->rows;
  g.shape.k = la->cols;
  g.shape.n = lb->cols;
  g.shape.batch = 1;
  for (int64_t d : g.batchShape)
    g.shape.batch *= d;
  if (g.shape.batch > 65535)
    return fail("more than 65535 matrices in the batch");
  g.a = {ia ? ElementEmitter::argName(*ia) : "", *la, la->rowMajor};
  g.b = {ib ? ElementEmitter::argName(*ib) : "", *lb, !lb->rowMajor};
  g.a.value = g.mm.getLhs();
  g.b.value = g.mm.getRhs();
  g.a.computed = !ia;
  g.b.computed = !ib;
  // A sibling product's weight (a dual product's second, or a part's): a
  // K-contiguous input of the group, with its own tensor map.
  auto weightOf = [&](MatmulOp m) -> std::optional<GemmGen::Part> {
    auto l = matmulOperandLayout(m.getRhs(), g.batchShape, 'c');
    auto arg = argOf(m.getRhs());
    if (!l || !arg || l->rowMajor)
      return std::nullopt;
    GemmGen::Part w;
    w.b = {ElementEmitter::argName(*arg), *l, true};
    w.bArg = *arg;
    w.n = l->cols;
    return w;
  };
  std::optional<unsigned> ib2;
  if (g.mm2) {
    auto w = weightOf(g.mm2);
    if (!w)
      return fail("the second product's weight is not a K-contiguous input of the group");
    g.b2 = w->b;
    ib2 = w->bArg;
  }
  if (sideBySide) {
    // Q/K/V: the products' tiles side by side along N, one weight and one
    // output tensor map each.
    g.shape.n = 0;
    for (size_t p = 0; p < mms.size(); ++p) {
      auto part = weightOf(mms[p]);
      if (!part)
        return fail("a sibling product's weight is not a K-contiguous input of the group");
      part->out = (*sideBySide)[p];
      g.shape.n += part->n;
      g.parts.push_back(*part);
    }
  }
  std::string key = arch + " " + std::string(dtypeName(dt)) + " m" + str(g.shape.m) + " n" +
                    str(g.shape.n) + " k" + str(g.shape.k) + " b" + str(g.shape.batch) +
                    (g.a.kContiguous ? " aK" : " aM") + (g.b.kContiguous ? " bK" : " bN") +
                    (g.mm2 ? " dual" : "") + (g.a.computed ? " aP" : "") +
                    (g.b.computed ? " bP" : "") + (g.rowStats ? " rowstats" : "");
  if (!g.parts.empty()) {
    key += " parts";
    for (const GemmGen::Part &p : g.parts)
      key += " " + str(p.n);
  }
  for (Operand *o : {&g.a, &g.b})
    o->vector = !o->computed && alignedFor16ByteCopies(o->layout);
  // The TMA copies operands as they lie in memory: none computed.
  bool hopper = path == KernelFamily::FusecWgmma;
  if (hopper && (!wgmmaApplies(g.mm, arch) || g.a.computed || g.b.computed))
    return mismatch("the wgmma GEMM takes K-contiguous operands from memory on sm_90a");
  std::vector<GemmConfig> candidates = gemmCandidates(g.shape, profile, hopper);
  if (g.mm2) {
    // Two B tiles per stage and two accumulator sets: 128 x 128 output
    // tiles take the stage bytes and registers of one 128 x 256 product.
    candidates.clear();
    for (const char *c : {"wg 128x128x64 s4", "wg 128x128x64 s3"}) {
      GemmConfig cfg;
      if (GemmConfig::parse(c, cfg))
        candidates.push_back(cfg);
    }
  }
  // 9-64 rows on sm_90a: the TMA + wgmma dot-product kernel first, with as
  // many stages as the shared memory holds (16 at most; fewer stream slower:
  // docs/matmul.md, "How a group runs"). Its key says so: a configuration
  // tuned for these shapes on another kernel is not reused.
  const int64_t wgvRows = path != KernelFamily::FusecWgmmaGemv ? 0
                          : !g.parts.empty()                   ? partsRows
                                                               : wgmmaGemvRows(g.mm, arch,
                                                                               profile.smCount);
  if (path == KernelFamily::FusecWgmmaGemv && (wgvRows == 0 || g.a.computed || g.b.computed))
    return mismatch("the Hopper dot-product kernel takes 9-64 rows from memory on sm_90a");
  // Side by side the clusters (N / 64 of them for Q/K/V) exceed the SM
  // pairs: two blocks an SM, each in half its shared memory (8 stages).
  const int64_t wgvSmem =
      g.parts.empty() ? profile.smemPerBlock : (profile.smemPerBlock + 1024) / 2 - 1024;
  auto wgvFits = [&](const GemmConfig &c) {
    return WgvShape{g.shape.m, c.wgvRows, c.stages}.fits(wgvSmem);
  };
  if (wgvRows > 0) {
    key += " wgv";
    GemmConfig c;
    c.wgv = true;
    c.wgvRows = static_cast<int>(wgvRows);
    for (c.stages = 16; c.stages >= 2; --c.stages)
      if (wgvFits(c)) {
        candidates.insert(candidates.begin(), c);
        break;
      }
  }
  // The candidates are the family's kernel's configurations that the matmul
  // can take: the dot-product kernel takes K-contiguous, 16-byte aligned
  // operands, 1-8 rows on CUDA cores (batched too), 9-64 rows of one matrix
  // on tensor cores with both operands in memory. Autotuning times these;
  // a tuned entry of another kernel gives way to the first of them.
  bool gemvOk = gemvApplies(g.mm);
  bool tcGemvOk = tensorCoreGemvApplies(g.mm) && !g.a.computed && !g.b.computed;
  auto takes = [&](const GemmConfig &c) {
    switch (path) {
    case KernelFamily::FusecWgmmaGemv: return c.wgv && wgvRows > 0;
    case KernelFamily::FusecWgmma: return c.wgmma && hopper;
    case KernelFamily::FusecTensorGemv: return c.gemv && c.gemvTiles > 0 && tcGemvOk;
    case KernelFamily::FusecGemv: return c.gemv && c.gemvTiles == 0 && gemvOk && g.shape.m <= 8;
    default: return !c.gemv && !c.wgmma && !c.wgv;  // the portable mma.sync GEMM
    }
  };
  llvm::erase_if(candidates, [&](const GemmConfig &c) { return !takes(c); });
  // The statistics epilogue runs on the Hopper kernel's cooperative
  // consumers (all of a tile's rows in one block; ping-pong consumers of
  // 128 x 128 tiles were slower on the H200: bench/NOTES.md), no clusters.
  if (g.rowStats)
    llvm::erase_if(candidates, [](const GemmConfig &c) { return c.pingpong || c.cluster > 1; });
  if (candidates.empty())
    return mismatch("no configuration of its kernel takes this matmul");
  g.cfg = candidates.front();
  if (choice.candidate >= 0) {
    if (choice.candidate < (int)candidates.size())
      g.cfg = candidates[choice.candidate];
  }
  // A tuned entry is data from disk: one that does not parse, is another
  // kernel's, or does not fit this GPU is not used, and said so.
  std::optional<std::string> tunedEntry;
  auto unused = [&](const std::string &why) {
    if (tunedEntry && choice.unused)
      choice.unused->push_back("entry '" + printable(key) + "' (configuration '" +
                               printable(*tunedEntry) + "') " + why);
    tunedEntry.reset();
  };
  if (choice.candidate < 0 && choice.tuned)
    if (auto it = choice.tuned->find(key); it != choice.tuned->end()) {
      tunedEntry = it->second;
      if (!GemmConfig::parse(it->second, g.cfg))
        unused("does not parse");
    }
  // Sibling products need cooperative wgmma tiles of one block each: a
  // tile's part picks its maps, a dual tile holds both products.
  auto cooperative = [](const GemmConfig &c) {
    return c.wgmma && !c.pingpong && c.cluster == 1 && c.bn % 64 == 0;
  };
  if (!g.parts.empty() && wgvRows > 0) {
    if (!candidates.front().wgv)
      return fail("products side by side: no dot-product configuration fits");
    g.cfg = candidates.front();  // the only kernel that takes them at these rows
  } else if (!g.parts.empty()) {
    llvm::erase_if(candidates, [&](const GemmConfig &c) { return !cooperative(c); });
    if (candidates.empty())
      return fail("no wgmma tile configuration for products side by side");
  }
  if ((!g.parts.empty() || g.mm2) && !g.cfg.wgv &&
      (!cooperative(g.cfg) || (g.mm2 && g.cfg.bn != 128))) {
    unused("is not a tile configuration for products side by side or a dual product");
    g.cfg = candidates.front();  // a tuned entry or candidate they cannot take
  }
  if (!takes(g.cfg)) {
    unused("configures another kernel than this matmul's (" +
           stringifyKernelFamily(path).str() + ")");
    g.cfg = candidates.front();
  }
  // The statistics epilogue reduces whole products (K not split) of a tile
  // in one block.
  if (g.rowStats && (g.cfg.pingpong || g.cfg.cluster > 1)) {
    unused("is not a tile configuration for streamed row statistics");
    g.cfg = candidates.front();
  }
  if (g.rowStats)
    g.cfg.splitK = 1;
  int64_t &stageBytes = g.stageBytes;
  auto size = [&] {
    if (g.cfg.wgv) {
      g.threads = g.cfg.threads();
      return wgvFits(g.cfg);
    }
    if (g.cfg.gemv) {
      g.threads = g.cfg.threads();
      if (g.cfg.gemvTiles == 0)
        return true;
      return g.tcGemvShape().fits(profile.smemPerBlock);
    }
    if (g.cfg.wgmma) {
      g.threads = g.cfg.threads();
      stageBytes = (int64_t)(g.cfg.bm + g.cfg.bn * (g.mm2 ? 2 : 1)) * 128;
      return stageBytes * g.cfg.stages + 1024 <= profile.smemPerBlock;
    }
    g.threads = g.cfg.threads();
    g.a.tileRows = g.a.kContiguous ? g.cfg.bm : g.cfg.bk;
    g.a.tileCols = (g.a.kContiguous ? g.cfg.bk : g.cfg.bm) + 8;
    g.b.tileRows = g.b.kContiguous ? g.cfg.bn : g.cfg.bk;
    g.b.tileCols = (g.b.kContiguous ? g.cfg.bk : g.cfg.bn) + 8;
    stageBytes = (g.a.tileRows * g.a.tileCols + g.b.tileRows * g.b.tileCols) * 2;
    return stageBytes * g.cfg.stages <= profile.smemPerBlock && g.threads <= 1024;
  };
  if (!size()) {
    // A tuned or candidate configuration that does not fit (a smaller GPU's
    // shared memory): the first candidate the matmul takes that does.
    std::string rejected = g.cfg.str();
    unused("needs more shared memory or threads than a block of this GPU has");
    bool fits = false;
    for (const GemmConfig &c : candidates) {
      if (!takes(c))
        continue;
      g.cfg = c;
      if ((fits = size()))
        break;
    }
    if (!fits)
      return fail("configuration " + rejected + " needs more shared memory or threads than a "
                  "block has");
  }

  if (g.rowStats && g.rowStatsScratchBytes() > int64_t(std::numeric_limits<unsigned>::max()))
    return fail("the row statistics' partial pairs need more scratch than a launch takes");
  KernelSpec spec;
  spec.name = fusion->getAttrOfType<StringAttr>("name").str();
  spec.family = g.rowStats ? "streamed_rows" : "matmul";
  // The TMA's view of a K-contiguous operand: boxes of `box` rows x 64 k.
  auto map = [&](const Operand &o, unsigned arg, int64_t rows, int box) {
    TensorMapParam t;
    t.arg = static_cast<int>(arg);
    t.bf16 = dt == DType::BF16;
    t.rows = static_cast<uint64_t>(rows);
    t.cols = static_cast<uint64_t>(g.shape.k);
    t.rowStrideBytes = static_cast<uint64_t>(o.layout.ld) * 2;
    t.offsetBytes = static_cast<uint64_t>(o.layout.offset) * 2;
    t.boxRows = static_cast<uint32_t>(box);
    t.boxCols = 64;
    return t;
  };
  if (g.cfg.wgv) {
    int64_t clusters = g.wgvClusters();
    spec.text = g.wgmmaGemvSource();
    spec.grid = static_cast<unsigned>(2 * clusters);
    spec.block = static_cast<unsigned>(g.threads);
    spec.sharedBytes = static_cast<unsigned>(g.wgvShape().dynamicBytes());
    spec.tensorMaps = {map(g.a, *ia, g.shape.m, static_cast<int>(g.shape.m)),
                       map(g.b, *ib, g.parts.empty() ? g.shape.n : g.parts[0].n, g.cfg.wgvRows)};
    for (size_t p = 1; p < g.parts.size(); ++p)
      spec.tensorMaps.push_back(map(g.parts[p].b, g.parts[p].bArg, g.parts[p].n, g.cfg.wgvRows));
    spec.readsBeforeWait = 1;  // the weights' first boxes, every part's (WgmmaGemv.cpp)
    spec.gemmConfig = g.cfg.str();
    spec.gemmKey = key;
    spec.schedule = "GEMV " + str(g.shape.m) + "x" + str(g.shape.n) + "x" + str(g.shape.k) +
                    ", " + g.cfg.str() + ": " + str(clusters) + " clusters of 2 blocks (K halves) for " +
                    str(profile.smCount) + " SMs, " + str(g.cfg.wgvRows) +
                    " weight rows each" +
                    (g.parts.empty() ? std::string()
                                     : " of " + str(g.parts.size()) +
                                           " products side by side, two blocks an SM") +
                    ", TMA stages into wgmma; the first " +
                    str(g.wgvShape().earlyBoxes()) +
                    " weight boxes requested before the wait for the kernel ahead, the next "
                    "kernel let launch once all are requested";
    return spec;
  }
  if (g.cfg.gemv && g.cfg.gemvTiles > 0) {
    TcGemvShape t = g.tcGemvShape();
    spec.text = g.tensorCoreGemvSource();
    spec.grid = static_cast<unsigned>(t.blocks());
    spec.gridY = static_cast<unsigned>(t.split);
    spec.block = static_cast<unsigned>(g.threads);
    spec.sharedBytes = static_cast<unsigned>(t.stageBytes());
    if (t.split > 1) {
      spec.scratchBytes =
          static_cast<unsigned>(t.counterBytes + t.split * int64_t(spec.grid) * t.partStride * 4);
      spec.scratchZeroOnce = static_cast<unsigned>(t.counterBytes);
    }
    spec.gemmConfig = g.cfg.str();
    spec.gemmKey = key;
    spec.schedule = "GEMV " + str(g.shape.m) + "x" + str(g.shape.n) + "x" + str(g.shape.k) +
                    ", " + g.cfg.str() + ": tensor cores, a warp per " + str(16 * t.tiles) +
                    " weight rows and 1/" + str(t.warps * t.split) +
                    " of K, weights through the warp's cp.async stages" +
                    (t.warps == 8 ? tcGemvWaves(int64_t(spec.grid) * t.split, profile.smCount)
                                  : std::string());
    return spec;
  }
  if (g.cfg.gemv) {
    spec.text = g.gemvSource(profile.smCount);
    spec.grid = static_cast<unsigned>(g.gemvBlocks());
    spec.gridY = static_cast<unsigned>(g.shape.batch);
    spec.block = static_cast<unsigned>(g.threads);
    spec.gemmConfig = g.cfg.str();
    spec.gemmKey = key;
    spec.schedule = "GEMV " + str(g.shape.m) + "x" + str(g.shape.n) + "x" + str(g.shape.k) +
                    (g.shape.batch > 1 ? " x" + str(g.shape.batch) + " batches" : "") +
                    ", " + g.cfg.str() + ": a warp per " + str(g.cfg.gemvCols * g.gemvRowsPerWarpStep()) +
                    " weight rows, 16-byte loads" + prologueNote(g);
    return spec;
  }
  if (g.cfg.wgmma) {
    if (!g.parts.empty() && !g.tmaStoreApplies(profile.smemPerBlock))
      // Products side by side store through the boxes: a tuned configuration
      // whose stages leave no room for them gives way to one that does.
      for (const GemmConfig &c : candidates) {
        g.cfg = c;
        if (size() && g.tmaStoreApplies(profile.smemPerBlock))
          break;
      }
    int64_t tilesM = (g.shape.m + g.cfg.bm - 1) / g.cfg.bm;
    // A cluster pairs tiles of neighbouring rows in one column (tileOrder's
    // groups are even when the tile rows are).
    if (tilesM % g.cfg.cluster != 0)
      g.cfg.cluster = 1;
    g.tmaStore = !g.rowStats && g.tmaStoreApplies(profile.smemPerBlock);
    if (!g.parts.empty() && !g.tmaStore)
      return fail("configuration " + g.cfg.str() + " leaves no room for the output boxes of "
                  "products side by side");
    spec.text = g.hopperSource();
    int64_t tiles = tilesM * g.tilesN();
    // Persistent blocks, one per SM (the buffers take most of its shared
    // memory), a whole number of clusters.
    spec.grid = static_cast<unsigned>(std::min<int64_t>(tiles, profile.smCount) /
                                      g.cfg.cluster * g.cfg.cluster);
    spec.clusterX = static_cast<unsigned>(g.cfg.cluster);
    spec.block = static_cast<unsigned>(g.threads);
    spec.sharedBytes = static_cast<unsigned>(stageBytes * g.cfg.stages + 1024 +
                                             (g.tmaStore ? g.boxesBytes(g.tmaSlots) : 0));
    spec.tensorMaps = {map(g.a, *ia, g.shape.m, g.cfg.bm),
                       map(g.b, *ib, g.parts.empty() ? g.shape.n : g.parts[0].n,
                           g.cfg.bn / g.cfg.cluster)};
    for (size_t p = 1; p < g.parts.size(); ++p)
      spec.tensorMaps.push_back(map(g.parts[p].b, g.parts[p].bArg, g.parts[p].n, g.cfg.bn));
    if (g.mm2)
      spec.tensorMaps.push_back(map(g.b2, *ib2, g.shape.n, g.cfg.bn));
    // The output (then a residual), [M, N] row-major, in boxes of 64 x 64.
    auto tile = [&](int arg, Value v, int64_t n) {
      TensorMapParam t;
      t.arg = arg;
      t.bf16 = dtypeOf(v) == DType::BF16;
      t.rows = static_cast<uint64_t>(g.shape.m);
      t.cols = static_cast<uint64_t>(n);
      t.rowStrideBytes = static_cast<uint64_t>(n) * 2;
      t.boxRows = t.boxCols = 64;
      spec.tensorMaps.push_back(t);
    };
    const int outArg = static_cast<int>(fusion.getInputs().size());  // results follow inputs
    if (!g.parts.empty())
      for (const GemmGen::Part &p : g.parts)
        tile(outArg + static_cast<int>(p.out), fusion.getResult(p.out), p.n);
    else if (g.tmaStore)
      tile(outArg, fusion.getResult(0), g.shape.n);
    if (g.tmaResidual >= 0)
      tile(g.tmaResidual, fusion.getBodyBlock().getArgument(g.tmaResidual), g.shape.n);
    if (g.rowStats) {
      spec.scratchBytes = static_cast<unsigned>(g.rowStatsScratchBytes());
      spec.scratchZeroOnce = static_cast<unsigned>(g.rowStatsCounterBytes());
    }
    spec.gemmConfig = g.cfg.str();
    spec.gemmKey = key;
    spec.schedule = "GEMM " + str(g.shape.m) + "x" + str(g.shape.n) + "x" + str(g.shape.k) +
                    ", " + g.cfg.str() + ": TMA producer warpgroup, " + str(g.cfg.bm / 64) +
                    " wgmma consumer warpgroups, " + str(spec.grid) + " persistent blocks over " + str(tiles) + " tiles" +
                    (g.cfg.cluster > 1 ? ", clusters of " + str(g.cfg.cluster) + " sharing B tiles" : "") +
                    (g.tmaStore ? ", TMA stores" : "") +
                    (g.tmaResidual >= 0 ? ", TMA-loaded residual" : "") +
                    (g.mm2 ? ", dual product (two weights, one A tile)" : "") +
                    (g.parts.empty() ? ""
                                     : ", " + str(g.parts.size()) +
                                           " products side by side along N (A read once)") +
                    rowStatsNote(g);
    return spec;
  }
  spec.text = g.source();
  int64_t tiles = ((g.shape.m + g.cfg.bm - 1) / g.cfg.bm) * ((g.shape.n + g.cfg.bn - 1) / g.cfg.bn);
  spec.grid = static_cast<unsigned>(tiles);
  spec.gridY = static_cast<unsigned>(g.cfg.splitK);
  spec.gridZ = static_cast<unsigned>(g.shape.batch);
  spec.block = static_cast<unsigned>(g.threads);
  spec.sharedBytes = static_cast<unsigned>(stageBytes * g.cfg.stages);
  if (g.cfg.splitK > 1) {
    int64_t counterBytes = 256 * ((tiles * g.shape.batch * 4 + 255) / 256);
    int64_t scratch = counterBytes + int64_t(g.cfg.splitK) * g.shape.batch * g.shape.m * g.shape.n * 4;
    // A tuned entry (gemm-tuning.json) is data from disk: a split whose
    // partial sums would not fit the launch's 32-bit scratch size is refused.
    if (scratch > int64_t(std::numeric_limits<unsigned>::max()))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "GEMM tile configuration '%s' splits K %d ways: its partial "
                                     "sums need %lld bytes of scratch, more than a launch takes",
                                     g.cfg.str().c_str(), g.cfg.splitK, (long long)scratch);
    spec.scratchBytes = static_cast<unsigned>(scratch);
    spec.scratchZeroOnce = static_cast<unsigned>(counterBytes);
  }
  if (g.rowStats) {
    spec.scratchBytes = static_cast<unsigned>(g.rowStatsScratchBytes());
    spec.scratchZeroOnce = static_cast<unsigned>(g.rowStatsCounterBytes());
  }
  spec.gemmConfig = g.cfg.str();
  spec.gemmKey = key;
  spec.schedule = "GEMM " + str(g.shape.m) + "x" + str(g.shape.n) + "x" + str(g.shape.k) +
                  (g.shape.batch > 1 ? " x" + str(g.shape.batch) + " batches" : "") +
                  ", tiles " + g.cfg.str() + ", A " + (g.a.kContiguous ? "K" : "M") +
                  "-contiguous, B " + (g.b.kContiguous ? "K" : "N") + "-contiguous" +
                  (g.a.vector && g.b.vector ? "" : ", element-wise copies") + prologueNote(g) +
                  rowStatsNote(g);
  return spec;
}

} // namespace fusec::codegen::detail
