// Microbenchmark for decode with 32 rows (issue 5: every linear layer at 80%
// of the copy rate on its weight bytes, in a stream): y = y @ W^T + y, four
// layers in a row, W [4096, 4096] bf16 (32 MB), y [32, 4096] bf16, launched
// back to back as fusec launches them (programmatic dependent launch), with
// plain reads of the same weights as the floor. Results: bench/NOTES.md,
// session 2026-11-27q, rounds 6-12 and 17.
//
// fusec's tensor-core form copies A (the 32 activation rows) through every
// warp's cp.async stages with the weights: 2 KB of A per 1 KB of weights per
// step. Here a cluster of KH blocks shares a 64-row slab of W, one K part
// each; a block copies its part of A into shared memory once (laid out as
// the lanes' mma B fragments, in eight groups the warps wait for in turn),
// and each lane keeps D steps of its weight rows in flight in registers.
// KQ warps split the part along K inside a block; the parts' sums meet
// through distributed shared memory and each block writes M / KH rows with
// the residual. Version 2 has no split inside a block (a warp owns 16 rows
// over its whole part).
//
// Version 5 (TMA + wgmma) is in decode_m32_tma.cu; the harness both use in
// decode_m32_common.cuh.
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o decode_m32 decode_m32.cu

#include "decode_m32_common.cuh"

constexpr int TILES = 4;               // 16-row weight tiles per block
constexpr int ROWS = 16 * TILES;       // weight rows per block
constexpr int MT = M / 8;              // 8-row activation tiles (mma n)
constexpr int GROUPS = 8;              // cp.async groups of A

__device__ __forceinline__ uint4 ldW(const void *p, unsigned long long pol) {
  uint4 v;
  asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(pol));
  return v;
}
__device__ __forceinline__ void cp16(void *smem, const void *gmem) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cpCommit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int W> __device__ __forceinline__ void cpWait() { asm volatile("cp.async.wait_group %0;" :: "n"(W) : "memory"); }
__device__ __forceinline__ void cpWaitPending(int n) {
  switch (n) {
    case 0: cpWait<0>(); break; case 1: cpWait<1>(); break; case 2: cpWait<2>(); break;
    case 3: cpWait<3>(); break; case 4: cpWait<4>(); break; case 5: cpWait<5>(); break;
    case 6: cpWait<6>(); break; default: cpWait<7>(); break;
  }
}
__device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// EARLY: the first D steps of weights are loaded before griddepcontrol.wait
// (the weights are no kernel's output; A and the residual are). SIGNAL: the
// next layer may launch (griddepcontrol.launch_dependents) once this block's
// last weight loads are issued. MINB: blocks an SM the registers allow.
// NOA: A is not copied (wrong results; timing only). NOMMA: the weights are
// folded by xor instead of mma (wrong results; timing only).
// PAT (timing of the weight stream, with NOA and NOMMA): 0 the fragment
// layout (a lane 16 bytes of row g at k 8t + 32s: 64 contiguous bytes a row
// per load); 1 a lane 32 bytes at k 16t + 64p, two loads; 2 as 1 with L1
// caching; 3 eight lanes a row, 128 contiguous bytes a row per load; 4 one
// row's 512 contiguous bytes per load.
template <int KH, int KQ, int D, int MINB, bool EARLY, bool SIGNAL, bool NOA = false, bool NOMMA = false, int PAT = 0>
__global__ void __cluster_dims__(KH, 1, 1) __launch_bounds__(TILES * KQ * 32, MINB)
    decodeKsplit(const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ w,
              __nv_bfloat16 *__restrict__ y) {
  constexpr int WARPS = TILES * KQ, KB = K / KH, KW = KB / KQ, STEPS = KW / 32;
  static_assert(STEPS % GROUPS == 0, "whole steps per group");
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ __align__(16) float part[M][ROWS];  // this block's K half, read by the peer
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int tile = warp % TILES, q = warp / TILES;
  const unsigned rank = clusterRank();
  const int n0 = blockIdx.x / KH * ROWS;
  const int kb0 = rank * KB;                 // the block's K half
  const int kw0 = kb0 + q * KW;              // the warp's K quarter
  const unsigned long long pol = policyFirst();
  const __nv_bfloat16 *wr = w + (size_t)(n0 + 16 * tile + g) * K + kw0 + 8 * t;  // row g; g + 8 at +8 K
  uint4 ring[D][2];
  const __nv_bfloat16 *wp1 = w + (size_t)(n0 + 16 * tile + g) * K + kw0 + 16 * t;
  const __nv_bfloat16 *wp3 = w + (size_t)(n0 + 16 * tile + lane / 8) * K + kw0 + 8 * (lane % 8);
  auto loadStep = [&](int s, uint4 (&dst)[2]) {
    if (PAT == 0) {
      dst[0] = ldW(wr + 32 * s, pol);
      dst[1] = ldW(wr + 8 * K + 32 * s, pol);
    } else if (PAT == 1) {  // row g only (timing)
      dst[0] = ldW(wp1 + 64 * (s / 2) + 8 * (s % 2) + (s % 2 ? 0 : 0), pol);
      dst[1] = ldW(wp1 + 8 * K + 64 * (s / 2) + 8 * (s % 2), pol);
    } else if (PAT == 2) {
      dst[0] = __ldg(reinterpret_cast<const uint4 *>(wp1 + 64 * (s / 2) + 8 * (s % 2)));
      dst[1] = __ldg(reinterpret_cast<const uint4 *>(wp1 + 8 * K + 64 * (s / 2) + 8 * (s % 2)));
    } else if (PAT == 4) {  // one row's 512 contiguous bytes per load: 16 rows x 1024 k in 64 loads
      const int j = 2 * s;
      dst[0] = ldW(w + (size_t)(n0 + 16 * tile + j / 4) * K + kw0 + 256 * (j % 4) + 8 * lane, pol);
      dst[1] = ldW(w + (size_t)(n0 + 16 * tile + (j + 1) / 4) * K + kw0 + 256 * ((j + 1) % 4) + 8 * lane, pol);
    } else {  // rows lane / 8 (+4, +8, +12 over steps): 16 rows x 2 KB covered in 32 steps of 2 loads
      const int rr = (s % 4) * 4, kk = 64 * (s / 4);
      dst[0] = ldW(wp3 + (size_t)rr * K + kk, pol);
      dst[1] = ldW(wp3 + (size_t)rr * K + kk + 8 * 64 / 8 * 0 + 512, pol);
    }
  };
  if (EARLY) {
#pragma unroll
    for (int s = 0; s < D; ++s) loadStep(s, ring[s]);
  }
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (!EARLY) {
#pragma unroll
    for (int s = 0; s < D; ++s) loadStep(s, ring[s]);
  }
  // A's K half into shared memory as B fragments: chunk (block step S, mt,
  // lane) at ((S * MT + mt) * 32 + lane) * 16. Copy j of thread i is warp
  // step j of quarter i / 128, so group G holds warp steps 4G .. 4G + 3.
  if (!NOA) {
    const int cq = threadIdx.x / 128, cmt = (threadIdx.x / 32) % MT, cl = threadIdx.x % 32;
    const int m = 8 * cmt + cl / 4, kc = cl % 4;
#pragma unroll
    for (int G = 0; G < GROUPS; ++G) {
#pragma unroll
      for (int jj = 0; jj < STEPS / GROUPS; ++jj) {
        const int j = G * (STEPS / GROUPS) + jj, S = cq * STEPS + j;
        cp16(smem + ((S * MT + cmt) * 32 + cl) * 16, x + (size_t)m * K + kb0 + 32 * S + 8 * kc);
      }
      cpCommit();
    }
  }
  float acc[MT][4] = {};
  const uint4 *afr = reinterpret_cast<const uint4 *>(smem) + (q * STEPS * MT) * 32 + lane;
#pragma unroll
  for (int s = 0; s < STEPS; ++s) {
    if (!NOA && s % (STEPS / GROUPS) == 0) {
      cpWaitPending(GROUPS - 1 - s / (STEPS / GROUPS));  // group s / (STEPS / GROUPS) is in
      __syncthreads();
    }
    const uint4 lo = ring[s % D][0], hi = ring[s % D][1];
    if (s + D < STEPS) loadStep(s + D, ring[s % D]);
    if (SIGNAL && s + D == STEPS) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    const unsigned f0[4] = {lo.x, hi.x, lo.y, hi.y}, f1[4] = {lo.z, hi.z, lo.w, hi.w};
    if (NOMMA) {
      acc[s % MT][0] += __uint_as_float((f0[0] ^ f0[1] ^ f0[2] ^ f0[3] ^ f1[0] ^ f1[1] ^ f1[2] ^ f1[3]) & 0x3fffffffu);
    } else {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        const uint4 b = afr[(s * MT + mt) * 32];
        mma(acc[mt], f0, b.x, b.y);
        mma(acc[mt], f1, b.z, b.w);
      }
    }
  }
  // The quarters' sums: red[q][m][n] in the (now free) A buffer.
  __syncthreads();
  float *red = reinterpret_cast<float *>(smem);
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int n = 16 * tile + g + (c / 2) * 8, m = 8 * mt + 2 * t + c % 2;
      red[(q * M + m) * ROWS + n] = acc[mt][c];
    }
  __syncthreads();
  for (int e = threadIdx.x; e < M * ROWS; e += WARPS * 32) {
    float v = 0.f;
#pragma unroll
    for (int qq = 0; qq < KQ; ++qq) v += red[qq * M * ROWS + e];
    part[e / ROWS][e % ROWS] = v;
  }
  clusterSync();
  // rank r writes rows [r M / KH, (r + 1) M / KH) of y, 4 columns at a time
  for (int e = 4 * threadIdx.x; e < M / KH * ROWS; e += 4 * WARPS * 32) {
    const int m = rank * (M / KH) + e / ROWS, n = e % ROWS;
    float4 a = *reinterpret_cast<const float4 *>(&part[m][n]);
#pragma unroll
    for (int r = 1; r < KH; ++r) {
      const float4 b = dsmemLd4(reinterpret_cast<const float4 *>(&part[m][n]), (rank + r) % KH);
      a.x += b.x, a.y += b.y, a.z += b.z, a.w += b.w;
    }
    storeResidual(a, x, y, (size_t)m * N + n0 + n);
  }
  clusterSync();  // the peers have read our part
}


// Version 2: a cluster of KS blocks per slab of 16 x TILES weight rows, one
// K part each (A's part, 32 x K / KS, in shared memory); a warp owns 16 rows
// over the whole part. Measured: 8 warps an SM (256 threads) cannot stream at
// the plain read's rate whatever the loads in flight (a plain read by 128
// blocks of 256 threads, 8 or 16 loads in flight: 14.8-14.9 us a layer;
// 512 threads: 13.1). SIGNAL: the next layer may launch
// (griddepcontrol.launch_dependents) once a block's last weight loads are
// issued; every block loads its first D steps of weights before
// griddepcontrol.wait (the weights are no kernel's output).
template <int KS, int TILES2, int D, bool SIGNAL>
__global__ void __cluster_dims__(KS, 1, 1) __launch_bounds__(32 * TILES2, 1)
    decodeM32v2(const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ w,
                __nv_bfloat16 *__restrict__ y) {
  constexpr int T = 32 * TILES2, ROWS2 = 16 * TILES2, KP = K / KS, ST = KP / 32, NG = ST / 4;
  static_assert(NG <= 8 && 512 % T == 0 || T == 512, "groups");
  extern __shared__ __align__(16) unsigned char smem[];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const unsigned rank = clusterRank();
  const int n0 = blockIdx.x / KS * ROWS2;
  const int kq0 = rank * KP;
  const unsigned long long pol = policyFirst();
  const __nv_bfloat16 *wr = w + (size_t)(n0 + 16 * warp + g) * K + kq0 + 8 * t;
  uint4 ring[D][2];
  auto loadStep = [&](int s, uint4 (&dst)[2]) {
    dst[0] = ldW(wr + 32 * s, pol);
    dst[1] = ldW(wr + 8 * K + 32 * s, pol);
  };
#pragma unroll
  for (int s = 0; s < D; ++s) loadStep(s, ring[s]);
  asm volatile("griddepcontrol.wait;" ::: "memory");
  // A's part: chunk (S, mt, lane) at ((S * MT + mt) * 32 + lane) * 16; group
  // G holds steps 4G .. 4G + 3 (512 chunks).
#pragma unroll
  for (int G = 0; G < NG; ++G) {
#pragma unroll
    for (int jj = 0; jj < 512 / T; ++jj) {
      const int c = G * 512 + jj * T + threadIdx.x, S = c / 128, cmt = (c / 32) % MT, cl = c % 32;
      cp16(smem + ((S * MT + cmt) * 32 + cl) * 16, x + (size_t)(8 * cmt + cl / 4) * K + kq0 + 32 * S + 8 * (cl % 4));
    }
    cpCommit();
  }
  float acc[MT][4] = {};
  const uint4 *afr = reinterpret_cast<const uint4 *>(smem) + lane;
#pragma unroll
  for (int s = 0; s < ST; ++s) {
    if (s % 4 == 0) {
      cpWaitPending(NG - 1 - s / 4);
      __syncthreads();
    }
    const uint4 lo = ring[s % D][0], hi = ring[s % D][1];
    if (s + D < ST) loadStep(s + D, ring[s % D]);
    if (SIGNAL && s + D == ST) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    const unsigned f0[4] = {lo.x, hi.x, lo.y, hi.y}, f1[4] = {lo.z, hi.z, lo.w, hi.w};
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      const uint4 b = afr[(s * MT + mt) * 32];
      mma(acc[mt], f0, b.x, b.y);
      mma(acc[mt], f1, b.z, b.w);
    }
  }
  __syncthreads();  // A is read: its buffer takes this block's sums, part[m][n]
  float *part = reinterpret_cast<float *>(smem);
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int c = 0; c < 4; ++c)
      part[(8 * mt + 2 * t + c % 2) * ROWS2 + 16 * warp + g + (c / 2) * 8] = acc[mt][c];
  clusterSync();
  // rank r writes rows [r M / KS, (r + 1) M / KS) of y, 4 columns at a time
  for (int e = 4 * threadIdx.x; e < M / KS * ROWS2; e += 4 * T) {
    const int m = rank * (M / KS) + e / ROWS2, n = e % ROWS2;
    const float4 *pp = reinterpret_cast<const float4 *>(part + m * ROWS2 + n);
    float4 a = *pp;
#pragma unroll
    for (int r = 1; r < KS; ++r) {
      const float4 b = dsmemLd4(pp, (rank + r) % KS);
      a.x += b.x, a.y += b.y, a.z += b.z, a.w += b.w;
    }
    storeResidual(a, x, y, (size_t)m * N + n0 + n);
  }
  clusterSync();  // the peers have read our sums
}

// A plain read by few warps: U 16-byte loads in flight per thread, each
// block a contiguous share (timing only).
template <int U>
__global__ void readFew(const uint4 *w, size_t n, unsigned *sink) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const size_t per = n / gridDim.x, base = blockIdx.x * per;
  unsigned a = 0;
  for (size_t i = threadIdx.x; i < per; i += (size_t)U * blockDim.x) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = __ldcs(w + base + i + (size_t)u * blockDim.x);
#pragma unroll
    for (int u = 0; u < U; ++u) a ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  if (a == 0x9e3779b9u) *sink = a;
}

template <typename Kern>
void runChain(const char *name, Kern k, dim3 grid, dim3 block, int smemBytes, float floorUs) {
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smemBytes));
  report(name, regsOf(k), [&] {
    for (int l = 0; l < 4; ++l)
      launchPdl(k, grid, block, (size_t)smemBytes, (const __nv_bfloat16 *)Y[l], (const __nv_bfloat16 *)W[l], Y[l + 1]);
  }, floorUs);
}
template <int KH, int KQ, int D, int MINB, bool EARLY, bool SIGNAL, bool NOA = false, bool NOMMA = false, int PAT = 0>
void ksplit(const char *name, float floorUs) {
  runChain(name, decodeKsplit<KH, KQ, D, MINB, EARLY, SIGNAL, NOA, NOMMA, PAT>, dim3(N / ROWS * KH),
           dim3(TILES * KQ * 32), K / KH / 32 * MT * 32 * 16, floorUs);
}
template <int KS, int TILES2, int D, bool SIGNAL>
void whole(const char *name, float floorUs) {
  runChain(name, decodeM32v2<KS, TILES2, D, SIGNAL>, dim3(N / (16 * TILES2) * KS), dim3(32 * TILES2),
           K / KS / 32 * MT * 32 * 16, floorUs);
}

int main() {
  const float floorUs = setUp();
  auto few = [&](const char *name, auto kern, int blocks, int threads) {
    float us = timeChain([&] {
      for (int l = 0; l < 4; ++l) launchPdl(kern, dim3(blocks), dim3(threads), 0, (const uint4 *)W[l], (size_t)N * K / 8, sink);
    });
    printf("| %-40s |     | %7.1f | %5.2f | %5.1f%% |  |  |\n", name, us, us / 4, 100 * floorUs / us);
  };
  few("read: 128 x 256 thr, 8 in flight", readFew<8>, 128, 256);
  few("read: 128 x 256 thr, 16 in flight", readFew<16>, 128, 256);
  few("read: 128 x 512 thr, 8 in flight", readFew<8>, 128, 512);
  few("read: 256 x 256 thr, 8 in flight", readFew<8>, 256, 256);
  few("read: 512 x 256 thr, 4 in flight", readFew<4>, 512, 256);
  few("read: 1024 x 256 thr, 4 in flight", readFew<4>, 1024, 256);
  for (int rep = 0; rep < 2; ++rep) {
    // cluster of 2 K halves, 8 warps (round 6)
    ksplit<2, 2, 4, 1, false, false>("K halves, ring 4", floorUs);
    ksplit<2, 2, 8, 1, false, false>("K halves, ring 8", floorUs);
    ksplit<2, 2, 16, 1, false, false>("K halves, ring 16", floorUs);
    ksplit<2, 2, 8, 1, true, false>("K halves, ring 8, weights before the wait", floorUs);
    // what each part costs (rounds 7-9; wrong values, timing only)
    ksplit<2, 2, 8, 1, false, false, true>("ring 8, no A", floorUs);
    ksplit<2, 2, 8, 1, false, false, true, true>("ring 8, no A, no mma", floorUs);
    ksplit<2, 2, 8, 1, false, false, true, true, 1>("weights only, 32 B a lane", floorUs);
    ksplit<2, 2, 8, 1, false, false, true, true, 2>("weights only, 32 B a lane, L1", floorUs);
    ksplit<2, 2, 8, 1, false, false, true, true, 3>("weights only, 128 B a row", floorUs);
    ksplit<2, 2, 8, 1, false, false, true, true, 4>("weights only, 512 B a row", floorUs);
    // the next layer launched early; more warps an SM (rounds 10-12, 17)
    ksplit<2, 2, 4, 1, true, true>("K halves, ring 4, next layer early", floorUs);
    ksplit<4, 2, 4, 2, true, false>("K quarters x 2, 2 blocks/SM", floorUs);
    ksplit<4, 2, 4, 2, true, true>("K quarters x 2, 2 blocks/SM, early", floorUs);
    ksplit<2, 4, 4, 1, true, true>("K halves x 4, 512 threads, early", floorUs);
    ksplit<2, 4, 4, 1, true, false>("K halves x 4, 512 threads", floorUs);
    whole<4, 8, 4, true>("v2: 4 K parts, 256 threads, early", floorUs);
    whole<8, 16, 4, true>("v2: 8 K parts, 512 threads, early", floorUs);
  }
  CK(cudaGetLastError());
  return 0;
}
