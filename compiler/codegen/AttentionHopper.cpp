//===- AttentionHopper.cpp - the attention kernel on Hopper: TMA + wgmma --===//
//
// The attention kernel's Hopper form (sm_90a, head dims 64 and 128;
// attentionTiles in schedule/AttentionForm.h), the techniques of
// FlashAttention-3 written from its paper: a block of three warpgroups owns
// 128 query rows. Warpgroup 0's first thread loads Q and the tiles of 128
// keys and values by the TMA (3-D tensor maps, a matrix per batch entry,
// 128-byte swizzled boxes as wgmma reads them, zeros past the keys), each
// into a free buffer (an "empty" barrier per buffer, which the 8 computing
// warps arrive at once their products have read it), each filling a "full"
// barrier. Warpgroups 1 and 2 own 64 query rows each: S = Q K^T is a wgmma
// chain with both operands in shared memory, O += P V one with P in
// registers (the first product's accumulators, packed to 16 bits) and V
// read N-major. In step t a warpgroup issues S(t) and P(t - 1) V(t - 1),
// waits for S(t) only, runs the softmax of tile t, and rescales the output
// once the second product is done with it; the two warpgroups take turns on
// the tensor cores (named barriers 1 and 2), so one's softmax runs while the
// other's products do. The accumulators keep the mma.sync layout, so the
// softmax and the store are the portable form's text (AttentionText.cpp).
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/AttentionText.h"
#include "compiler/codegen/GemmGen.h"

namespace fusec::codegen::detail {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

/// The Hopper form's register fences: the compiler keeps accumulators and
/// fragments in place, and orders its own reads and writes of them, around
/// the asynchronous products (which it cannot see read or write them).
/// fz_wg_desc_mn: an N-major B tile of 128-byte swizzled rows (one per
/// key), 64-column slabs `slab` bytes apart, 8-key groups 1024 bytes apart.
const char *kKeepHelpers = R"(template <int N> __device__ __forceinline__ void fz_keep(float (&r)[N][4]) {
  #pragma unroll
  for (int i = 0; i < N; ++i)
    asm volatile("" : "+f"(r[i][0]), "+f"(r[i][1]), "+f"(r[i][2]), "+f"(r[i][3]) :: "memory");
}
template <int N> __device__ __forceinline__ void fz_keep(unsigned (&r)[N][4]) {
  #pragma unroll
  for (int i = 0; i < N; ++i)
    asm volatile("" : "+r"(r[i][0]), "+r"(r[i][1]), "+r"(r[i][2]), "+r"(r[i][3]) :: "memory");
}
// Arrives at hardware barrier `id` of `n` threads without waiting.
__device__ __forceinline__ void fz_bar_arrive(int id, int n) {
  asm volatile("bar.arrive %0, %1;" :: "r"(id), "r"(n) : "memory");
}
// A box of the 3-D tensor map at (c0 = column, c1 = row, c2 = matrix).
__device__ __forceinline__ void fz_tma_3d(unsigned dst, const fz_tmap *map, unsigned bar, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3, %4}], [%5];"
               :: "r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
               : "memory");
}
__device__ __forceinline__ unsigned long long fz_wg_desc_mn(unsigned addr, unsigned slab) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)((slab >> 4) & 0x3FFF) << 16) |
         (64ull << 32) | (1ull << 62);
}
)";

} // namespace

std::string hopperAttentionBody(const AttentionText &a) {
  // The last query tiles first: under a causal mask they stream the most
  // keys, and the short ones fill in behind them.
  std::string s = a.item("(gridDim.x - 1 - blockIdx.x) * " + str(a.R), "blockIdx.y", "  ");
  auto pv = [&](const std::string &t) {
    // V is [keys, D] with D contiguous: the N-major B, 16 keys (2048
    // bytes) a step, its 64-column slabs N x 128 bytes apart.
    std::string x = "    {\n      const unsigned fz_va = fz_smem_u32(" + a.vBuf(t) + ");\n      fz_wg_fence();\n";
    x += "      #pragma unroll\n      for (int kk = 0; kk < " + str(a.N / 16) + "; ++kk)\n";
    x += "        fz_wgmma_o(fz_o, fz_pa[kk], fz_wg_desc_mn(fz_va + kk * 2048, " + str(a.N * 128) +
         "), 1);\n      fz_wg_commit();\n    }\n";
    return x;
  };
  auto packAll = [&]() {
    return "    #pragma unroll\n    for (int kk = 0; kk < " + str(a.N / 16) + "; ++kk) {\n" +
           a.pack("  fz_pa[kk]", "kk") + "    }\n";
  };
  auto rescale = "    #pragma unroll\n    for (int d = 0; d < " + str(a.D / 8) +
                 "; ++d) {\n      fz_o[d][0] *= fz_sc[0]; fz_o[d][1] *= fz_sc[0];\n"
                 "      fz_o[d][2] *= fz_sc[1]; fz_o[d][3] *= fz_sc[1];\n    }\n";
  // Barriers: full 0, 1: K's buffers; 2, 3: V's; 4: Q. Empty 0-3 likewise.
  auto bar = [&](const std::string &which, int base, const std::string &t) {
    return "fz_smem_u32(&" + which + "[" + str(base) + " + ((" + t + ") & 1)])";
  };
  // Tile `t` of K or V by the TMA: its 64-column boxes into the buffer's
  // slabs, the full barrier counting the bytes (boxes past the keys are
  // zeros, and count).
  auto load = [&](const AttentionRows &r, const std::string &map, const std::string &full,
                  const std::string &buf, const std::string &row, int64_t rows) {
    std::string x = "      fz_mbar_expect_tx(" + full + ", " + str(rows * a.D * 2) + ");\n";
    for (int64_t c = 0; c < a.D / 64; ++c) {
      std::string dst = "fz_smem_u32(" + buf + ") + " + str(c * rows * 128);
      const std::string entry = r.repeat > 1 ? "(int)(fz_b / " + str(r.repeat) + ")" : "(int)fz_b";
    x += r.batchStride > 0 ? "      fz_tma_3d(" + dst + ", &" + map + ", " + full + ", " +
                                   str(c * 64) + ", " + row + ", " + entry + ");\n"
                             : "      fz_tma_2d(" + dst + ", &" + map + ", " + full + ", " +
                                   str(c * 64) + ", " + row + ");\n";
    }
    return x;
  };
  auto parity = [](const std::string &t) { return "((" + t + ") >> 1) & 1"; };
  auto waitFull = [&](int base, const std::string &t) {
    return "    fz_mbar_wait(" + bar("fz_full", base, t) + ", " + parity(t) + ");\n";
  };
  auto release = [&](int base, const std::string &t) {
    return "    if (lane == 0) fz_mbar_arrive(" + bar("fz_empty", base, t) + ");\n";
  };
  // Turns on the tensor cores: a warpgroup waits for its turn (barrier 1 +
  // its index), issues its products, and hands the turn to the other.
  const std::string myTurn = "    fz_bar_sync(1 + warp / 4, 256);\n";
  const std::string yourTurn = "    fz_bar_arrive(2 - warp / 4, 256);\n";
  s += a.declarations();
  s += "  __shared__ __align__(8) unsigned long long fz_full[5], fz_empty[4];\n";
  s += "  if (threadIdx.x == 0) {\n";
  s += "    for (int b = 0; b < 5; ++b) fz_mbar_init(fz_smem_u32(&fz_full[b]), 1);\n";
  s += "    for (int b = 0; b < 4; ++b) fz_mbar_init(fz_smem_u32(&fz_empty[b]), 8);\n";
  s += "    asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");\n  }\n";
  s += "  __syncthreads();\n";
  s += "  if (warp < 0) {  // the loads\n";
  s += "    asm volatile(\"setmaxnreg.dec.sync.aligned.u32 24;\");\n";
  s += "    if (threadIdx.x == 0) {\n";
  s += load(a.q, "fz_tmQ", "fz_smem_u32(&fz_full[4])", "fz_sq", "fz_q0", a.R);
  s += "      #pragma unroll 1\n      for (int t = 0; t < fz_tiles; ++t) {\n";
  s += "        if (t >= 2) fz_mbar_wait(" + bar("fz_empty", 0, "t") + ", " + parity("t - 2") + ");\n";
  s += load(a.k, "fz_tmK", bar("fz_full", 0, "t"), a.kBuf("t"), "t * " + str(a.N), a.N);
  s += "        if (t >= 2) fz_mbar_wait(" + bar("fz_empty", 2, "t") + ", " + parity("t - 2") + ");\n";
  s += load(a.v, "fz_tmV", bar("fz_full", 2, "t"), a.vBuf("t"), "t * " + str(a.N), a.N);
  s += "      }\n    }\n    return;\n  }\n";
  s += "  asm volatile(\"setmaxnreg.inc.sync.aligned.u32 240;\");\n";
  s += "  unsigned fz_pa[" + str(a.N / 16) + "][4];  // P(t - 1), the A fragments of its product\n";
  s += "  float fz_sc[2];\n";
  s += "  if (warp >= 4) fz_bar_arrive(1, 256);  // the first warpgroup's turn first\n";
  s += "  fz_mbar_wait(fz_smem_u32(&fz_full[4]), 0);\n";
  s += "  {\n  const int fz_t = 0;\n";
  s += waitFull(0, "0");
  s += myTurn;
  s += a.scores("fz_sk");
  s += yourTurn;
  s += "    fz_wg_wait<0>();\n    fz_keep(fz_acc);\n";
  s += release(0, "0");
  s += a.softmax(true);
  s += packAll();
  s += "  }\n";
  s += "  #pragma unroll 1\n  for (int fz_t = 1; fz_t < fz_tiles; ++fz_t) {\n";
  s += "    fz_keep(fz_o);\n    fz_keep(fz_pa);\n";
  s += waitFull(0, "fz_t");
  s += waitFull(2, "fz_t - 1");
  s += myTurn;
  s += a.scores(a.kBuf("fz_t"));
  s += pv("fz_t - 1");
  s += yourTurn;
  s += "    fz_wg_wait<1>();  // S(t); P(t - 1) V(t - 1) may still run\n    fz_keep(fz_acc);\n";
  s += release(0, "fz_t");
  s += a.softmax(true);
  s += "    fz_wg_wait<0>();\n    fz_keep(fz_o);\n    fz_keep(fz_pa);\n";
  s += release(2, "fz_t - 1");
  s += rescale;
  s += packAll();
  s += "  }\n";
  s += "  fz_keep(fz_o);\n  fz_keep(fz_pa);\n";
  s += waitFull(2, "fz_tiles - 1");
  s += myTurn;
  s += pv("fz_tiles - 1");
  s += yourTurn;
  s += "  fz_wg_wait<0>();\n  fz_keep(fz_o);\n  fz_keep(fz_pa);\n";
  s += "  if (warp < 4) fz_bar_sync(1, 256);  // the other's first hand-over, matched\n";
  return s + a.store();
}

std::string hopperAttentionHelpers(const AttentionText &a) {
  WgmmaCall sc{int(a.N), a.T, "fz_wgmma_s", false, false, true};
  WgmmaCall oc{int(a.D), a.T, "fz_wgmma_o", true, true, true};
  return std::string(kHopperHelpers) + wgmmaWrapper(sc) + wgmmaWrapper(oc) + a.helpers() +
         kKeepHelpers;
}

std::vector<TensorMapParam> hopperAttentionMaps(const AttentionText &a) {
  std::vector<TensorMapParam> maps;
  for (const AttentionRows *r : {&a.q, &a.k, &a.v}) {
    TensorMapParam m;
    m.arg = static_cast<int>(r->arg);
    m.bf16 = a.T == "fz_bf16";
    m.rows = static_cast<uint64_t>(r == &a.q ? a.L : a.S);
    m.cols = static_cast<uint64_t>(a.D);
    m.rowStrideBytes = static_cast<uint64_t>(r->ld) * 2;
    m.offsetBytes = static_cast<uint64_t>(r->offset) * 2;
    m.boxRows = static_cast<uint32_t>(r == &a.q ? a.R : a.N);
    m.boxCols = 64;
    if (r->batchStride > 0) {
      m.batches = static_cast<uint64_t>(a.B / r->repeat);
      m.batchStrideBytes = static_cast<uint64_t>(r->batchStride) * 2;
    }
    maps.push_back(m);
  }
  return maps;
}

} // namespace fusec::codegen::detail
