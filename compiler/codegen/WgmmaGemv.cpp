//===- WgmmaGemv.cpp - 9-64 rows on Hopper: TMA stages, wgmma, K halves ---===//
//
// Decode's linear layers (x @ w^T, x of 9-64 rows) stream their weights. On
// sm_90a this kernel streams them through TMA stages, near a plain read of
// the same bytes and faster than cuBLASLt in a stream of 32-row layers
// (docs/matmul.md, "How a group runs"; bench/micro/decode_m32_tma.cu):
//
//   * A cluster of two blocks per `wgvRows` weight rows, one K half each;
//     the rows are spread so that the clusters fill the SMs one block each.
//   * One producer warp: per 64-deep K step, the TMA copies the weight rows'
//     box (wgvRows x 64, 128-byte swizzled) and A's box (M x 64) into one of
//     `stages` buffers. No warp issues per-lane copies and A is not copied
//     up front: each stage brings the A it needs.
//   * One consumer warpgroup, four wgmma a stage. With 64 weight rows they
//     are the 64-row operand and A's rows N (m64nMk16, M rounded up to 8);
//     otherwise A is the 64-row operand (rows past M are left over in shared
//     memory and land in accumulator rows nobody stores) and the weight rows
//     N (m64nRk16), twice the products for the same bytes (the first form
//     is 0.3 us a layer faster at 32 x 4096 -> 4096).
//   * The halves meet by stores: each block keeps the rows of A it finishes
//     and stores the others into its peer's shared memory, one cluster
//     barrier, then only local reads, so no second barrier (the tail of two
//     barriers and reads from the peer cost 1.3 us of 15 a layer).
//   * The epilogue's loads are issued before the products (off the tail).
//   * The tail after the K loop is the kernel's cost over a plain read
//     (stamped with %globaltimer: ~2 us a layer from the median block's last
//     product to the next layer's start), so it has no branch per value:
//     the merge stores every value through the cluster's window (to this
//     block or the peer), every sum is read before any is used, and guards
//     are written only where the shape can fail them (0.4 us a layer).
//   * The next layer starts streaming during this one's tail: the producer
//     requests the weights' first boxes (half the stages) before it waits
//     for the kernel ahead, and once every box is requested it lets the
//     next kernel launch (griddepcontrol.launch_dependents). Its blocks take
//     the SMs this grid's blocks leave and request their own weights at
//     once; every other access waits (the consumers at their start). The
//     epilogue's inputs are read by coherent loads kept after the wait
//     (fz_load1_after_wait): ptxas may move fz_load1's read-only loads above
//     a wait that is not the kernel's first statement, where they read the
//     kernel ahead's output before it is written (docs/matmul.md, "Kernels
//     launched beside the previous one's tail"). The weights are a graph
//     input, so only the caller's own work before the plan could be writing
//     them: the runtime launches this kernel the ordinary way as a plan's
//     first step or when its weights are an intermediate (stepOverlaps), or
//     lie under an output of the call (earlyReadApart).
//   * Sibling products that are the group's results as they are (Q/K/V as
//     three weights) run side by side (`parts`): each part's clusters follow
//     the ones before, the rows a cluster divide every part's width
//     (wgmmaGemvPartsRows: 64 for 4096/1024/1024, 96 clusters), a cluster
//     takes its part's weight map and stores to its part's output, and two
//     blocks share an SM (8 stages): one launch and one ramp instead of three
//     (docs/matmul.md, "Sibling matmuls at decode sizes").
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/GemmGen.h"
#include "compiler/codegen/KernelSpec.h"
#include "compiler/codegen/ScalarOps.h"

#include <regex>

namespace fusec::codegen::detail {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

/// The kernel's own device helpers: a TMA copy with an L2 policy, stores into
/// the peer block's shared memory, loads that stay after the wait.
const char *kPeerStores = R"(// ---- TMA with a cache policy; peer stores; loads kept after the wait ----
__device__ __forceinline__ unsigned fz_peer_addr(unsigned local, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}
__device__ __forceinline__ void fz_tma_2d_hint(unsigned dst, const fz_tmap *map, unsigned bar, int c0, int c1,
                                             unsigned long long pol) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
               " [%0], [%1, {%2, %3}], [%4], %5;"
               :: "r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar), "l"(pol)
               : "memory");
}
__device__ __forceinline__ void fz_st_peer2(unsigned addr, float x, float y) {
  asm volatile("st.shared::cluster.v2.f32 [%0], {%1, %2};" :: "r"(addr), "f"(x), "f"(y) : "memory");
}
__device__ __forceinline__ void fz_st_peer1(unsigned addr, float x) {
  asm volatile("st.shared::cluster.f32 [%0], %1;" :: "r"(addr), "f"(x) : "memory");
}
// An epilogue input read in this kernel, whose wait is not its first
// statement: a coherent load in program order after the wait. fz_load1's
// read-only loads (const __restrict__) were measured reading the kernel
// ahead's output before its writes (bench/NOTES.md, session t).
template <typename S>
__device__ __forceinline__ auto fz_load1_after_wait(const S *p, long long off) -> decltype(fz_in(*p)) {
  static_assert(sizeof(S) == 1 || sizeof(S) == 2 || sizeof(S) == 4 || sizeof(S) == 8, "element size");
  const size_t q = __cvta_generic_to_global(p + off);
  S v;
  if constexpr (sizeof(S) == 1) {
    unsigned short u;
    asm volatile("ld.global.u8 %0, [%1];" : "=h"(u) : "l"(q) : "memory");
    *reinterpret_cast<unsigned char *>(&v) = (unsigned char)u;
  } else if constexpr (sizeof(S) == 2) {
    asm volatile("ld.global.u16 %0, [%1];" : "=h"(*reinterpret_cast<unsigned short *>(&v)) : "l"(q) : "memory");
  } else if constexpr (sizeof(S) == 4) {
    asm volatile("ld.global.u32 %0, [%1];" : "=r"(*reinterpret_cast<unsigned *>(&v)) : "l"(q) : "memory");
  } else {
    asm volatile("ld.global.u64 %0, [%1];" : "=l"(*reinterpret_cast<unsigned long long *>(&v)) : "l"(q) : "memory");
  }
  return fz_in(v);
}
)";

/// `code` with the names that are element j's: its prefetched loads
/// (fz_preN) and batch indices, and with `element` its indices (fz_em,
/// fz_enc) too.
std::string renamed(const std::string &code, int64_t j, bool element) {
  static const std::regex loads(R"(\b(fz_pre[0-9]+|fz_bi[0-9]+)\b)"),
      all(R"(\b(fz_pre[0-9]+|fz_bi[0-9]+|fz_em|fz_enc)\b)");
  return std::regex_replace(code, element ? all : loads, "$1_" + str(j));
}

} // namespace

KernelText GemmGen::wgmmaGemvSource() {
  const int64_t R = cfg.wgvRows, ST = cfg.stages, M = shape.m, N = shape.n;
  const int64_t half = (M + 1) / 2, pitch = R + 4;
  const int64_t steps = (shape.k + 63) / 64, first = steps / 2;  // rank 0 takes the first
  const WgvShape shm = wgvShape();
  const int64_t sb = shm.stageBytes(), aBytes = shm.aBytes(), txBytes = (R + M) * 128;
  const bool wa = wgvWeightsA();
  // The accumulator: 64 rows (A's, or with `wa` the weights') by `accN`
  // columns (the weights', or A's rows rounded up to 8).
  const int64_t accN = wa ? (M + 7) / 8 * 8 : R;
  // Elements of the block's half each consumer thread finishes.
  const int64_t per = (half * R + 127) / 128;
  // Products side by side (Q/K/V as three weights) are the group's results
  // as they are: a plain store per part, no epilogue.
  std::string prefetch,
      epi = parts.empty() ? scalarEpilogue(&prefetch, "fz_load1_after_wait") : std::string();
  const int64_t early = shm.earlyBoxes();  // weight boxes before the wait

  KernelText text;
  text.helpers = std::string(kHopperHelpers) + kPeerStores + wgmmaWrapper(int(accN), elem) + "\n";
  // Side by side two blocks share an SM: registers capped to fit both.
  text.qualifiers = "__cluster_dims__(2, 1, 1) __launch_bounds__(160, " +
                    std::string(parts.empty() ? "1" : "2") + ")";
  text.params = parameters(fusion);
  text.moreParams = ",\n    const __grid_constant__ fz_tmap fz_tmA, const __grid_constant__ fz_tmap fz_tmB";
  for (size_t p = 1; p < parts.size(); ++p)  // the other parts' weights: fz_tmB2, fz_tmB3
    text.moreParams += ", const __grid_constant__ fz_tmap fz_tmB" + str(p + 1);
  text.waitPerRole = true;
  text.staticShared = true;
  std::string s;
  s += "  extern __shared__ __align__(1024) unsigned char fz_dyn[];\n";
  s += "  __shared__ __align__(8) unsigned long long fz_bars[" + str(2 * ST) + "];\n";
  s += "  // Partial sums of the rows of A this block finishes: its own, and its peer's.\n";
  s += "  __shared__ __align__(16) float fz_own[" + str(half) + "][" + str(pitch) + "], fz_recv[" +
       str(half) + "][" + str(pitch) + "];\n";
  s += "  const unsigned fz_base = (fz_smem_u32(fz_dyn) + 1023) & ~1023u;\n";
  s += "  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, fz_b = 0;\n";
  s += "  const unsigned fz_rank = fz_cluster_rank();\n";
  if (parts.empty()) {
    s += "  const int fz_n0 = blockIdx.x / 2 * " + str(R) + ";\n";
  } else {
    // Each part's clusters follow the ones before; fz_n0 counts within it.
    PartOf p = partOf("fz_c", R);
    s += "  const int fz_c = blockIdx.x / 2, fz_part = " + p.part + ";  // the cluster's product\n";
    s += "  const int fz_n0 = (fz_c - (" + p.first + ")) * " + str(R) + ", fz_nw = " + p.width +
         ";\n";
  }
  s += "  const int fz_s0 = fz_rank ? " + str(first) + " : 0, fz_steps = fz_rank ? " +
       str(steps - first) + " : " + str(first) + ";\n";
  s += "  const unsigned fz_full = fz_smem_u32(fz_bars), fz_empty = fz_full + " + str(8 * ST) +
       ";\n";
  s += "  if (threadIdx.x == 0) {\n";
  s += "    for (int i = 0; i < " + str(ST) + "; ++i) {\n";
  s += "      fz_mbar_init(fz_full + 8 * i, 1);\n";
  s += "      fz_mbar_init(fz_empty + 8 * i, 4);  // a consumer warp each\n";
  s += "    }\n";
  s += "    asm volatile(\"fence.mbarrier_init.release.cluster;\\n\\tfence.proxy.async.shared::cta;\" "
       "::: \"memory\");\n";
  s += "  }\n";
  s += "  __syncthreads();\n";
  // Every block of a cluster must have started before another stores into
  // its shared memory: arrive now, wait before the stores (after the K loop,
  // where it costs nothing).
  s += "  asm volatile(\"barrier.cluster.arrive.relaxed;\" ::: \"memory\");\n";
  // Producer: the weights' box (evict-first: they are read once; 1.6 us of
  // 16 a layer in a stream) and A's box of each step into the next stage.
  // The first `early` weight boxes go before the wait: the weights are a
  // graph input no kernel writes (the runtime launches this kernel beside
  // the one ahead only then: stepOverlaps), and so the next layer's blocks,
  // let launch once every box is requested, stream during this one's tail.
  const std::string wmap = parts.empty() ? "&fz_tmB" : "fz_wmap";
  auto weightBox = [&](const std::string &stage, const std::string &in) {
    return in + "fz_mbar_expect_tx(fz_full + 8 * " + stage + ", " + str(txBytes) + ");\n" + in +
           "fz_tma_2d_hint(fz_base + " + stage + " * " + str(sb) + " + " + str(aBytes) + ", " +
           wmap + ", fz_full + 8 * " + stage + ", (fz_s0 + i) * 64, fz_n0, fz_once);\n";
  };
  s += "  if (warp == 4) {\n";
  s += "    if (lane == 0) {\n";
  s += "      unsigned long long fz_once;\n";
  s += "      asm(\"createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\" : \"=l\"(fz_once));\n";
  if (!parts.empty())
    s += "      const fz_tmap *fz_wmap = " + partMap("fz_tmB") + ";  // the part's weights\n";
  s += "      for (int i = 0; i < " + str(early) + " && i < fz_steps; ++i) {\n";
  s += weightBox("i", "        ");
  s += "      }\n";
  s += "      fz_after_prior();  // A is the kernel ahead's output\n";
  s += "      for (int i = 0; i < fz_steps; ++i) {\n";
  s += "        const int st = i % " + str(ST) + ";\n";
  s += "        if (i >= " + str(early) + ") {\n";
  s += "          if (i >= " + str(ST) + ")\n";
  s += "            fz_mbar_wait(fz_empty + 8 * st, ((i / " + str(ST) + ") - 1) & 1);\n";
  s += weightBox("st", "          ");
  s += "        }\n";
  s += "        fz_tma_2d(fz_base + st * " + str(sb) +
       ", &fz_tmA, fz_full + 8 * st, (fz_s0 + i) * 64, 0);\n";
  s += "      }\n";
  // Every box is requested: the kernel behind may launch now. Its blocks take
  // the SMs this grid's blocks leave (one block an SM by shared memory) and
  // wait for this grid to complete before reading its output, and stream
  // their weights during this grid's tail (docs/matmul.md, "Kernels launched
  // beside the previous one's tail").
  s += "      asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\");\n";
  s += "    }\n";
  s += "    __syncwarp();\n";
  s += "    asm volatile(\"barrier.cluster.wait;\" ::: \"memory\");\n";
  s += "    fz_cluster_barrier();  // the consumers' (below)\n";
  s += "  } else {\n";
  s += "    fz_after_prior();  // the epilogue reads the kernel ahead's output\n";
  // The epilogue's loads, element by element, before the products.
  for (int64_t j = 0; j < per; ++j) {
    std::string J = str(j);
    s += "    const int fz_ml_" + J + " = (threadIdx.x + " + str(128 * j) + ") / " + str(R) +
         ", fz_nl_" + J + " = (threadIdx.x + " + str(128 * j) + ") % " + str(R) + ";\n";
    if (!parts.empty())
      continue;  // no epilogue inputs to read
    s += "    const int fz_em_" + J + " = min((int)fz_rank * " + str(half) + " + fz_ml_" + J + ", " +
         str(M - 1) + "), fz_enc_" + J + " = min(fz_n0 + fz_nl_" + J + ", " + str(N - 1) + ");\n";
    s += renamed(prefetch, j, /*element=*/true);
  }
  s += "    float fz_d[" + str(accN / 2) + "];\n";
  s += "#pragma unroll\n";
  s += "    for (int i = 0; i < " + str(accN / 2) + "; ++i) fz_d[i] = 0.f;\n";
  s += "    for (int i = 0; i < fz_steps; ++i) {\n";
  s += "      const int st = i % " + str(ST) + ";\n";
  s += "      fz_mbar_wait(fz_full + 8 * st, (i / " + str(ST) + ") & 1);\n";
  s += "      const unsigned fz_a = fz_base + st * " + str(sb) + ", fz_w = fz_a + " + str(aBytes) +
       ";\n";
  s += "      fz_wg_fence();\n";
  s += "#pragma unroll\n";
  s += "      for (int kk = 0; kk < 4; ++kk)\n";
  s += wa ? "        fz_wgmma(fz_d, fz_wg_desc(fz_w + 32 * kk), fz_wg_desc(fz_a + 32 * kk), 1);\n"
          : "        fz_wgmma(fz_d, fz_wg_desc(fz_a + 32 * kk), fz_wg_desc(fz_w + 32 * kk), 1);\n";
  s += "      fz_wg_commit();\n";
  s += "      fz_wg_wait<1>();\n";
  s += "      if (i > 0 && lane == 0) fz_mbar_arrive(fz_empty + 8 * ((i - 1) % " + str(ST) + "));\n";
  s += "    }\n";
  s += "    fz_wg_wait<0>();\n";
  s += "    asm volatile(\"barrier.cluster.wait;\" ::: \"memory\");  // the peer has started\n";
  s += "    const int g = lane / 4, t = lane % 4;\n";
  // Row m of A belongs to the block of rank `owner`, as its row ml.
  auto owner = [&](const std::string &in) {
    return in + "const unsigned owner = m >= " + str(half) + ";\n" + in +
           "const int ml = m - (owner ? " + str(half) + " : 0);\n";
  };
  if (wa) {
    // Weight row w = 16 warp + g + 8h, row m = 8j + 2t + l of A: fz_d[4j + 2h + l].
    // Every value goes out by one store through the cluster's window, to
    // this block's fz_own or the peer's fz_recv: no branch per value.
    s += "    const unsigned fz_to_own = fz_peer_addr(fz_smem_u32(&fz_own[0][0]), fz_rank), "
         "fz_to_peer = fz_peer_addr(fz_smem_u32(&fz_recv[0][0]), fz_rank ^ 1u);\n";
    s += "#pragma unroll\n";
    s += "    for (int j = 0; j < " + str(accN / 8) + "; ++j)\n";
    s += "#pragma unroll\n";
    s += "      for (int c = 0; c < 4; ++c) {\n";
    s += "        const int m = 8 * j + 2 * t + c % 2, w = 16 * warp + g + 8 * (c / 2);\n";
    s += "        if (m < " + str(M) + ") {\n" + owner("          ");
    s += "          fz_st_peer1((owner == fz_rank ? fz_to_own : fz_to_peer) + 4 * (ml * " +
         str(pitch) + " + w), fz_d[4 * j + c]);\n";
    s += "        }\n";
    s += "      }\n";
  } else {
    // Row m = 16 warp + g + 8h of A, weight row 8j + 2t + l: fz_d[4j + 2h + l].
    s += "#pragma unroll\n";
    s += "    for (int h = 0; h < 2; ++h) {\n";
    s += "      const int m = 16 * warp + g + 8 * h;\n";
    s += "      if (m < " + str(M) + ") {\n" + owner("        ");
    s += "        if (owner == fz_rank) {\n";
    s += "#pragma unroll\n";
    s += "          for (int j = 0; j < " + str(R / 8) + "; ++j)\n";
    s += "            *reinterpret_cast<float2 *>(&fz_own[ml][8 * j + 2 * t]) = "
         "make_float2(fz_d[4 * j + 2 * h], fz_d[4 * j + 2 * h + 1]);\n";
    s += "        } else {\n";
    s += "          const unsigned peer = fz_peer_addr(fz_smem_u32(&fz_recv[ml][2 * t]), fz_rank ^ 1u);\n";
    s += "#pragma unroll\n";
    s += "          for (int j = 0; j < " + str(R / 8) + "; ++j)\n";
    s += "            fz_st_peer2(peer + 32 * j, fz_d[4 * j + 2 * h], fz_d[4 * j + 2 * h + 1]);\n";
    s += "        }\n";
    s += "      }\n";
    s += "    }\n";
  }
  s += "    fz_cluster_barrier();  // both halves of every row are here\n";
  // Every element's sum is read before any is used (a row past the half
  // reads the last one and is not stored), and a guard is written only where
  // the shape can fail it: the tail then has no branch per element to wait
  // on its shared-memory loads in turn.
  for (int64_t j = 0; j < per; ++j) {
    std::string J = str(j), ml = "min(fz_ml_" + J + ", " + str(half - 1) + ")";
    s += "    const float fz_v_" + J + " = fz_own[" + ml + "][fz_nl_" + J + "] + fz_recv[" + ml +
         "][fz_nl_" + J + "];\n";
  }
  if (!parts.empty()) {
    // The part's own output, rows of its width.
    std::string t = storageType(dtypeOf(fusion.getResult(parts[0].out))), o = "out" + str(parts[0].out);
    for (size_t p = 1; p < parts.size(); ++p)
      o = "fz_part == " + str(p) + " ? out" + str(parts[p].out) + " : " + o;
    s += "    " + t + " *const fz_o = " + o + ";\n";
  }
  for (int64_t j = 0; j < per; ++j) {
    std::string J = str(j), guard;
    auto also = [&](const std::string &c) { guard += (guard.empty() ? "" : " && ") + c; };
    if (per * 128 > half * R)
      also("fz_ml_" + J + " < " + str(half));
    if (2 * half > M)
      also("fz_em < " + str(M));
    if (N % R != 0)
      also("fz_en < " + str(N));
    s += "    {\n";
    s += "    const int fz_em = (int)fz_rank * " + str(half) + " + fz_ml_" + J +
         ", fz_en = fz_n0 + fz_nl_" + J +
         (parts.empty() ? ", fz_enc = min(fz_en, " + str(N - 1) + ")" : std::string()) + ";\n";
    if (!guard.empty())
      s += "    if (" + guard + ") {\n";
    s += "    const float fz_v = fz_v_" + J + ";\n";
    // The epilogue's own indices stay (fz_em, fz_en).
    if (parts.empty())
      s += renamed(epi, j, /*element=*/false);
    else
      s += std::string("    fz_o[(long long)fz_em * fz_nw + fz_en] = fz_out<") +
           storageType(dtypeOf(fusion.getResult(parts[0].out))) + ">::of(fz_v);\n";
    s += guard.empty() ? "    }\n" : "    }\n    }\n";
  }
  s += "  }\n";
  text.body = s;
  return text;
}

} // namespace fusec::codegen::detail
