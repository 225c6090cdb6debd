//===- SiblingGemv.cpp - sibling decode matmuls in one dot-product kernel -===//
//
// Decode (1-8 rows): matmuls that read the same activations A -- the Q, K and
// V projections; SwiGLU's gate and up -- run as one kernel instead of one per
// weight. Each is launch- and latency-bound at these sizes, so one launch and
// one read of A matter; the weights stream as in the single dot-product
// kernel (GemmKernel.cpp's gemvSource), one warp per weight row.
//
// The rows of all weights form one index space cut into segments. A segment
// is a set of matmuls of one width N whose results meet in the epilogue:
// q, k and v are three segments of one matmul each; gate and up one segment
// of two, where a warp streams row n of both weights and computes
// silu(gate) * up itself, so neither result reaches memory.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/ElementEmitter.h"
#include "compiler/codegen/GemmGen.h"
#include "compiler/codegen/KernelSpec.h"
#include "compiler/codegen/ScalarOps.h"
#include "compiler/cost/CostModel.h"
#include "compiler/shape/ShapeRules.h"

#include "llvm/ADT/EquivalenceClasses.h"

#include <map>
#include <set>
#include <tuple>

using namespace mlir;

namespace fusec::codegen::detail {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

constexpr int kWarps = 8;  ///< per block; one weight row per warp (GemmConfig's "gemv c1 w8")

struct Segment {
  std::vector<MatmulOp> mms;
  std::vector<Operand> weights;
  std::vector<unsigned> yields;  ///< the fusion's results this segment writes
  int64_t n = 0, first = 0;      ///< width, first row in the index space
};

/// The graph node a matmul came from ("q_proj"), for comments.
std::string label(Operation *op) {
  if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
    return loc.getName().str();
  return op->getName().stripDialect().str();
}

/// The matmuls a value depends on inside the group.
void matmulsOf(Value v, std::set<Operation *> &out) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return;
  if (isa<MatmulOp>(def)) {
    out.insert(def);
    return;
  }
  for (Value o : def->getOperands())
    matmulsOf(o, out);
}

} // namespace

llvm::Expected<KernelSpec> generateSiblingGemv(FusionOp fusion, const DeviceProfile &profile) {
  auto fail = [](const std::string &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", why.c_str());
  };
  std::vector<MatmulOp> mms;
  for (Operation &op : fusion.getBodyBlock())
    if (auto m = dyn_cast<MatmulOp>(op))
      mms.push_back(m);
  // Matmuls whose results meet in one output share a segment.
  llvm::EquivalenceClasses<Operation *> classes;
  for (MatmulOp m : mms)
    classes.insert(m);
  std::vector<std::set<Operation *>> deps;
  for (Value y : fusion.getYield().getValues()) {
    std::set<Operation *> d;
    matmulsOf(y, d);
    if (d.empty())
      return fail("an output of a sibling matmul group depends on no matmul");
    for (Operation *m : d)
      classes.unionSets(*d.begin(), m);
    deps.push_back(d);
  }
  std::vector<Segment> segs;
  std::map<Operation *, int> segOf;
  for (MatmulOp m : mms) {
    Operation *leader = classes.getLeaderValue(m);
    if (!segOf.count(leader)) {
      segOf[leader] = segs.size();
      segs.emplace_back();
    }
    segOf[m] = segOf[leader];
    segs[segOf[m]].mms.push_back(m);
  }
  for (unsigned y = 0; y < deps.size(); ++y)
    segs[segOf[*deps[y].begin()]].yields.push_back(y);

  MatmulOp first = mms.front();
  auto argOf = [](Value v) -> std::optional<unsigned> {
    if (auto arg = dyn_cast<BlockArgument>(viewSource(v)))
      return arg.getArgNumber();
    return std::nullopt;
  };
  auto la = matmulOperandLayout(first.getLhs(), {}, 'r');
  auto ia = argOf(first.getLhs());
  if (!la || !ia)
    return fail("sibling matmuls: A is not a strided view of an input");
  Operand a{ElementEmitter::argName(*ia), *la, true};
  int64_t M = la->rows, K = la->cols, rows = 0;
  std::string elem = storageType(dtypeOf(first.getLhs()));
  for (Segment &s : segs) {
    s.first = rows;
    for (MatmulOp m : s.mms) {
      auto lb = matmulOperandLayout(m.getRhs(), {}, 'c');
      auto ib = argOf(m.getRhs());
      if (!lb || !ib)
        return fail("sibling matmuls: a weight is not a strided view of an input");
      s.n = lb->cols;
      s.weights.push_back({ElementEmitter::argName(*ib), *lb, true});
    }
    rows += s.n;
  }

  // One segment's results from its products (`values`[j] the product with
  // weight j) at (fz_em, fz_en), stored.
  auto segmentEpilogue = [&](const Segment &s, const std::string &values,
                             const std::string &in) {
    ElementEmitter e(fusion, {"fz_em", "fz_en"}, in);
    e.load = [](ElementEmitter &em, BlockArgument arg, const Index &idx) -> std::string {
      return "fz_load1(" + ElementEmitter::argName(arg.getArgNumber()) + ", " +
             em.offset(shapeOf(arg), idx) + ")";
    };
    std::map<Operation *, int> slot;
    for (size_t j = 0; j < s.mms.size(); ++j)
      slot[s.mms[j]] = static_cast<int>(j);
    e.reduced = [&](Operation *op) { return values + "[" + str(slot.at(op)) + "]"; };
    std::vector<std::string> results;
    for (unsigned y : s.yields) {
      Value v = fusion.getYield().getValues()[y];
      results.push_back(e.emit(v, ElementEmitter::project(ElementEmitter::identity(2),
                                                          {M, s.n}, shapeOf(v))));
    }
    std::string out = e.takeCode();
    for (size_t r = 0; r < results.size(); ++r)
      out += in + "out" + str(s.yields[r]) + "[(long long)fz_em * " + str(s.n) +
             " + fz_en] = fz_out<" + storageType(dtypeOf(fusion.getResult(s.yields[r]))) +
             ">::of(" + results[r] + ");\n";
    return out;
  };
  auto describe = [&] {
    std::string what;
    for (const Segment &s : segs) {
      what += (what.empty() ? "" : " | ");
      for (size_t j = 0; j < s.mms.size(); ++j)
        what += (j ? " + " : "") + label(s.mms[j]);
    }
    return what;
  };

  KernelSpec spec;
  spec.name = fusion->getAttrOfType<StringAttr>("name").str();
  spec.family = "matmul";
  if (M > 8) {
    // 9-64 rows: the tensor-core body (TensorCoreGemv.cpp), blocks of 16 x
    // `tiles` rows of one segment, K not split across blocks (t.split stays
    // 1: splits are slower), so no scratch.
    if (la->batch > 1 || !isHalfFloat(dtypeOf(first.getLhs())))
      return fail("sibling matmuls of 9-64 rows take one matrix of 16-bit operands");
    size_t J = 1;
    for (const Segment &s : segs)
      J = std::max(J, s.mms.size());
    TcGemvShape t;
    t.m = M;
    t.k = K;
    // As GemmConfig's first tensor-core candidate: eight warps, no split
    // across blocks, the tiles that fill the SMs' waves over all segments'
    // rows (one tile where each segment has several weights).
    t.tiles = 1;
    t.warps = 8;
    if (J == 1) {
      std::vector<std::pair<int, int>> tiling = tensorCoreGemvTiles({M, rows, K, 1}, profile);
      if (!tiling.empty())
        std::tie(t.tiles, t.stages) = tiling.front();
    }
    int64_t rowsPerBlock = 16 * t.tiles, blocks = 0;
    std::vector<int64_t> firstBlock;
    // The block's shared memory is the widest segment's: fewer warps, then
    // fewer stages, where a smaller GPU's does not hold it.
    t.weights = static_cast<int>(J);
    while (!t.fits(profile.smemPerBlock)) {
      if (t.warps > 4)
        t.warps = 4;
      else if (t.stages > 2)
        --t.stages;
      else
        return fail("sibling matmuls of " + str(M) + " rows: no tensor-core configuration fits "
                    "the block's shared memory");
    }
    const int64_t smem = t.smemFloats(), stageBytes = t.stageBytes();
    for (const Segment &s : segs) {
      firstBlock.push_back(blocks);
      blocks += (s.n + rowsPerBlock - 1) / rowsPerBlock;
    }
    spec.text.qualifiers = "__launch_bounds__(" + str(t.warps * 32) + ")";
    spec.text.params = parameters(fusion);
    spec.text.staticShared = true;
    std::string src = "  extern __shared__ __align__(16) unsigned char fz_dyn[];\n";
    src += "  __shared__ float fz_red[" + str(smem) + "];\n";
    src += "  const int lane = threadIdx.x % 32;\n";
    for (size_t si = 0; si < segs.size(); ++si) {
      const Segment &s = segs[si];
      int64_t end = si + 1 < segs.size() ? firstBlock[si + 1] : blocks;
      src += std::string(si == 0 ? "  if" : "  else if") + " (blockIdx.x < " + str(end) +
             ") {  // " + str(s.n) + " rows of";
      for (MatmulOp m : s.mms)
        src += " " + label(m);
      src += "\n    const int fz_n0 = (blockIdx.x - " + str(firstBlock[si]) + ") * " +
             str(rowsPerBlock) + ";\n";
      t.n = s.n;
      t.weights = static_cast<int>(s.mms.size());
      src += tensorCoreGemvBody(a, s.weights, t, elem, segmentEpilogue(s, "fz_vs", "          "),
                                "    ");
      src += "  }\n";
    }
    spec.text.body = src;
    spec.grid = static_cast<unsigned>(blocks);
    spec.block = static_cast<unsigned>(t.warps * 32);
    spec.sharedBytes = static_cast<unsigned>(stageBytes);
    char cfg[48];
    std::snprintf(cfg, sizeof cfg, "gemv t%d w%d k1", t.tiles, t.warps);
    spec.gemmConfig = cfg;
    spec.schedule = "sibling GEMV " + str(M) + "x" + str(rows) + "x" + str(K) + " (" + describe() +
                    "): A read once, tensor cores, a warp per " + str(rowsPerBlock) +
                    " weight rows and 1/" + str(t.warps) + " of K" +
                    (t.warps == 8 ? tcGemvWaves(blocks, profile.smCount) : std::string());
    return spec;
  }
  spec.text.qualifiers = "__launch_bounds__(" + str(kWarps * 32) + ")";
  spec.text.params = parameters(fusion);
  std::string src = "  const int lane = threadIdx.x % 32;\n";
  src += "  const int fz_row = blockIdx.x * " + str(kWarps) + " + threadIdx.x / 32;\n";
  for (size_t si = 0; si < segs.size(); ++si) {
    const Segment &s = segs[si];
    int J = static_cast<int>(s.mms.size());
    src += std::string(si == 0 ? "  if" : "  else if") + " (fz_row < " + str(s.first + s.n) +
           ") {  // " + str(s.n) + " rows of";
    for (MatmulOp m : s.mms)
      src += " " + label(m);
    src += "\n    const int fz_n0 = fz_row - " + str(s.first) + ";\n";
    src += "    float acc[" + str(J) + "][" + str(M) + "];\n";
    src += "    #pragma unroll\n    for (int j = 0; j < " + str(J) + "; ++j)\n      #pragma unroll\n"
           "      for (int m = 0; m < " + str(M) + "; ++m) acc[j][m] = 0.f;\n";
    GemvLoop loop;
    loop.k = K;
    loop.laneStep = 256;
    loop.kStart = "lane * 8";
    loop.elem = elem;
    loop.indent = "    ";
    loop.allInFlight = gemvAllInFlight(K, 256, J, rows, profile.smCount);
    for (int j = 0; j < J; ++j)
      loop.weights.push_back({s.weights[j].ptr, offsetExpr(s.weights[j], "0", "k", "fz_n0")});
    loop.body = "      #pragma unroll\n      for (int m = 0; m < " + str(M) + "; ++m) {\n";
    loop.body += "        float x[8];\n        fz_load<" + elem + ", 8>(" + a.ptr + ", " +
                 offsetExpr(a, "0", "m", "k") + ", x);\n";
    loop.body += "        #pragma unroll\n        for (int j = 0; j < " + str(J) + "; ++j)\n"
                 "          #pragma unroll\n          for (int i = 0; i < 8; ++i) acc[j][m] = "
                 "fmaf(x[i], w[j][i], acc[j][m]);\n      }\n";
    src += gemvWeightLoop(loop);
    // Every lane ends with every sum; lane m takes row m.
    src += "    float fz_v[" + str(J) + "] = {};\n    int fz_em = -1;\n";
    src += "    #pragma unroll\n    for (int m = 0; m < " + str(M) + "; ++m)\n      #pragma unroll\n"
           "      for (int j = 0; j < " + str(J) + "; ++j) {\n"
           "        const float t = fz_warp_reduce<32>(acc[j][m], fz_sum_op());\n"
           "        if (lane == m) { fz_v[j] = t; fz_em = m; }\n      }\n";
    src += "    if (fz_em >= 0) {\n      const int fz_en = fz_n0;\n";
    src += segmentEpilogue(s, "fz_v", "      ");
    src += "    }\n  }\n";
  }
  spec.text.body = src;
  spec.grid = static_cast<unsigned>((rows + kWarps - 1) / kWarps);
  spec.block = kWarps * 32;
  spec.gemmConfig = "gemv c1 w8";
  spec.schedule = "sibling GEMV " + str(M) + "x" + str(rows) + "x" + str(K) + " (" + describe() +
                  "): A read once, a warp per weight row";
  return spec;
}

} // namespace fusec::codegen::detail
