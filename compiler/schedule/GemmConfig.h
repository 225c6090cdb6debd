//===- GemmConfig.h - tile shapes of fusec's tensor-core GEMM ------------===//
//
// A GEMM kernel is one configuration of the template in GemmKernel.cpp: the
// block tile (bm x bn, stepping bk along K), the warp tile, the number of
// shared-memory stages in flight, and a split of K over several blocks for
// shapes with too few output tiles to fill the GPU (decode: M = 1 ... 64).
// Heuristics pick one per shape; `--autotune` times the candidates instead
// and keeps the winner (runtime/TuningCache).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/cost/DeviceProfile.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fusec::codegen {

struct GemmShape {
  int64_t m = 1, n = 1, k = 1, batch = 1;
};

namespace detail {
/// The tensor-core dot-product body (TensorCoreGemv.cpp): `m` rows of A
/// (9-64) against `n` rows of each of `weights` K-contiguous weights, a warp
/// per 16 x `tiles` rows and slice of K, `warps` per block, `split` blocks
/// along grid.y over K.
struct TcGemvShape {
  int64_t m = 0, n = 0, k = 0;
  int tiles = 2, warps = 4, split = 1, weights = 1;
  int stages = 4;  ///< cp.async stages of a warp, 32 k each
  /// With split > 1: scratch holds `counterBytes` of counters (one per
  /// block), then the partials, `partStride` floats per block and split.
  int64_t counterBytes = 0, partStride = 0;
  /// Dynamic shared memory of the block's stages (fz_dyn): per warp and
  /// stage, a 512-byte piece per 8 weight rows and per 8 rows of A.
  int64_t stageBytes() const {
    return (int64_t)warps * stages * (weights * tiles * 2 + (m + 7) / 8) * 512;
  }
  /// Floats of the block's shared-memory sums (fz_red).
  int64_t smemFloats() const { return (int64_t)warps * weights * ((m + 7) / 8 * 8) * 16 * tiles; }
  /// Output elements of a block, times the weights (one partial each).
  int64_t elements() const { return 16 * tiles * m * weights; }
  /// Blocks along x: one per 16 x `tiles` weight rows.
  int64_t blocks() const { return (n + 16 * tiles - 1) / (16 * tiles); }
  /// Whether a block's shared memory fits: the sums are static (48 KB at
  /// most), the stages dynamic, both within `smemPerBlock`.
  bool fits(int64_t smemPerBlock) const {
    return smemFloats() * 4 <= 48 * 1024 && stageBytes() + smemFloats() * 4 <= smemPerBlock;
  }
};
/// The Hopper dot-product kernel's shared memory (WgmmaGemv.cpp) for `m`
/// rows of A, `rows` weight rows a cluster and `stages` TMA stages.
struct WgvShape {
  int64_t m = 0;
  int rows = 64, stages = 16;
  /// Static: the halves' sums (fz_own, fz_recv, pitch rows + 4) and the
  /// stages' barriers, as ptxas lays them out: rounded up to 1 KB ahead of
  /// the 1024-aligned dynamic part (9 x 7680 -> 4096 at 13 stages takes 6144
  /// bytes, not the 4960 of the sums alone).
  int64_t staticBytes() const {
    return (2 * ((m + 1) / 2) * (rows + 4) * 4 + 16 * stages + 1023) / 1024 * 1024;
  }
  /// A stage: A's box (m rows of 128 bytes, rounded up to 1 KB), then the
  /// weights' box.
  int64_t aBytes() const { return (m * 128 + 1023) / 1024 * 1024; }
  int64_t stageBytes() const { return aBytes() + int64_t(rows) * 128; }
  /// wgmma reads 64 rows of A: past m they are the weights or the next
  /// stage (accumulator rows nobody stores), past the last stage this slack.
  int64_t slackBytes() const { return std::max<int64_t>(0, 64 * 128 - stageBytes()); }
  /// Dynamic: the stages, the slack and 1 KB to align the first stage.
  int64_t dynamicBytes() const { return stageBytes() * stages + slackBytes() + 1024; }
  bool fits(int64_t smemPerBlock) const {
    return staticBytes() <= 48 * 1024 && staticBytes() + dynamicBytes() <= smemPerBlock;
  }
  /// Weight boxes requested before the wait for the kernel ahead: half the
  /// stages: fewer leave less of the next layer streaming under this one's
  /// tail, more hold up A's first box, which queues behind them
  /// (docs/matmul.md, "How a group runs").
  int earlyBoxes() const { return std::max(1, stages / 2); }
};
} // namespace detail

struct GemmConfig {
  int bm = 128, bn = 128, bk = 32;  ///< block tile
  int wm = 64, wn = 32;             ///< warp tile (multiples of 16 x 16)
  int stages = 4;                   ///< shared-memory pipeline depth
  int splitK = 1;                   ///< blocks sharing one output tile along K
  /// M <= 8: no tensor cores, each warp a dot product of `gemvCols` weight
  /// rows with every row of A, `gemvWarps` warps per block (GemmKernel.cpp).
  bool gemv = false;
  int gemvCols = 2, gemvWarps = 8;
  /// M 9-64 ("gemv t2 w8 k1 s4"): tensor cores, each warp 16 x `gemvTiles`
  /// weight rows over a slice of K, the block's `gemvWarps` warps splitting
  /// K, `gemvSplit` blocks along K and `stages` cp.async stages per warp
  /// (TensorCoreGemv.cpp). 0 for the form above.
  int gemvTiles = 0, gemvSplit = 1;
  /// Hopper (sm_90a): TMA loads by a producer warpgroup, one consumer
  /// warpgroup per 64 rows of the tile issuing wgmma (WgmmaGemm.cpp).
  bool wgmma = false;
  /// With wgmma: two consumers taking whole tiles in turn ("ping-pong"), one
  /// applying its epilogue while the other multiplies; else both share each
  /// tile, 64 rows each ("cooperative").
  bool pingpong = false;
  /// With wgmma (cooperative): blocks per cluster along M. The blocks of a
  /// cluster share one column of B tiles, each loading 1 / cluster of it and
  /// the TMA multicasting it to all, so L2 serves B once per cluster.
  int cluster = 1;
  /// Hopper, 9-64 rows ("wgv r64 s16", WgmmaGemv.cpp): a cluster of two
  /// blocks per `wgvRows` weight rows, one K half each, the weights and A
  /// through the TMA into `stages` stages, one consumer warpgroup issuing
  /// wgmma (at 64 weight rows they are the 64-row operand and A's rows N,
  /// otherwise A is the 64-row operand and the weight rows N), one producer
  /// warp.
  bool wgv = false;
  int wgvRows = 64;
  int threads() const {
    return wgv     ? 160
           : gemv  ? gemvWarps * 32
           : wgmma ? ((pingpong ? 2 : bm / 64) + 1) * 128
                   : (bm / wm) * (bn / wn) * 32;
  }
  /// "128x128x32 w64x32 s4 k1", "wg 128x256x64 s4", "wg 128x256x64 s4 c2",
  /// "wg 128x128x64 s6 pp", "gemv c2 w8", "gemv t2 w8 k1 s4" or
  /// "wgv r64 s16", also a tuning-cache value.
  std::string str() const;
  static bool parse(const std::string &s, GemmConfig &out);
};

/// The tensor-core GEMV's (tiles per warp, stages) for blocks of 8 warps,
/// best first (GemmConfig.cpp says how they are ranked); empty where none
/// fits the GPU's shared memory.
std::vector<std::pair<int, int>> tensorCoreGemvTiles(const GemmShape &s, const DeviceProfile &p);

/// The configurations worth timing for a shape, the heuristic's choice first.
/// `hopper`: the shape can take the wgmma kernel (sm_90a, one matrix,
/// K-contiguous 16-byte aligned operands; see generateGemm).
std::vector<GemmConfig> gemmCandidates(const GemmShape &s, const DeviceProfile &p,
                                       bool hopper = false);

} // namespace fusec::codegen
