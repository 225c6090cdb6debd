//===- ColumnReductionKernel.cpp - reductions over the outer dims ---------===//
//
// For reductions whose kept dims are last and contiguous (softmax over dim
// 0, a mean over the middle dim): a block owns a tile of TX x VEC adjacent columns and
// TY threads walk down the reduced rows, each thread keeping VEC column
// accumulators. Partial results meet in shared memory. Every phase re-reads
// its tile; tiles are narrow (32 bytes of a row) so that the tiles in flight
// are meant to stay in L2 between phases (on an H100 they mostly do not: 30%
// of copy bandwidth for softmax over dim 0; see CooperativeColumnKernel.cpp).
//
// A group that reads its data once anyway (one phase, outputs per column: a
// plain sum or max over the leading or middle dims) takes this kernel with
// 256-byte tiles, one 16-byte load per row, and one block per tile. Where
// the tiles alone would leave the device less than half full of threads, the
// reduced rows are split over blocks too, and the tile's last block combines
// their partials. Half the device's threads, each streaming a long run of
// rows, read faster than a full device of short runs (docs/reductions.md,
// "Last dim kept: column kernels").
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/ElementEmitter.h"
#include "compiler/codegen/KernelSpec.h"
#include "compiler/codegen/LastBlock.h"
#include "compiler/codegen/ReductionPhases.h"
#include "compiler/codegen/ScalarOps.h"
#include "compiler/shape/ShapeRules.h"

#include <algorithm>
#include <map>

using namespace mlir;

namespace fusec::codegen::detail {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

struct ColumnPlan {
  FusionOp fusion;
  std::vector<int64_t> domain, reduced, kept;
  int64_t rr = 1, kc = 1, vec = 1, tx = 1, ty = 128;
  /// The reduced rows split over blocks (blockIdx.y), `chunk` rows each; the
  /// partials of a tile meet in the scratch (see generateColumnReduction).
  int64_t splits = 1, chunk = 0, tiles = 1, width = 1, reductions = 0;
  /// One pass over the data (readsOnce): vector loads, one block per tile.
  bool stream = false;
  int last = 0;
  std::map<Operation *, std::string> reductionVars;
  int counter = 0;

  ElementEmitter emitter() {
    ElementEmitter e(fusion, columnIndexNames(domain.size(), reduced, kept), "          ");
    e.reduced = [this](Operation *op) { return reductionVars.at(op) + "[l]"; };
    return e;
  }

  /// Indices of the reduced dims from "rr" and of the kept dims from "kb".
  std::string indices(bool reducedDims, const std::string &in) const {
    return reducedDims ? reducedIndexDecls(domain, reduced, "rr", in)
                       : keptIndexDecls(domain, kept, last, in);
  }

  std::string rowLoop(const std::string &lanes, const std::string &post,
                      const std::string &pre = "") const {
    std::string from = "ty", to = str(rr);
    if (splits > 1) {
      from = "(fz_idx)blockIdx.y * " + str(chunk) + " + ty";
      to = "min((fz_idx)" + str(rr) + ", ((fz_idx)blockIdx.y + 1) * " + str(chunk) + ")";
    }
    std::string s = "    #pragma unroll 4\n    for (fz_idx rr = " + from + "; rr < " + to +
                    "; rr += " + str(ty) + ") {\n" + indices(true, "      ") + pre;
    s += "      #pragma unroll\n      for (int l = 0; l < " + str(vec) + "; ++l) {\n";
    s += "        const fz_idx k" + str(last) + " = kl + l;\n" + lanes + "      }\n" + post +
         "    }\n";
    return s;
  }

  std::string phase(const std::vector<Operation *> &reds) {
    ElementEmitter e = emitter();
    // Streamed (one pass): a row's VEC columns as one vector load per input.
    HoistedLoads hoist{last, vec, "kl", "      "};
    if (stream)
      e.load = [&hoist](ElementEmitter &em, BlockArgument arg, const Index &idx) {
        return hoist.load(em, arg, idx);
      };
    std::string head, lanes, tail, combine;
    for (Operation *op : reds) {
      ReductionRule rule = reductionRule(op);
      std::string acc = "acc" + str(counter++);
      head += "    " + rule.accType + " " + acc + "[" + str(vec) + "];\n    for (int l = 0; l < " +
              str(vec) + "; ++l) " + acc + "[l] = " + rule.identity + ";\n";
      std::string v = e.emit(op->getOperand(0), ElementEmitter::identity(domain.size()));
      lanes += e.takeCode() + "          " + acc + "[l] = " + rule.functor + "(" + acc + "[l], (" +
               rule.accType + ")" + v + ");\n";
      // Tree reduction over the TY threads of each column, in shared memory.
      std::string smem = rule.accType == "float" ? "fz_cf" : "fz_cl";
      std::string name = "red" + str(counter++);
      std::string type = computeType(dtypeOf(op->getResult(0)));
      tail += "    __syncthreads();\n    for (int l = 0; l < " + str(vec) + "; ++l) " + smem +
              "[ty][tx * " + str(vec) + " + l] = " + acc + "[l];\n";
      tail += "    for (int half = " + str(ty / 2) + "; half > 0; half >>= 1) {\n"
              "      __syncthreads();\n      if (ty < half)\n        for (int l = 0; l < " +
              str(vec) + "; ++l) " + smem + "[ty][tx * " + str(vec) + " + l] = " + rule.functor +
              "(" + smem + "[ty][tx * " + str(vec) + " + l], " + smem + "[ty + half][tx * " +
              str(vec) + " + l]);\n    }\n    __syncthreads();\n";
      tail += "    " + type + " " + name + "[" + str(vec) + "];\n";
      std::string value = smem + "[0][tx * " + str(vec) + " + l]";
      auto result = [&](const std::string &v) {  // a mean divides the total
        return "(" + type + ")(" + v + (rule.isMean ? " / " + str(rr) + ".f" : "") + ");\n";
      };
      if (splits > 1) {
        // This block's partial, in its split's slot of the reduction's plane.
        tail += "    if (ty == 0)\n      for (int l = 0; l < " + str(vec) + "; ++l) " +
                part(rule.accType, reductions, "blockIdx.y") + " = " + value + ";\n";
        combine += "      for (int l = 0; l < " + str(vec) + "; ++l) {\n        " + rule.accType +
                   " a = " + rule.identity + ";\n        #pragma unroll" + (splits > 16 ? " 16" : "") +
                   "\n        for (int sp = 0; sp < " +
                   str(splits) + "; ++sp)\n          a = " + rule.functor + "(a, __ldcg(&" +
                   part(rule.accType, reductions, "sp") + "));\n        " + name + "[l] = " +
                   result("a") + "      }\n";
        ++reductions;
      } else {
        tail += "    for (int l = 0; l < " + str(vec) + "; ++l) " + name + "[l] = " +
                result(value);
      }
      reductionVars[op] = name;
    }
    if (splits > 1) {
      // The tile's last block (a counter per tile) combines the partials in
      // split order: the same result whichever block finishes last. Unrolled,
      // so a thread's loads of the splits are in flight together (one after
      // another, 64 splits take 17 us where the kernel reads 8 MB).
      tail += lastBlockHandshake("    ", "reinterpret_cast<unsigned *>(fz_scratch) + tile",
                                 str(splits) + "u", "continue;");
      tail += "    if (ty == 0) {\n" + combine + "    }\n";
    }
    return head + rowLoop(lanes, "", hoist.pre) + tail;
  }

  /// Slot `split` of reduction `j`'s partials for this thread's column l:
  /// planes of 8-byte slots, [reduction][tile][split][column of the tile].
  std::string part(const std::string &type, int64_t j, const std::string &split) const {
    return "reinterpret_cast<" + type + " *>(reinterpret_cast<long long *>(fz_scratch + " +
           str(counterBytes()) + ") + ((" + str(j * tiles) + "LL + tile) * " + str(splits) +
           " + " + split + ") * " + str(width) + " + tx * " + str(vec) + " + l)[0]";
  }
  int64_t scratchBytes() const {
    return counterBytes() + reductions * tiles * splits * width * 8;
  }
  int64_t counterBytes() const { return 256 * ((tiles * 4 + 255) / 256); }

  std::string outputs() {
    ColumnOutputCode c = columnOutputs(
        fusion, [this] { return emitter(); }, domain, reduced, last, vec);
    std::string s;
    if (!c.lanes.empty()) {
      std::string loop = rowLoop(c.lanes, c.post);
      // Declarations go inside the row loop, before the lane loop.
      size_t at = loop.find("      #pragma unroll\n");
      loop.insert(at, c.decls);
      s += loop;
    }
    if (!c.perColumn.empty())
      s += "    if (active && ty == 0) {\n" + c.perColumn + "    }\n";
    return s;
  }
};

} // namespace

llvm::Expected<KernelSpec> generateColumnReduction(FusionOp fusion,
                                                   const DeviceProfile &profile,
                                                   int64_t maxSplits) {
  ColumnPlan p;
  p.fusion = fusion;
  ReductionDomain rd = takeColumnDomain(p, fusion);
  // Tiles of 64 bytes per row and two blocks per SM read best
  // (docs/reductions.md, "Last dim kept: column kernels"). This is the fallback when
  // the cooperative kernel's chunk does not fit on chip: it re-reads per phase.
  ColumnTile tile = columnTile(fusion, rd);
  p.vec = tile.vec;
  p.tx = tile.tx;
  std::map<int, std::vector<Operation *>> byLevel = reductionPhases(fusion);
  bool intAcc = false;
  for (auto &[l, reds] : byLevel)
    for (Operation *op : reds)
      intAcc |= reductionRule(op).accType != "float";
  // Halves the vector until `columns` x vec accumulators (4 or 4 + 8 bytes)
  // fit `smem` bytes of the tree's shared memory.
  auto fitVec = [&](int64_t columns, int64_t smem) {
    while (p.vec > 1 && columns * p.vec * (intAcc ? 12 : 4) > smem)
      p.vec /= 2;
  };
  auto narrowToKept = [&] {
    while (p.tx > 1 && p.tx * p.vec > p.kc)
      p.tx /= 2;
  };
  p.stream = readsOnce(fusion);
  if (p.stream) {
    // One pass over the data: tiles of 256 bytes per row (whole DRAM runs),
    // leaving room for the split's flag under the 48 KB static limit.
    fitVec(256, 48 * 1024 - 64);
    p.tx = std::max<int64_t>(1, 256 / (p.vec * maxElementBytes(fusion)));
    narrowToKept();
  }
  // A few rows (a max over a leading dim of 3) re-read per phase: each
  // thread walks them all, none idle and no tree, one block per tile. With
  // eight threads down a tile of 3 rows, five idled and 264 blocks looped
  // over 8193 tiles (15.9 us against 5.2 predicted).
  const bool fewRows = !p.stream && p.rr <= 8;
  if (fewRows) {
    p.tx = 256;
    fitVec(p.tx, 40 * 1024);
    narrowToKept();
  }
  p.width = p.tx * p.vec;
  p.tiles = (p.kc + p.width - 1) / p.width;
  // Threads per block: 256, or 128 for a stream whose tiles alone would fill
  // more than half the device with 256 (the same threads then walk twice the
  // rows: mean pooling's 1024 tiles run 53.7 us at 256 and 49.6 at 128).
  const int64_t sms = std::max(profile.smCount, 1);
  int64_t threads = std::max<int64_t>(p.stream && p.tiles > sms * 4 ? 128 : 256, p.tx);
  if (fewRows)
    threads = p.tx;
  p.ty = threads / p.tx;
  if (p.stream) {
    // Split the rows until the grid holds half the device's threads (2048
    // per SM), not less than 8 rows per thread.
    constexpr int64_t kMinRowsPerThread = 8;
    int64_t target = sms * 1024 / threads;
    p.splits = std::min(target / p.tiles, p.rr / (p.ty * kMinRowsPerThread));
    p.splits = std::max<int64_t>(1, std::min<int64_t>(p.splits, 65535));
    p.chunk = (p.rr + p.splits - 1) / p.splits;
    p.chunk = (p.chunk + p.ty - 1) / p.ty * p.ty;  // whole rounds of the block's rows
    p.splits = (p.rr + p.chunk - 1) / p.chunk;     // none left empty
    if (maxSplits > 0 && p.splits > maxSplits)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "rows split into more than %d pieces", (int)maxSplits);
  }

  KernelSpec spec;
  spec.name = fusion->getAttrOfType<StringAttr>("name").str();
  spec.family = "column_reduction";
  std::string body;
  for (auto &[l, reds] : byLevel)
    body += "    // phase " + str(l) + "\n" + p.phase(reds);
  body += "    // outputs\n" + p.outputs();
  bool scratch = p.splits > 1;
  // A stream's grid (half the device's threads, or the tiles alone where
  // those are more) must be resident at once: 1024 threads' worth of blocks
  // per SM, at most 64 registers a thread (32 made the split kernels spill).
  std::string bounds = str(threads) + (p.stream ? ", " + str(1024 / threads) : "");
  spec.text.qualifiers = "__launch_bounds__(" + bounds + ")";
  spec.text.params = parameters(fusion);
  if (scratch)
    spec.text.params.push_back(kScratchParam);
  spec.text.staticShared = true;
  std::string src = "  typedef " + std::string(indexType(fusion)) + " fz_idx;\n";
  src += "  __shared__ float fz_cf[" + str(p.ty) + "][" + str(p.width) + "];\n";
  if (scratch)
    src += "  __shared__ bool fz_last;\n";
  if (intAcc)
    src += "  __shared__ long long fz_cl[" + str(p.ty) + "][" + str(p.width) + "];\n";
  src += "  const int tx = threadIdx.x % " + str(p.tx) + ", ty = threadIdx.x / " + str(p.tx) +
         ";\n";
  src += "  for (fz_idx tile = blockIdx.x; tile < " + str(p.tiles) + "; tile += gridDim.x) {\n";
  src += "    const fz_idx kbase = (tile * " + str(p.tx) + " + tx) * " + str(p.vec) + ";\n";
  src += "    const bool active = kbase < " + str(p.kc) + ";\n";
  src += "    const fz_idx kb = active ? kbase : 0;  // compute on a valid column, store nothing\n";
  src += p.indices(false, "    ");
  src += body;
  src += "  }\n";

  // Stream: one block per (tile, split), no loop. Otherwise tiles of 64 bytes
  // per row and two blocks per SM, which read best (docs/reductions.md, "Last
  // dim kept: column kernels"); that form is the fallback when the cooperative
  // kernel's chunk does not fit on chip, and re-reads the data per phase.
  int64_t cap = p.stream || fewRows ? p.tiles : sms * 2;
  spec.grid = static_cast<unsigned>(std::max<int64_t>(1, std::min(p.tiles, cap)));
  spec.block = static_cast<unsigned>(threads);
  if (scratch) {
    spec.gridY = static_cast<unsigned>(p.splits);
    spec.scratchBytes = static_cast<unsigned>(p.scratchBytes());
    spec.scratchZeroOnce = static_cast<unsigned>(p.counterBytes());
  }
  spec.text.body = src;
  spec.schedule = std::to_string(p.rr) + " reduced x " + std::to_string(p.kc) +
                  " kept; tiles of " + str(p.width) + " columns (" + str(p.tx) + " x vec " +
                  str(p.vec) + "), " + str(p.ty) + " threads down each; " +
                  str(spec.grid) + " blocks" +
                  (scratch ? " x " + str(p.splits) + " splits of " + str(p.chunk) +
                                 " rows (the tile's last block combines their partials)"
                           : "");
  return spec;
}

} // namespace fusec::codegen::detail
