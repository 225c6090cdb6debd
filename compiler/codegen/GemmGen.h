//===- GemmGen.h - the matmul family's generator state (internal) ---------===//
//
// One matmul group being generated: its shape, operand layouts and tile
// configuration, with the pieces of source the kernels share (epilogues).
// The portable kernel is in GemmKernel.cpp, the Hopper one in WgmmaGemm.cpp,
// the dot-product kernel (M <= 8) in GemvKernel.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/schedule/GemmConfig.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/plan/KernelLaunch.h"
#include "compiler/schedule/RowStatsForm.h"
#include "compiler/schedule/StridedView.h"

#include <string>
#include <utility>
#include <vector>

namespace fusec::codegen::detail {

/// One operand as the kernel reads it: element (b, r, c) of rows x cols.
struct Operand {
  std::string ptr;            ///< "in0"
  MatrixLayoutView layout;    ///< rows x cols, ld, batch stride, offset
  bool kContiguous = true;    ///< K is the unit-stride dim
  bool vector = true;         ///< 16-byte copies are aligned
  int64_t tileRows = 0, tileCols = 0;  ///< shared-memory tile (padded cols)
  /// The matmul's operand value; `computed`: a prologue of the group computes
  /// it (no `ptr`), element by element as the kernel loads it.
  mlir::Value value;
  bool computed = false;
};

inline std::string offsetExpr(const Operand &o, const std::string &b, const std::string &r,
                       const std::string &c) {
  const MatrixLayoutView &l = o.layout;
  auto str = [](int64_t v) { return std::to_string(v); };
  std::string s = str(l.offset);
  if (l.batch > 1)
    s += " + (long long)" + b + " * " + str(l.batchStride);
  if (l.rowMajor)
    s += " + (long long)" + r + " * " + str(l.ld) + " + " + c;
  else
    s += " + (long long)" + c + " * " + str(l.ld) + " + " + r;
  return s;
}

/// The Hopper kernels' device helpers (TMA copies, mbarriers, wgmma fences;
/// WgmmaGemm.cpp), and `fz_wgmma(acc, descA, descB, accumulate)`: acc (64 x
/// n, fp32) += A (64 x 16) B^T (16 x n), both K-major and 128-byte swizzled.
extern const char *kHopperHelpers;
std::string wgmmaWrapper(int n, const std::string &elem);

/// One wgmma m64nNk16 with fp32 accumulators as a device function
/// `name(d, a, b, accumulate)`: d (64 x n) += A (64 x 16) B (16 x n), B a
/// 128-byte swizzled shared-memory tile, K-major or (`transposeB`) N-major;
/// A the same (a descriptor) or, `aInRegisters`, the thread's four 32-bit
/// registers of the mma.sync A fragment layout. `blocked`: d is
/// `float[n / 8][4]`, one row of four per 8 columns (the mma.sync
/// accumulator layout), else `float[n / 2]`.
struct WgmmaCall {
  int n = 0;
  std::string elem, name = "fz_wgmma";
  bool aInRegisters = false, transposeB = false, blocked = false;
};
std::string wgmmaWrapper(const WgmmaCall &call);

/// "; 128 blocks for 132 SMs (one wave)": the tensor-core GEMV's grid against
/// the GPU's SMs, for the schedule line of 8-warp blocks (one per SM, as
/// tensorCoreGemvTiles assumes; smaller blocks may share an SM).
std::string tcGemvWaves(int64_t blocks, int smCount);

/// The body after the kernel's `lane` and `fz_n0` (the block's first weight
/// row): the products, the block's and the splits' sums, then for each
/// element (fz_em, fz_en) inside M and N with fz_vs[j] the product with
/// weight j, `epilogue` (at six spaces more than `indent`).
std::string tensorCoreGemvBody(const Operand &a, const std::vector<Operand> &weights,
                               const TcGemvShape &s, const std::string &elem,
                               const std::string &epilogue, const std::string &indent);

/// The K loop of the dot-product kernels (GemvKernel.cpp). A lane's steps
/// are k = kStart + i * laneStep below `k`; per step it reads one 16-byte
/// vector (8 elements at k) of each weight, given as (pointer, element
/// offset in terms of `k`), and runs `body` (at `indent` + 2) with `k` and
/// `float w[weights][8]` defined. `allInFlight` (gemvAllInFlight): every
/// step's weights are loaded before the first is used.
struct GemvLoop {
  int64_t k = 0, laneStep = 0;
  std::string kStart, elem;
  std::vector<std::pair<std::string, std::string>> weights;
  std::string body, indent;
  bool allInFlight = false;
};
std::string gemvWeightLoop(const GemvLoop &loop);
/// The loop that loads each step's `vectors` weight vectors as it uses them
/// (`loads`: code at `indent` + 2 that fills w[][] for `k`); gemvWeightLoop's
/// form when not all are in flight, and the one for computed weights.
std::string gemvPlainLoop(const GemvLoop &loop, int vectors, const std::string &loads);
/// Whether a lane's steps along K (whole steps, `weights` vectors each)
/// fit the 16 vectors in flight, with the grid's `warps` resident at once
/// at the registers that takes.
bool gemvAllInFlight(int64_t k, int64_t laneStep, int weights, int64_t warps, int smCount);

struct GemmGen {
  FusionOp fusion;
  MatmulOp mm;
  /// A second product of the same A and shape (a dual product on Hopper:
  /// SwiGLU's up beside its gate), null for one; its weight is b2.
  MatmulOp mm2;
  /// Sibling products of one A side by side along N (Q/K/V), empty for one
  /// product: a tile belongs to one part (parts[0] is mm), whose weight it
  /// loads and whose output it stores, each through its own tensor map.
  struct Part {
    Operand b;          ///< its weight (K-contiguous)
    unsigned bArg = 0;  ///< the block argument of its weight
    unsigned out = 0;   ///< which of the group's results it is
    int64_t n = 0;      ///< the part's N
  };
  std::vector<Part> parts;
  GemmConfig cfg;
  GemmShape shape;  ///< with parts, N is theirs summed
  std::vector<int64_t> batchShape;
  Operand a, b, b2;  ///< a: M x K, b (and b2): K x N
  std::string elem;  ///< storage type of A and B
  int threads = 0;
  /// Shared-memory bytes of the operand stages; the portable kernel stages its
  /// output tiles there after the main loop when they fit (stagedStore).
  int64_t stageBytes = 0;
  bool stagedStore = false;
  /// Hopper: the output goes to shared memory in 64 x 64 boxes, 128-byte
  /// swizzled as the TMA stores them (element fz_sr, fz_sc of the box at
  /// fz_out0_tile), and the TMA writes it to global memory (tmaStoreApplies).
  bool tmaStore = false;
  /// With tmaStore: boxes per consumer (2, or one per 64 columns of the tile
  /// when they fit), and the block argument of an [M, N] epilogue input the
  /// TMA loads into the output's boxes ahead of the epilogue (a residual),
  /// -1 for none (always without tmaStore): the epilogue reads it there and
  /// writes the result over it.
  int tmaSlots = 2;
  int tmaResidual = -1;
  /// One 64 x 64 box of 16-bit elements, and the shared memory of `slots`
  /// boxes for every consumer (what tmaEpilogue lays out after the stages).
  static constexpr int64_t kBoxBytes = 64 * 64 * 2;
  /// Element (fz_sr, fz_sc) of a box: 16-byte column chunks swap places by
  /// the row's position in its 8-row group (the TMA's 128-byte swizzle).
  static constexpr const char *kBoxedIndex =
      "fz_sr * 64 + (((fz_sc >> 3) ^ (fz_sr & 7)) << 3) + (fz_sc & 7)";
  int64_t boxesBytes(int slots) const { return cfg.bm / 64 * slots * kBoxBytes; }
  /// Streamed row statistics (RowStatsForm.h): the portable kernel's
  /// epilogue reduces each tile's rows to a (max, sum of exponentials) pair
  /// instead of storing the product, and the last tile of each row tile
  /// merges the pairs and computes the group's results (rowStatsEpilogue).
  std::optional<RowStatsMatch> rowStats;
  /// Its scratch: a counter per row tile, then the pairs (maxima, then
  /// sums), one per row and tile column.
  int64_t rowStatsCounterBytes() const;
  int64_t rowStatsScratchBytes() const;
  /// Where the statistics epilogue finds a thread's accumulators and who
  /// takes part. A thread holds `slices` row slices (loop variable i) of
  /// two rows (h) and `pairs` column pairs (j, l); `acc`, `row`, `col` are
  /// the accumulator, its row and column in those variables, `tileRow` its
  /// row within the tile. `warpsN` warps side by side along N combine their
  /// rows' pairs in shared memory (`warpN`: this warp's place). The
  /// computing threads: `threads` of them, `thread` and `warp` their index
  /// from 0, `sync` their barrier, `leader` the first; `persistent`: the
  /// kernel goes on to its next tile after the merge (else it returns).
  struct RowStatsLayout {
    int slices = 1, pairs = 1, warpsN = 1, threads = 0;
    std::string acc, row, col, tileRow, warpN, thread, warp, sync, leader, indent;
    bool persistent = false;
  };
  std::string rowStatsEpilogue(const RowStatsLayout &layout);

  /// For a computed operand: the statements (at `indent`) computing its
  /// element at row `r`, column `c` of matrix fz_b, and in `value` the
  /// expression of that element (its compute type; callers store it as `elem`).
  std::string computedElement(const Operand &o, const std::string &r, const std::string &c,
                              const std::string &indent, std::string &value) const;
  /// Statements filling float `dst`[8] with elements (r + l, c) (`alongRows`)
  /// or (r, c + l) of operand `o`, l < 8: one 16-byte load, or its prologue
  /// computed with the inputs loaded as vectors where they allow.
  std::string operandVector(const Operand &o, const std::string &r, const std::string &c,
                            bool alongRows, const std::string &dst,
                            const std::string &indent) const;
  /// The copy of k-step `kt` into stage `st`, for one operand (mma.sync path).
  std::string loader(const Operand &o, bool isA) const;
  /// Fragment loads and MMAs of one 16-deep slice `kk` of stage `st`.
  std::string mmaStep() const;
  /// Whether the dot-product kernel computes a prologue's A once per block
  /// into shared memory (it fits kGemvStageBytes) rather than per warp.
  bool gemvStagesA() const;
  /// M <= 8: a warp per weight row(s), no tensor cores.
  KernelText gemvSource(int smCount);
  /// M 9-64 (cfg.gemvTiles > 0): the tensor-core dot-product kernel.
  KernelText tensorCoreGemvSource();
  TcGemvShape tcGemvShape() const;
  /// Weight rows a warp of gemvSource covers per column slot: 1, or more for
  /// rows of K <= 128 (the lanes split among rows).
  int gemvRowsPerWarpStep() const;
  /// Blocks along N of gemvSource's grid (one matrix of the batch each).
  int64_t gemvBlocks() const;
  /// The epilogue of one element (fz_em, fz_en) whose product is fz_v; its
  /// inputs read by `load` (a kernel that waits for the kernel ahead later
  /// than its first statement: fz_load1_after_wait).
  std::string scalarEpilogue(std::string *prefetch = nullptr, const char *load = "fz_load1");
  /// Epilogue of one accumulator pair: columns fz_en, fz_en + 1 of row fz_em
  /// (fz_acc2[0..1]), batch fz_b; fz_bi<d> the batch indices. With
  /// stagedStore the results go to the block's output tiles in shared memory.
  std::string epilogue();
  /// The epilogue of the accumulator pair (acc0, acc1) at row `em`, columns
  /// `en`, en + 1, guarded to the output (indented for a loop body); with a
  /// dual product, (second0, second1) is mm2's pair.
  std::string pairEpilogue(const std::string &em, const std::string &en, const std::string &acc0,
                           const std::string &acc1, const std::string &second0 = "",
                           const std::string &second1 = "");
  /// Row stride (elements) of output `o`'s tile in shared memory, and its offset.
  int64_t stagedStride(unsigned o);
  int64_t stagedOffset(unsigned o);
  /// Whether the wgmma kernel's output can leave through TMA stores: one
  /// 16-bit [M, N] result with 16-byte rows, and room for two 8 KB boxes per
  /// consumer beside the stages. Sets tmaSlots and tmaResidual.
  bool tmaStoreApplies(int64_t smemPerBlock);
  /// Whether every output tile fits in the stages' shared memory.
  bool stagingFits();
  /// The block's output tiles, from shared memory to global in 16-byte rows.
  std::string stagedCopyOut();
  /// Tile columns: over N, or each part's rounded up and summed.
  int64_t tilesN() const;
  /// A pointer to the tensor map `base` (fz_tmB, fz_tmO) of the tile's part:
  /// fz_tmB, fz_tmB2, ... chosen by fz_part.
  std::string partMap(const std::string &base) const;
  /// fz_m0, fz_n0 of output tile number `pid` (grouped tile order); with
  /// parts also fz_part and its width fz_nlim, fz_n0 counted within it.
  std::string tileOrder(const std::string &pid, const std::string &indent) const;
  /// fz_bi<d>: the domain's batch indices from the linear batch fz_b.
  std::string batchIndices(const std::string &indent) const;
  /// The portable kernel: mma.sync m16n8k16, cp.async pipeline (sm_80+).
  KernelText source();
  /// With tmaStore: the shared-memory address of the box of 64-column
  /// `chunk` (boxes start `boxesAt` bytes past fz_base), the TMA load of the
  /// residual's box for it, and the epilogue that ends the kernel.
  std::string tmaBox(const std::string &chunk, int64_t boxesAt) const;
  std::string residualLoad(const std::string &chunk, int64_t boxesAt) const;
  /// Whether this consumer's box of `chunk` has any element inside M and N.
  std::string boxInside(const std::string &chunk) const;
  std::string tmaEpilogue(int64_t boxesAt);
  /// The Hopper kernel: TMA loads, wgmma, a producer warpgroup (WgmmaGemm.cpp).
  KernelText hopperSource();
  /// The Hopper dot-product kernel for 9-64 rows (cfg.wgv; WgmmaGemv.cpp).
  KernelText wgmmaGemvSource();
  /// wgmmaGemvSource with 64 weight rows a cluster takes them as wgmma's
  /// 64-row operand and A's rows as N (else A is the 64-row operand, and
  /// the rows past M its wasted half).
  bool wgvWeightsA() const { return cfg.wgvRows == 64; }
  WgvShape wgvShape() const { return {shape.m, cfg.wgvRows, cfg.stages}; }
  /// Its clusters, `wgvRows` weight rows each (every part's N a multiple).
  int64_t wgvClusters() const { return unitsAlongN(cfg.wgvRows); }
  /// Blocks of `unit` columns along N: of N, or each part's one after the
  /// other (tile columns, the dot-product kernel's clusters).
  int64_t unitsAlongN(int64_t unit) const;
  /// With parts, which one the `unit`-wide block `index` (a C expression)
  /// lies in, its first block and its N, as chained C conditionals.
  struct PartOf {
    std::string part, first, width;
  };
  PartOf partOf(const std::string &index, int64_t unit) const;
};

} // namespace fusec::codegen::detail
