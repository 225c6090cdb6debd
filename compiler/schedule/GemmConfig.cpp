//===- GemmConfig.cpp - tile shapes of fusec's tensor-core GEMM ----------===//
#include "compiler/schedule/GemmConfig.h"

#include <algorithm>
#include <cstdio>

namespace fusec::codegen {

std::string GemmConfig::str() const {
  char buf[64];
  if (wgv) {
    std::snprintf(buf, sizeof buf, "wgv r%d s%d", wgvRows, stages);
    return buf;
  }
  if (gemv && gemvTiles > 0) {
    std::snprintf(buf, sizeof buf, "gemv t%d w%d k%d s%d", gemvTiles, gemvWarps, gemvSplit,
                  stages);
    return buf;
  }
  if (gemv) {
    std::snprintf(buf, sizeof buf, "gemv c%d w%d", gemvCols, gemvWarps);
    return buf;
  }
  if (wgmma) {
    std::snprintf(buf, sizeof buf, "wg %dx%dx%d s%d%s", bm, bn, bk, stages, pingpong ? " pp" : "");
    std::string out = buf;
    if (cluster > 1)
      out += " c" + std::to_string(cluster);
    return out;
  }
  std::snprintf(buf, sizeof buf, "%dx%dx%d w%dx%d s%d k%d", bm, bn, bk, wm, wn, stages, splitK);
  return buf;
}

bool GemmConfig::parse(const std::string &s, GemmConfig &c) {
  GemmConfig r;
  int end = 0;
  if (std::sscanf(s.c_str(), "wgv r%d s%d%n", &r.wgvRows, &r.stages, &end) == 2) {
    // Weight rows are wgmma's N (or, at 64, its 64-row operand): a multiple
    // of 8, at most 128 (the accumulators' registers); stages of 64 k.
    r.wgv = true;
    bool ok = end == (int)s.size() && r.wgvRows >= 8 && r.wgvRows <= 128 && r.wgvRows % 8 == 0 &&
              r.stages >= 2 && r.stages <= 16;
    if (ok)
      c = r;
    return ok;
  }
  r = GemmConfig();
  if (std::sscanf(s.c_str(), "gemv t%d w%d k%d s%d", &r.gemvTiles, &r.gemvWarps, &r.gemvSplit,
                  &r.stages) == 4) {
    r.gemv = true;
    r.gemvCols = 1;
    bool ok = r.gemvTiles >= 1 && r.gemvTiles <= 4 && r.gemvWarps >= 1 && r.gemvWarps <= 16 &&
              r.gemvSplit >= 1 && r.gemvSplit <= 64 && r.stages >= 2 && r.stages <= 16;
    if (ok)
      c = r;
    return ok;
  }
  r = GemmConfig();
  if (std::sscanf(s.c_str(), "gemv c%d w%d", &r.gemvCols, &r.gemvWarps) == 2) {
    r.gemv = true;
    bool ok = r.gemvCols >= 1 && r.gemvCols <= 4 && r.gemvWarps >= 1 && r.gemvWarps <= 32;
    if (ok)
      c = r;
    return ok;
  }
  int used = 0;
  if (std::sscanf(s.c_str(), "wg %dx%dx%d s%d%n", &r.bm, &r.bn, &r.bk, &r.stages, &used) == 4) {
    // One optional word after the stages: "pp" (ping-pong) or "c<n>" (cluster).
    std::string rest = s.substr(used);
    int more = 0;
    if (std::sscanf(rest.c_str(), " c%d%n", &r.cluster, &more) == 1)
      rest = rest.substr(more);
    else if (rest.rfind(" pp", 0) == 0) {
      r.pingpong = true;
      rest = rest.substr(3);
    }
    bool tail = rest.find_first_not_of(' ') == std::string::npos;
    // Cooperative: consumers of 64 rows each; N a multiple of 16 up to 256
    // (one wgmma). Ping-pong: one consumer holds a whole tile (bm / 64
    // wgmmas of bn/2 registers each, at most 128). K steps of 64 (one
    // 128-byte swizzle span of 16-bit elements).
    r.wgmma = true;
    r.wm = 64;
    r.wn = r.bn;
    bool ok = (r.bm == 64 || r.bm == 128) && r.bn >= 16 && r.bn <= 256 && r.bn % 16 == 0 &&
              r.bk == 64 && r.stages >= 2 && r.stages <= 8 && tail &&
              (!r.pingpong || r.bm / 64 * r.bn / 2 <= 128) &&
              (r.cluster == 1 || (r.cluster == 2 && !r.pingpong && r.bn % 32 == 0));
    if (ok)
      c = r;
    return ok;
  }
  if (std::sscanf(s.c_str(), "%dx%dx%d w%dx%d s%d k%d", &r.bm, &r.bn, &r.bk, &r.wm, &r.wn,
                  &r.stages, &r.splitK) != 7)
    return false;
  // Bounds as well as shapes: a tuned entry is data read from disk (the
  // heuristic's splits reach SMs / tiles, 128 on an H100).
  bool ok = r.bm > 0 && r.bn > 0 && r.bk > 0 && r.wm > 0 && r.wn > 0 && r.bm <= 256 &&
            r.bn <= 256 && r.bk <= 128 && r.bm % r.wm == 0 && r.bn % r.wn == 0 &&
            r.wm % 16 == 0 && r.wn % 16 == 0 && r.bk % 16 == 0 && r.stages >= 2 &&
            r.stages <= 8 && r.splitK >= 1 && r.splitK <= 512 && r.threads() <= 1024;
  if (ok)
    c = r;
  return ok;
}

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Splits K until the blocks cover the GPU about twice, keeping >= 4 k-steps
/// of `bk` per block.
int splitFor(const GemmShape &s, const GemmConfig &c, const DeviceProfile &p) {
  int64_t tiles = ceilDiv(s.m, c.bm) * ceilDiv(s.n, c.bn) * s.batch;
  int split = 1;
  while (tiles * split * 2 <= 2 * p.smCount && ceilDiv(s.k, (int64_t)c.bk * split * 2) >= 4)
    split *= 2;
  return split;
}

GemmConfig skinny(const GemmShape &s, int bn, const DeviceProfile &p) {
  // Decode-sized M: the weights stream through once; one warp row, wide K steps.
  GemmConfig c;
  c.bm = s.m <= 16 ? 16 : s.m <= 32 ? 32 : 64;
  c.wm = c.bm;
  c.bn = bn;
  c.wn = 16;
  c.bk = 64;
  c.stages = 4;
  c.splitK = splitFor(s, c, p);
  return c;
}

/// The tensor-core dot-product kernel (9-64 rows), `split` blocks along K.
GemmConfig tensorCoreGemv(int tiles, int warps, int split, int stages) {
  GemmConfig c;
  c.gemv = true;
  c.gemvCols = 1;
  c.gemvTiles = tiles;
  c.gemvWarps = warps;
  c.gemvSplit = split;
  c.stages = stages;
  return c;
}

} // namespace

/// The tensor-core GEMV's tile counts (16 weight rows each per warp), best
/// first, each with the most stages (4 to 2) whose shared memory fits, for
/// blocks of 8 warps. Such a block takes most of an SM's shared memory, so
/// one runs per SM and the grid runs in ceil(blocks / SMs) waves; a wave's
/// time grows with the tiles and with A's copies beside them (ceil(M / 8)
/// pieces per step against 2 per tile, from L2: weighted 1/4). Ties go to
/// more tiles (fewer copies of A per weight byte). This ranks the H100's
/// timings at 32 rows (docs/matmul.md, "Tile configurations and autotuning").
std::vector<std::pair<int, int>> tensorCoreGemvTiles(const GemmShape &s, const DeviceProfile &p) {
  struct Option {
    int tiles, stages;
    double cost;
  };
  std::vector<Option> options;
  const int64_t pieces = ceilDiv(s.m, 8);
  for (int tiles = 4; tiles >= 1; --tiles)
    for (int stages = 4; stages >= 2; --stages) {
      detail::TcGemvShape t;
      t.m = s.m;
      t.n = s.n;
      t.k = s.k;
      t.tiles = tiles;
      t.warps = 8;
      t.stages = stages;
      if (!t.fits(p.smemPerBlock))
        continue;
      double waves = (double)ceilDiv(t.blocks(), std::max(1, p.smCount));
      options.push_back({tiles, stages, waves * (tiles + pieces / 8.0)});
      break;
    }
  std::stable_sort(options.begin(), options.end(),
                   [](const Option &a, const Option &b) { return a.cost < b.cost; });
  std::vector<std::pair<int, int>> out;
  for (const Option &o : options)
    out.push_back({o.tiles, o.stages});
  return out;
}

std::vector<GemmConfig> gemmCandidates(const GemmShape &s, const DeviceProfile &p,
                                       bool hopper) {
  std::vector<GemmConfig> out;
  if (s.m <= 8) {
    // A weight-streaming dot product per warp; tensor cores would idle on 1-8
    // rows. One weight row per warp is fastest on most Llama decode shapes.
    // Rows of K <= 128 (attention scores over the head dim) split a warp's
    // lanes among rows; four rows per lane group are fastest there
    // (docs/matmul.md, "Tile configurations and autotuning").
    auto shapes = s.k <= 128 ? std::vector<std::pair<int, int>>{{4, 4}, {2, 8}, {1, 8}}
                             : std::vector<std::pair<int, int>>{{1, 8}, {2, 8}, {4, 4}};
    for (auto [cols, warps] : shapes) {
      GemmConfig g;
      g.gemv = true;
      g.gemvCols = cols;
      g.gemvWarps = warps;
      out.push_back(g);
    }
  }
  if (s.m > 8 && s.m <= 64 && s.batch == 1) {
    // 9-64 rows: the weights stream into tensor cores through each warp's
    // cp.async stages. Eight warps per block splitting K, no split across
    // blocks (splitting K also shortens each warp's run of steps, and a split
    // over a cluster's blocks is as slow as through global partials;
    // docs/matmul.md, "Tile configurations and autotuning"); the tiles per
    // warp that fill the SMs' waves best.
    std::vector<std::pair<int, int>> tiling = tensorCoreGemvTiles(s, p);
    int tiles = tiling.empty() ? 1 : tiling[0].first;
    for (size_t i = 0; i < std::min<size_t>(2, tiling.size()); ++i)
      out.push_back(tensorCoreGemv(tiling[i].first, 8, 1, tiling[i].second));
    out.push_back(tensorCoreGemv(tiles, 4, 1, 6));
    out.push_back(tensorCoreGemv(tiles, 4, 2, 4));
    // Small enough for any GPU's shared memory (the A100's 163 KB, the L40S's 99).
    out.push_back(tensorCoreGemv(1, 4, 1, 2));
  }
  if (s.m <= 64) {
    // N <= 128 (probabilities @ V over the head dim): one tile covers N
    // (256 batches of 4 x 4097 @ 4097 x 128: 110.7 us against 148.3 for 64).
    if (s.n <= 128)
      out.push_back(skinny(s, 128, p));
    out.push_back(skinny(s, 64, p));
    if (s.n > 128)
      out.push_back(skinny(s, 128, p));
    out.push_back(skinny(s, 32, p));
    GemmConfig c = skinny(s, 64, p);
    c.splitK = std::max(1, c.splitK / 2);
    out.push_back(c);
    return out;
  }
  // Stepping 64 along K with 3 stages beats 32 with 4 on large shapes, and
  // 256 x 128 tiles of 8 warps of 64 x 64 are the fastest of those
  // (docs/matmul.md, "Tile configurations and autotuning").
  GemmConfig deep;
  deep.bk = 64;
  deep.stages = 3;
  GemmConfig big;  // bk 32, 4 stages
  GemmConfig wide = deep;
  wide.bn = 256;
  wide.wn = 64;
  GemmConfig tall = wide;
  std::swap(tall.bm, tall.bn);
  tall.wm = tall.wn = 64;
  GemmConfig small = big;
  small.bm = small.bn = 64;
  small.wm = small.wn = 32;
  // Few tiles: the smaller tile keeps the SMs busy.
  int64_t bigTiles = ceilDiv(s.m, 128) * ceilDiv(s.n, 128) * s.batch;
  if (bigTiles < p.smCount) {
    small.splitK = splitFor(s, small, p);
    out = {small, deep, big};
  } else if (ceilDiv(s.k, 64) <= 2) {
    // K of one or two steps (attention scores, K = head dim): the tile's loads,
    // products and stores hardly overlap inside a block, so two blocks per SM
    // of 128 x 128 beat one of 256 x 128 (docs/matmul.md, "Tile
    // configurations and autotuning").
    out = {deep, tall, wide, big, small};
  } else {
    out = {tall, wide, deep, big, small};
  }
  if (hopper) {
    // Hopper: wgmma tiles first, consumer warpgroups of 64 rows each. The
    // widest tile that still gives every SM a tile.
    auto wg = [](int bm, int bn, int stages, bool pingpong = false, int cluster = 1) {
      GemmConfig c;
      c.wgmma = true;
      c.pingpong = pingpong;
      c.cluster = cluster;
      c.bm = bm;
      c.bn = bn;
      c.bk = 64;
      c.wm = 64;
      c.wn = bn;
      c.stages = stages;
      return c;
    };
    if (ceilDiv(s.m, 128) * ceilDiv(s.n, 256) >= p.smCount)
      // Clusters of two sharing B tiles last: they halve the B tiles' L2
      // reads, but are no faster than single blocks on an H100
      // (docs/matmul.md, "Tile configurations and autotuning").
      // Three stages leave room for a residual's whole tile beside the
      // output's (TMA-loaded while the products run).
      out.insert(out.begin(), {wg(128, 256, 4), wg(128, 256, 3), wg(128, 128, 6, true),
                               wg(128, 128, 6), wg(128, 256, 4, false, 2)});
    else
      out.insert(out.begin(), {wg(128, 128, 6), wg(64, 128, 6)});
  }
  return out;
}

} // namespace fusec::codegen
