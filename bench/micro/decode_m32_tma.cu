// Microbenchmark for decode with 32 rows, version 5 (session 2026-11-27r,
// rounds 1-4 and 7; harness and versions 1-4: decode_m32_common.cuh,
// decode_m32.cu): the weights and A through the TMA into a ring of stages,
// wgmma m64n32k16, a cluster of two K halves whose halves meet by stores into
// the peer's shared memory. The first form to beat cuBLASLt here: 14.45-14.52
// us a layer (77%) with 16 stages, the residual read before the products and
// one block an SM, against cuBLASLt's 16.58. EARLY + SIGNAL (weight boxes
// before the wait, the next layer launched once the last box is requested)
// reads 13.6-13.7 and is correct: every layer's output is poisoned before the
// check. fusec's chain failed its check in session r because its residual's
// read-only loads were moved above the wait (bench/NOTES.md, session t);
// `gen` mode times fusec's kernel, which does this since session t.
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o decode_m32_tma decode_m32_tma.cu
// Run: decode_m32_tma tma | stream | epi (version 5's rounds). With
// -DFUSEC_GEN='"k.cu"' (a kernel `fusec compile --emit cuda` wrote for
// bench/graphs/decode_o_residual_m32.json, its `#if __CUDA_ARCH__ >= 900`
// lines made `#if 1` for nvcc's host pass), `decode_m32_tma gen` times it in
// this harness beside version 5. `decode_m32_tma timeline`, built also with
// -DFUSEC_TIMELINE from a kernel that timeline_instrument.py stamped, prints
// when each layer's blocks start, wait, merge and store (session s).

#include "decode_m32_common.cuh"

// ---- Version 5: TMA + wgmma (bench/NOTES.md, session 2026-11-27r, round 1) ----
// The weights go from HBM to shared memory by the TMA (64 weight rows x 64 k
// boxes, 128-byte swizzled), A's matching 32 x 64 box with them, so no warp
// issues per-lane copies and A is not copied up front; one warpgroup
// multiplies each stage with four wgmma m64n32k16 (the weights as the 64-row
// operand, A as the 32 columns), one warp produces. A cluster of KS blocks
// shares a 64-row slab, one K part each, and the parts meet through DSMEM.
// MODE 1: weights only, no A and no wgmma (wrong values; timing of the
// stream). EARLY: the first ST weight boxes are requested before
// griddepcontrol.wait. SIGNAL: the next layer may launch once the last box
// is requested.
__device__ __forceinline__ unsigned smemU32(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mbarInit(unsigned bar, unsigned n) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(n) : "memory");
}
__device__ __forceinline__ void mbarExpectTx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbarArrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
}
__device__ __forceinline__ void mbarWait(unsigned bar, unsigned parity) {
  unsigned done = 0;
  while (!done)
    asm volatile("{\n  .reg .pred p;\n  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "  selp.u32 %0, 1, 0, p;\n}" : "=r"(done) : "r"(bar), "r"(parity) : "memory");
}
__device__ __forceinline__ void tma2d(unsigned dst, const CUtensorMap *map, unsigned bar, int c0, int c1,
                                      unsigned long long pol) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
               " [%0], [%1, {%2, %3}], [%4], %5;"
               :: "r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar), "l"(pol)
               : "memory");
}
// A K-major tile of 128-byte rows, 128-byte swizzled: 8-row groups 1 KB apart.
__device__ __forceinline__ unsigned long long wgDesc(unsigned addr) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}
__device__ __forceinline__ void wgmma32(float (&d)[16], unsigned long long a, unsigned long long b) {
  asm volatile("wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
               "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, 1, 1, 1, 0, 0;"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
               : "l"(a), "l"(b));
}
__device__ __forceinline__ unsigned long long policyLast() {
  unsigned long long p;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}

template <int KS, int ST, bool EARLY, bool SIGNAL, int MODE, int BK, int EPI>
__global__ void __cluster_dims__(KS, 1, 1) __launch_bounds__(160, 1)
    decodeTma(const __grid_constant__ CUtensorMap tw, const __grid_constant__ CUtensorMap tx,
              const __nv_bfloat16 *__restrict__ x, __nv_bfloat16 *__restrict__ y) {
  constexpr int KB = K / KS, STEPS = KB / BK, SUB = BK / 64, WB = SUB * 64 * 128, XB = SUB * M * 128, SB = WB + XB;
  static_assert(STEPS >= ST, "a stage per step at least");
  extern __shared__ unsigned char dyn[];
  __shared__ __align__(8) unsigned long long bars[2 * ST];
  __shared__ __align__(16) float part[EPI >= 1 ? 1 : M][64];
  __shared__ __align__(16) float own[EPI >= 1 ? 16 : 1][68], recv[EPI >= 1 ? 16 : 1][68];  // EPI 1, 2
  __shared__ __align__(8) unsigned long long merged;  // EPI 2: the peer's half has arrived
  const unsigned base = (smemU32(dyn) + 1023) & ~1023u;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const unsigned rank = clusterRank();
  const int n0 = blockIdx.x / KS * 64, k0 = rank * KB;
  const unsigned full0 = smemU32(bars), empty0 = full0 + 8 * ST;
  if (threadIdx.x == 0) {
    for (int s = 0; s < ST; ++s) {
      mbarInit(full0 + 8 * s, 1);
      mbarInit(empty0 + 8 * s, 4);
    }
    if (EPI == 2) {
      mbarInit(smemU32(&merged), 1);
      mbarExpectTx(smemU32(&merged), 16 * 64 * 4);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;" ::: "memory");
  }
  if (EPI == 2) clusterSync();  // the peer's barrier is initialized before we store to it
  else __syncthreads();
  if (warp == 4) {
    if (lane == 0) {
      const unsigned long long pw = policyFirst(), px = policyLast();
      const unsigned bytes = MODE != 0 ? WB : SB;
      auto issueW = [&](int step) {
        for (int u = 0; u < SUB; ++u)
          tma2d(base + (step % ST) * SB + u * 8192, &tw, full0 + 8 * (step % ST), k0 + BK * step + 64 * u, n0, pw);
      };
      auto issueX = [&](int step) {
        for (int u = 0; u < SUB && MODE == 0; ++u)
          tma2d(base + (step % ST) * SB + WB + u * M * 128, &tx, full0 + 8 * (step % ST), k0 + BK * step + 64 * u, 0,
                px);
      };
      if (EARLY) {
        for (int s = 0; s < ST; ++s) {
          mbarExpectTx(full0 + 8 * s, bytes);
          issueW(s);
        }
        asm volatile("griddepcontrol.wait;" ::: "memory");
        for (int s = 0; s < ST; ++s) issueX(s);
      } else {
        asm volatile("griddepcontrol.wait;" ::: "memory");
        for (int s = 0; s < ST; ++s) {
          mbarExpectTx(full0 + 8 * s, bytes);
          issueW(s);
          issueX(s);
        }
      }
      for (int step = ST; step < STEPS; ++step) {
        const int s = step % ST;
        mbarWait(empty0 + 8 * s, ((step / ST) - 1) & 1);
        mbarExpectTx(full0 + 8 * s, bytes);
        issueW(step);
        issueX(step);
      }
      if (SIGNAL) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    }
    __syncwarp();
  } else {
    asm volatile("griddepcontrol.wait;" ::: "memory");  // the residual is the last layer's output
    // EPI 1: the residual of the 8 outputs this thread writes, read now
    // (off the tail).
    const int em = rank * 16 + threadIdx.x / 8, en = 8 * (threadIdx.x % 8);
    uint4 res = {};
    if (EPI >= 1) res = *reinterpret_cast<const uint4 *>(x + (size_t)em * N + n0 + en);
    float d[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) d[i] = 0.f;
    for (int step = 0; step < STEPS; ++step) {
      const int s = step % ST;
      mbarWait(full0 + 8 * s, (step / ST) & 1);
      if (MODE == 0) {
        const unsigned wa = base + s * SB, xa = wa + WB;
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < 4 * SUB; ++kk)
          wgmma32(d, wgDesc(wa + (kk / 4) * 8192 + 32 * (kk % 4)), wgDesc(xa + (kk / 4) * M * 128 + 32 * (kk % 4)));
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
      } else {
        d[0] += 1.f;
      }
      if (step > 0 && lane == 0) mbarArrive(empty0 + 8 * ((step - 1) % ST));
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    const int g = lane / 4, t = lane % 4;
    if (EPI >= 1) {
      // Our half of the rows stays here, the peer's half is stored into its
      // shared memory; one cluster barrier, then only local reads.
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          const int m = 8 * j + 2 * t + c % 2, n = 16 * warp + g + 8 * (c / 2);
          if ((j >= 2) == (rank == 1)) {
            own[m % 16][n] = d[4 * j + c];
          } else {
            unsigned remote, rbar;
            asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smemU32(&recv[m % 16][n])), "r"(rank ^ 1u));
            if (EPI == 1) {
              asm volatile("st.shared::cluster.f32 [%0], %1;" :: "r"(remote), "f"(d[4 * j + c]) : "memory");
            } else {
              asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rbar) : "r"(smemU32(&merged)), "r"(rank ^ 1u));
              asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [%0], %1, [%2];"
                           :: "r"(remote), "f"(d[4 * j + c]), "r"(rbar) : "memory");
            }
          }
        }
      if (EPI == 1) {
        clusterSync();
      } else {
        asm volatile("bar.sync 1, 128;" ::: "memory");  // our half, from every consumer
        mbarWait(smemU32(&merged), 0);                   // the peer's half
      }
      const float4 a0 = *reinterpret_cast<const float4 *>(&own[em % 16][en]),
                   a1 = *reinterpret_cast<const float4 *>(&own[em % 16][en + 4]),
                   b0 = *reinterpret_cast<const float4 *>(&recv[em % 16][en]),
                   b1 = *reinterpret_cast<const float4 *>(&recv[em % 16][en + 4]);
      const float v[8] = {a0.x + b0.x, a0.y + b0.y, a0.z + b0.z, a0.w + b0.w,
                          a1.x + b1.x, a1.y + b1.y, a1.z + b1.z, a1.w + b1.w};
      const __nv_bfloat162 *r2 = reinterpret_cast<const __nv_bfloat162 *>(&res);
      uint4 o;
      unsigned *o2 = reinterpret_cast<unsigned *>(&o);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float2 f = __bfloat1622float2(r2[i]);
        __nv_bfloat162 h = __floats2bfloat162_rn(v[2 * i] + f.x, v[2 * i + 1] + f.y);
        o2[i] = *reinterpret_cast<unsigned *>(&h);
      }
      *reinterpret_cast<uint4 *>(y + (size_t)em * N + n0 + en) = o;
      return;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) part[8 * j + 2 * t + c % 2][16 * warp + g + 8 * (c / 2)] = d[4 * j + c];
  }
  if (EPI >= 1) {  // the producer warp's part in the cluster barrier
    if (EPI == 1) clusterSync();
    return;
  }
  if (MODE == 2) return;
  if (MODE == 3) __syncthreads(); else clusterSync();  // every part is published
  constexpr int MR = M / KS;  // rows of y this block writes
  for (int e = threadIdx.x; e < MR * 8; e += 160) {
    const int m = rank * MR + e / 8, n = 8 * (e % 8);
    float4 a0 = *reinterpret_cast<const float4 *>(&part[m][n]), a1 = *reinterpret_cast<const float4 *>(&part[m][n + 4]);
#pragma unroll
    for (int r = 1; r < (MODE == 3 ? 1 : KS); ++r) {
      const float4 b0 = dsmemLd4(reinterpret_cast<const float4 *>(&part[m][n]), (rank + r) % KS);
      const float4 b1 = dsmemLd4(reinterpret_cast<const float4 *>(&part[m][n + 4]), (rank + r) % KS);
      a0.x += b0.x, a0.y += b0.y, a0.z += b0.z, a0.w += b0.w;
      a1.x += b1.x, a1.y += b1.y, a1.z += b1.z, a1.w += b1.w;
    }
    storeResidual(a0, x, y, (size_t)m * N + n0 + n);
    storeResidual(a1, x, y, (size_t)m * N + n0 + n + 4);
  }
  if (MODE != 3) clusterSync();  // the peers have read our part
}

// The weight stream alone through the TMA, by shape of a stage (timing of
// the access pattern, round 22): 128 blocks, each rows [RB b / KS ...) x one
// K part of K / KS; a stage is SR rows x SK k as 8-row x 64-k boxes (1 KB),
// row groups outermost, ST stages in flight; one warp waits and releases.
// CW: consumer warps, every lane waiting on the stage (the last warp
// produces).
template <int KS, int SR, int SK, int ST, int CW = 1>
__global__ void __launch_bounds__(32 * (CW + 1), 1) tmaStream(const __grid_constant__ CUtensorMap tw, unsigned *sink) {
  constexpr int RB = N * KS / 128, KB = K / KS, SB = SR * SK * 2;
  constexpr int STEPS = (RB / SR) * (KB / SK);
  static_assert(STEPS >= ST && RB % SR == 0 && KB % SK == 0, "whole stages");
  extern __shared__ unsigned char dyn[];
  __shared__ __align__(8) unsigned long long bars[2 * ST];
  const unsigned base = (smemU32(dyn) + 1023) & ~1023u;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int r0 = blockIdx.x / KS * RB, k0 = blockIdx.x % KS * KB;
  const unsigned full0 = smemU32(bars), empty0 = full0 + 8 * ST;
  if (threadIdx.x == 0) {
    for (int s = 0; s < ST; ++s) mbarInit(full0 + 8 * s, 1), mbarInit(empty0 + 8 * s, CW);
    asm volatile("fence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (warp == CW) {
    if (lane == 0) {
      const unsigned long long pw = policyFirst();
      for (int step = 0; step < STEPS; ++step) {
        const int s = step % ST, rg = step / (KB / SK), kc = step % (KB / SK);
        if (step >= ST) mbarWait(empty0 + 8 * s, ((step / ST) - 1) & 1);
        mbarExpectTx(full0 + 8 * s, SB);
        for (int r = 0; r < SR / 8; ++r)
          for (int u = 0; u < SK / 64; ++u)
            tma2d(base + s * SB + (r * (SK / 64) + u) * 1024, &tw, full0 + 8 * s, k0 + kc * SK + 64 * u,
                  r0 + rg * SR + 8 * r, pw);
      }
    }
  } else {
    unsigned a = 0;
    for (int step = 0; step < STEPS; ++step) {
      const int s = step % ST;
      mbarWait(full0 + 8 * s, (step / ST) & 1);
      a += *reinterpret_cast<volatile unsigned *>(dyn + (base - smemU32(dyn)) + s * SB + 4 * lane);
      __syncwarp();
      if (lane == 0) mbarArrive(empty0 + 8 * s);
    }
    if (a == 0x9e3779b9u) *sink = a;
  }
}

// A kernel fusec generated for this layer (fusec compile ... --emit cuda),
// timed in the same harness: -DFUSEC_GEN='"path.cu"'.
#ifdef FUSEC_GEN
#include FUSEC_GEN
#endif

// The TMA's views of the weights and of each layer's input (version 5).
CUtensorMap mapW[3][4], mapX[4];  // weights by L2 promotion: 256 B, none, 128 B
CUtensorMap mapW8[4];              // 8-row boxes
void makeMaps() {
  PFN_cuTensorMapEncodeTiled_v12000 enc = nullptr;
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&enc, 12000, cudaEnableDefault, &q));
  auto mk = [&](CUtensorMap *m, void *p, cuuint64_t rows, cuuint32_t boxRows,
                CUtensorMapL2promotion promo = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
    cuuint64_t dims[2] = {K, rows}, strides[1] = {(cuuint64_t)K * 2};
    cuuint32_t box[2] = {64, boxRows}, es[2] = {1, 1};
    CUresult r = enc(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, p, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                     CU_TENSOR_MAP_SWIZZLE_128B, promo, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) { printf("cuTensorMapEncodeTiled: %d\n", (int)r); exit(1); }
  };
  for (int l = 0; l < 4; ++l) {
    mk(&mapW[0][l], W[l], N, 64);
    mk(&mapW[1][l], W[l], N, 64, CU_TENSOR_MAP_L2_PROMOTION_NONE);
    mk(&mapW[2][l], W[l], N, 64, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
    mk(&mapW8[l], W[l], N, 8);
    mk(&mapX[l], Y[l], M, 32);
  }
}
// BK: k a stage (64 or 128: two boxes side by side); PROMO: mapW's index;
// ONE: shared memory padded so one block fits an SM.
template <int KS, int ST, bool EARLY, bool SIGNAL, int MODE = 0, int BK = 64, int PROMO = 0, bool ONE = false, int EPI = 0>
void tma(const char *name, float floorUs) {
  auto k = decodeTma<KS, ST, EARLY, SIGNAL, MODE, BK, EPI>;
  const int smemBytes = ONE ? std::max(150 * 1024, ST * (64 + M) * 2 * BK + 1024) : ST * (64 + M) * 2 * BK + 1024;
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smemBytes));
  report(name, regsOf(k), [&] {
    for (int l = 0; l < 4; ++l)
      launchPdl(k, dim3(N / 64 * KS), dim3(160), (size_t)smemBytes, mapW[PROMO][l], mapX[l], (const __nv_bfloat16 *)Y[l],
                Y[l + 1]);
  }, floorUs);
}

int main(int argc, char **argv) {
  const char *modes[] = {"tma", "stream", "epi", "gen", "timeline"};
  if (argc < 2 || std::none_of(std::begin(modes), std::end(modes), [&](const char *m) { return !strcmp(argv[1], m); })) {
    printf("usage: decode_m32_tma tma | stream | epi | gen | timeline\n");
    return 1;
  }
#ifndef FUSEC_GEN
  if (!strcmp(argv[1], "gen") || !strcmp(argv[1], "timeline")) {
    printf("decode_m32_tma: %s needs a build with -DFUSEC_GEN\n", argv[1]);
    return 1;
  }
#endif
#ifndef FUSEC_TIMELINE
  if (!strcmp(argv[1], "timeline")) {
    printf("decode_m32_tma: timeline needs -DFUSEC_TIMELINE and a kernel from timeline_instrument.py\n");
    return 1;
  }
#endif
  const float floorUs = setUp();
  makeMaps();
  unsigned *sink0;
  CK(cudaMalloc(&sink0, 4));
  auto streamT = [&](const char *name, auto kern, int smemBytes, int threads = 64, int cl = 1) {
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smemBytes));
    float us = timeChain([&] {
      for (int l = 0; l < 4; ++l) {
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(128);
        cfg.blockDim = dim3(threads);
        cfg.dynamicSmemBytes = smemBytes;
        cudaLaunchAttribute at[2];
        at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        at[0].val.programmaticStreamSerializationAllowed = 1;
        at[1].id = cudaLaunchAttributeClusterDimension;
        at[1].val.clusterDim.x = cl, at[1].val.clusterDim.y = 1, at[1].val.clusterDim.z = 1;
        cfg.attrs = at;
        cfg.numAttrs = cl > 1 ? 2 : 1;
        CK(cudaLaunchKernelEx(&cfg, kern, mapW8[l], sink0));
      }
    });
    printf("| %-40s |     | %7.1f | %5.2f | %5.1f%% |  |  |\n", name, us, us / 4, 100 * floorUs / us);
    fflush(stdout);
  };
  if (argc > 1 && !strcmp(argv[1], "stream")) {
    for (int rep = 0; rep < 2; ++rep) {
      streamT("K/2: 64 rows x 64 k, 8 stages", tmaStream<2, 64, 64, 8>, 8 * 8192 + 1024);
      streamT("same, clusters of 2", tmaStream<2, 64, 64, 8>, 8 * 8192 + 1024, 64, 2);
      streamT("same, 4 waiting warps", tmaStream<2, 64, 64, 8, 4>, 8 * 8192 + 1024, 160);
      streamT("same, 4 waiting warps, clusters of 2", tmaStream<2, 64, 64, 8, 4>, 8 * 8192 + 1024, 160, 2);
      streamT("K/2: 8 rows x 1024 k, 6 stages", tmaStream<2, 8, 1024, 6>, 6 * 16384 + 1024);
      tma<2, 8, false, false, 1>("v5 weights only, 8 stages", floorUs);
      tma<2, 8, false, false, 2>("v5 weights only, no epilogue", floorUs);
      tma<2, 8, false, false, 3>("v5 weights only, epilogue w/o cluster", floorUs);
      tma<2, 8, false, false>("v5: K halves, 8 stages", floorUs);
    }
    return 0;
  }
#ifdef FUSEC_GEN
  if (argc > 1 && !strcmp(argv[1], "gen")) {
    const int smemBytes = argc > 2 ? atoi(argv[2]) : 197632;
    CK(cudaFuncSetAttribute(k0_matmul_add, cudaFuncAttributeMaxDynamicSharedMemorySize, smemBytes));
    for (int rep = 0; rep < 3; ++rep) {
      report("fusec's generated kernel", regsOf(k0_matmul_add), [&] {
        for (int l = 0; l < 4; ++l)
          launchPdl(k0_matmul_add, dim3(128), dim3(160), (size_t)smemBytes, (const fz_bf16 *)W[l],
                    (const fz_bf16 *)Y[l], (const fz_bf16 *)Y[l], (fz_bf16 *)Y[l + 1],
                    *reinterpret_cast<const fz_tmap *>(&mapX[l]), *reinterpret_cast<const fz_tmap *>(&mapW[0][l]));
      }, floorUs);
      tma<2, 16, false, false, 0, 64, 0, true, 1>("v5: push, 16 st, 1/SM, no early", floorUs);
      tma<2, 16, true, false, 0, 64, 0, true, 1>("v5: push, 16 st, 1/SM, early loads only", floorUs);
      tma<2, 16, true, true, 0, 64, 0, true, 1>("v5: push, 16 st, 1/SM, early + signal", floorUs);
    }
    CK(cudaGetLastError());
    return 0;
  }
#endif
#ifdef FUSEC_TIMELINE
  // The instrumented kernel (timeline_instrument.py): checked and timed as
  // in `gen`, then three chains back to back, the last one's stamps read:
  // per layer and event, the blocks' earliest, median and latest time (us
  // from the last chain's first block start), and how far apart a cluster's
  // two K halves finish their loops.
  if (!strcmp(argv[1], "timeline")) {
    const int smemBytes = argc > 2 ? atoi(argv[2]) : 197632;
    CK(cudaFuncSetAttribute(k0_matmul_add, cudaFuncAttributeMaxDynamicSharedMemorySize, smemBytes));
    auto run4 = [&] {
      for (int l = 0; l < 4; ++l)
        launchPdl(k0_matmul_add, dim3(128), dim3(160), (size_t)smemBytes, (const fz_bf16 *)W[l],
                  (const fz_bf16 *)Y[l], (const fz_bf16 *)Y[l], (fz_bf16 *)Y[l + 1],
                  *reinterpret_cast<const fz_tmap *>(&mapX[l]), *reinterpret_cast<const fz_tmap *>(&mapW[0][l]));
    };
    report("instrumented generated kernel", regsOf(k0_matmul_add), run4, floorUs);
    static unsigned zero[256];
    CK(cudaMemcpyToSymbol(fz_tlc, zero, sizeof zero));
    for (int c = 0; c < 3; ++c) run4();
    CK(cudaDeviceSynchronize());
    static unsigned long long tl[4][256][8];
    CK(cudaMemcpyFromSymbol(tl, fz_tl, sizeof tl));
    const int blocks = 128;
    unsigned long long origin = ~0ull;
    for (int b = 0; b < blocks; ++b) origin = std::min(origin, tl[0][b][0]);
    const char *names[] = {"start", "wait returned", "first stage", "K loop done", "halves merged", "stored",
                           "last box asked"};
    printf("\n| layer | event | earliest us | median us | latest us |\n|---|---|---|---|---|\n");
    for (int l = 0; l < 4; ++l) {
      for (int e = 0; e < 7; ++e) {
        std::vector<double> v;
        for (int b = 0; b < blocks; ++b) v.push_back((tl[l][b][e] - origin) / 1000.0);
        std::sort(v.begin(), v.end());
        printf("| %d | %s | %.2f | %.2f | %.2f |\n", l, names[e], v.front(), v[v.size() / 2], v.back());
      }
      std::vector<double> d;
      for (int b = 0; b < blocks; b += 2)
        d.push_back(std::fabs((double)tl[l][b][3] - (double)tl[l][b + 1][3]) / 1000.0);
      std::sort(d.begin(), d.end());
      printf("| %d | K halves apart | %.2f | %.2f | %.2f |\n", l, d.front(), d[d.size() / 2], d.back());
    }
    CK(cudaGetLastError());
    return 0;
  }
#endif
  if (argc > 1 && !strcmp(argv[1], "epi")) {
    for (int rep = 0; rep < 2; ++rep) {
      tma<2, 8, false, false>("v5: pull (2 barriers), 8 stages", floorUs);
      tma<2, 8, false, false, 0, 64, 0, false, 1>("v5: push, residual early, 8 st", floorUs);
      tma<2, 6, false, false, 0, 64, 0, false, 1>("v5: push, residual early, 6 st", floorUs);
      tma<2, 8, false, false, 1, 64, 0, false, 1>("v5: push, weights only (timing)", floorUs);
      tma<2, 8, true, true, 0, 64, 0, false, 1>("v5: push, early + signal", floorUs);
      tma<2, 8, true, true, 0, 64, 0, true, 1>("v5: push, early + signal, 1 block/SM", floorUs);
      tma<2, 8, true, true, 0, 64, 0, true, 2>("v5: st.async, early + signal, 1 block/SM", floorUs);
      tma<2, 8, false, false, 0, 64, 0, false, 2>("v5: st.async, 8 st", floorUs);
      tma<2, 12, true, true, 0, 64, 0, true, 1>("v5: push, 12 st, early + signal, 1/SM", floorUs);
      tma<2, 16, true, true, 0, 64, 0, true, 1>("v5: push, 16 st, early + signal, 1/SM", floorUs);
      tma<2, 12, true, true, 0, 64, 0, true, 2>("v5: st.async, 12 st, early + signal, 1/SM", floorUs);
      tma<2, 12, false, false, 0, 64, 0, true, 2>("v5: st.async, 12 st, 1/SM", floorUs);
    }
    CK(cudaGetLastError());
    return 0;
  }
  if (argc > 1 && !strcmp(argv[1], "tma")) {
    for (int rep = 0; rep < 2; ++rep) {
      tma<2, 8, false, false>("v5: K halves, 8 stages", floorUs);
      tma<2, 8, false, false, 1>("v5 weights only, 8 stages", floorUs);
      tma<2, 8, false, false, 1, 64, 1>("v5 weights only, promotion none", floorUs);
      tma<2, 8, false, false, 1, 64, 2>("v5 weights only, promotion 128 B", floorUs);
      tma<2, 4, false, false, 1, 128>("v5 weights only, 128 k a stage, 4 st", floorUs);
      tma<2, 4, false, false, 0, 128>("v5: 128 k a stage, 4 stages", floorUs);
      tma<2, 3, false, false, 0, 128>("v5: 128 k a stage, 3 stages", floorUs);
      tma<2, 8, true, true, 0, 64, 0, true>("v5: 8 stages, early, one block an SM", floorUs);
      tma<2, 8, true, false>("v5: 8 stages, weights before wait only", floorUs);
      tma<2, 8, false, false, 0, 64, 1>("v5: 8 stages, promotion none", floorUs);
    }
    CK(cudaGetLastError());
    return 0;
  }
  return 0;  // not reached: every mode returns above
}
