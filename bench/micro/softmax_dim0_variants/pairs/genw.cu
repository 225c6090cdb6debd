// ---- fusec prelude: storage types, conversions, vector access, reductions ----
typedef unsigned char fz_u8;
struct fz_bf16 { unsigned short bits; };
struct fz_f16 { unsigned short bits; };

// Storage -> compute type. 16-bit floats compute in fp32.
__device__ __forceinline__ float fz_in(float v) { return v; }
__device__ __forceinline__ float fz_in(fz_bf16 v) { return __uint_as_float(((unsigned)v.bits) << 16); }
__device__ __forceinline__ float fz_in(fz_f16 v) {
  float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.bits)); return f;
}
__device__ __forceinline__ int fz_in(int v) { return v; }
__device__ __forceinline__ long long fz_in(long long v) { return v; }
__device__ __forceinline__ bool fz_in(fz_u8 v) { return v != 0; }

// Compute -> storage type, rounding to nearest even.
template <typename S> struct fz_out;
template <> struct fz_out<float> { static __device__ __forceinline__ float of(float v) { return v; } };
template <> struct fz_out<fz_bf16> {
  static __device__ __forceinline__ fz_bf16 of(float v) {
    fz_bf16 r; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r.bits) : "f"(v)); return r;
  }
};
template <> struct fz_out<fz_f16> {
  static __device__ __forceinline__ fz_f16 of(float v) {
    fz_f16 r; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r.bits) : "f"(v)); return r;
  }
};
template <> struct fz_out<int> { static __device__ __forceinline__ int of(int v) { return v; } };
template <> struct fz_out<long long> {
  static __device__ __forceinline__ long long of(long long v) { return v; }
};
template <> struct fz_out<fz_u8> { static __device__ __forceinline__ fz_u8 of(bool v) { return v ? 1 : 0; } };

// Rounding a compute value to a narrower float dtype (explicit casts only).
__device__ __forceinline__ float fz_round_bf16(float v) { return fz_in(fz_out<fz_bf16>::of(v)); }
__device__ __forceinline__ float fz_round_f16(float v) { return fz_in(fz_out<fz_f16>::of(v)); }

// Float -> integer conversions truncate toward zero and saturate; NaN -> 0 (cvt.rzi).
__device__ __forceinline__ int fz_f2i(float v) { return __float2int_rz(v); }
__device__ __forceinline__ long long fz_f2ll(float v) { return __float2ll_rz(v); }

// Fast transcendentals, used only where the result is stored as f16/bf16: their
// error (a few fp32 ulp, 2^-11 relative for tanh.approx) is far below half a
// 16-bit ulp (2^-9 relative for bf16).
__device__ __forceinline__ float fz_tanh_fast(float x) {
  float y; asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x)); return y;
}
// gelu(x) = x * Phi(x) without erff's two polynomial branches: Phi(-|x|) =
// t * 2^(P(t) - x^2 log2(e) / 2) with t = 1 / (1 + |x| / (2 sqrt 2)), P a
// degree-7 fit (relative error of Phi(-|x|) under 3e-6 for all x, about 7e-6
// on gelu in fp32: bench/NOTES.md). 16 instructions against erff's ~30.
__device__ __forceinline__ float fz_gelu_fast(float x) {
  float t, e;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(t) : "f"(fmaf(fabsf(x), 0.353553391f, 1.f)));
  float p = fmaf(-2.294691219e-01f, t, 9.304655625e-01f);
  p = fmaf(p, t, -1.215118789e+00f);
  p = fmaf(p, t, 3.299539343e-01f);
  p = fmaf(p, t, 1.498234468e-02f);
  p = fmaf(p, t, 5.527317734e-01f);
  p = fmaf(p, t, 1.442202360e+00f);
  p = fmaf(p, t, -2.825744676e+00f);  // the fit's constant, less 1 for the half
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(fmaf(x * x, -0.721347520f, p)));
  e *= t;  // Phi(-|x|)
  return x * (x >= 0.f ? 1.f - e : e);
}
// sin/cos reduce the argument by 2*pi in two parts (Cody-Waite) before the
// hardware approximation, which is accurate only near [-pi, pi].
__device__ __forceinline__ float fz_reduce_2pi(float x) {
  const float k = rintf(x * 0.15915494309189535f);
  return fmaf(k, -1.7484556e-07f, fmaf(k, -6.28318548202514648f, x));
}
__device__ __forceinline__ float fz_sin_fast(float x) { return __sinf(fz_reduce_2pi(x)); }
__device__ __forceinline__ float fz_cos_fast(float x) { return __cosf(fz_reduce_2pi(x)); }

// NaN-propagating max/min, as the reference interpreter.
__device__ __forceinline__ float fz_max(float a, float b) { return (a != a || a > b) ? a : b; }
__device__ __forceinline__ float fz_min(float a, float b) { return (a != a || a < b) ? a : b; }
__device__ __forceinline__ double fz_max(double a, double b) { return (a != a || a > b) ? a : b; }
__device__ __forceinline__ double fz_min(double a, double b) { return (a != a || a < b) ? a : b; }
__device__ __forceinline__ int fz_max(int a, int b) { return a > b ? a : b; }
__device__ __forceinline__ int fz_min(int a, int b) { return a < b ? a : b; }
__device__ __forceinline__ long long fz_max(long long a, long long b) { return a > b ? a : b; }
__device__ __forceinline__ long long fz_min(long long a, long long b) { return a < b ? a : b; }

// Aligned vector access of N elements of storage type S (N * sizeof(S) in 1..16 bytes).
template <int B> struct fz_vec;
template <> struct fz_vec<16> { typedef uint4 t; };
template <> struct fz_vec<8> { typedef uint2 t; };
template <> struct fz_vec<4> { typedef unsigned t; };
template <> struct fz_vec<2> { typedef unsigned short t; };
template <> struct fz_vec<1> { typedef unsigned char t; };
template <typename S, int N> union fz_pack {
  typename fz_vec<sizeof(S) * N>::t v;
  S s[N];
};
// A vector as it lies in memory, converted later (fz_unpack_raw): loads
// issued well before their use stay raw in registers meanwhile.
template <typename S, int N>
__device__ __forceinline__ fz_pack<S, N> fz_load_raw(const S *__restrict__ p, long long off) {
  fz_pack<S, N> u;
  u.v = __ldg(reinterpret_cast<const typename fz_vec<sizeof(S) * N>::t *>(p + off));
  return u;
}
template <typename S, int N, typename C>
__device__ __forceinline__ void fz_unpack_raw(const fz_pack<S, N> &u, C (&out)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) out[i] = fz_in(u.s[i]);
}
template <typename S, int N, typename C>
__device__ __forceinline__ void fz_load(const S *__restrict__ p, long long off, C (&out)[N]) {
  fz_unpack_raw(fz_load_raw<S, N>(p, off), out);
}
// Two floats rounded to a 16-bit pair in one instruction (lo at the lower
// address), instead of one conversion each and a byte permute.
template <typename S> struct fz_out2 { static constexpr bool ok = false; };
template <> struct fz_out2<fz_bf16> {
  static constexpr bool ok = true;
  static __device__ __forceinline__ unsigned of(float lo, float hi) {
    unsigned r; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r;
  }
};
template <> struct fz_out2<fz_f16> {
  static constexpr bool ok = true;
  static __device__ __forceinline__ unsigned of(float lo, float hi) {
    unsigned r; asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r;
  }
};
// N compute values rounded into the storage vector.
template <typename S, int N, typename C>
__device__ __forceinline__ fz_pack<S, N> fz_pack_out(const C (&in)[N]) {
  fz_pack<S, N> u;
  if constexpr (fz_out2<S>::ok && N % 2 == 0) {
    unsigned w[N / 2];
#pragma unroll
    for (int i = 0; i < N / 2; ++i) w[i] = fz_out2<S>::of(in[2 * i], in[2 * i + 1]);
    memcpy(&u.v, w, sizeof(w));
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) u.s[i] = fz_out<S>::of(in[i]);
  }
  return u;
}
template <typename S, int N, typename C>
__device__ __forceinline__ void fz_store(S *__restrict__ p, long long off, const C (&in)[N]) {
  *reinterpret_cast<typename fz_vec<sizeof(S) * N>::t *>(p + off) = fz_pack_out<S, N>(in).v;
}
// The same VEC elements from shared memory (a row of a cached tile).
template <typename S, int N, typename C>
__device__ __forceinline__ void fz_load_shared(const S *p, C (&out)[N]) {
  fz_pack<S, N> u;
  u.v = *reinterpret_cast<const typename fz_vec<sizeof(S) * N>::t *>(p);
#pragma unroll
  for (int i = 0; i < N; ++i) out[i] = fz_in(u.s[i]);
}
template <typename S>
__device__ __forceinline__ auto fz_load1(const S *__restrict__ p, long long off) -> decltype(fz_in(*p)) {
  return fz_in(p[off]);
}

// Asynchronous 16-byte copies global -> shared (sm_80+), to fill a buffer while
// the block works on another.
__device__ __forceinline__ void fz_cp16(void *smem, const void *gmem) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void fz_cp_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void fz_cp_wait() {
  asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
}

// Zero-filling variant: `valid` false writes 16 zero bytes and reads nothing
// (tile edges of a GEMM).
__device__ __forceinline__ void fz_cp16z(void *smem, const void *gmem, bool valid) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(s), "l"(gmem), "r"(valid ? 16 : 0) : "memory");
}

// Tensor cores (sm_80+): four 8x8 matrices from shared memory, as stored or
// transposed, and one m16n8k16 multiply-accumulate with fp32 accumulators.
__device__ __forceinline__ void fz_ldsm4(unsigned (&r)[4], const void *p) {
  unsigned s = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(s));
}
__device__ __forceinline__ void fz_ldsm4t(unsigned (&r)[4], const void *p) {
  unsigned s = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(s));
}
__device__ __forceinline__ void fz_mma_bf16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void fz_mma_f16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

#if __CUDA_ARCH__ >= 900
// Thread block clusters (sm_90): rank, barrier, and loads from a peer block's
// shared memory.
__device__ __forceinline__ unsigned fz_cluster_rank() {
  unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r;
}
__device__ __forceinline__ void fz_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ double fz_dsmem_ld(const double *p, unsigned rank) {
  unsigned local = (unsigned)__cvta_generic_to_shared(p), remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  double v;
  asm volatile("ld.shared::cluster.f64 %0, [%1];" : "=d"(v) : "r"(remote) : "memory");
  return v;
}
#endif

// Programmatic dependent launch (sm_90+): the runtime launches a kernel as
// the last blocks of the one before it exit, before that grid has completed,
// so its launch and block set-up overlap the other's completion. Every kernel
// calls fz_after_prior()
// before its first global load or store: it waits until the prior grid has
// completed and its writes are visible. Launched the ordinary way it is a
// no-op. Kernels do not signal their dependents early (launch_dependents):
// the next kernel is then launched as this one's blocks exit, which measured
// faster than an early signal, whose waiting blocks sat beside long GEMMs
// (bench/NOTES.md, "Kernels launched beside the previous one's tail"). The
// one exception is the Hopper decode dot-product kernel (WgmmaGemv.cpp),
// which fills every SM with one block and whose next layer then streams its
// weights during this one's tail.
__device__ __forceinline__ void fz_after_prior() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Reductions across the W lanes of a warp segment (W a power of two <= 32).
struct fz_sum_op { template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; } };
struct fz_max_op { template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return fz_max(a, b); } };
struct fz_min_op { template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return fz_min(a, b); } };
template <int W, typename T, typename Op>
__device__ __forceinline__ T fz_warp_reduce(T v, Op op) {
#pragma unroll
  for (int o = W / 2; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// Reduction across a whole block of NT threads (NT a multiple of 32); every thread gets the result.
template <int NT, typename T, typename Op>
__device__ __forceinline__ T fz_block_reduce(T v, Op op, T *smem) {
  v = fz_warp_reduce<32>(v, op);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // smem may still be read by the previous reduction
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  // Lanes below NT/32 reduce among themselves (xor offsets stay below NT/32);
  // the others compute nothing useful, and lane 0's result is broadcast.
  v = smem[lane < NT / 32 ? lane : 0];
  v = fz_warp_reduce<(NT / 32 < 32 ? NT / 32 : 32)>(v, op);
  return __shfl_sync(0xffffffffu, v, 0);
}
// ---- end of prelude ----

// kernel k0_max_sub_exp_sum_etc (column_reduction)
//   graph nodes: y
//   ops: max sub exp sum div
//   HBM bytes: 268435456 fused (1073807360 if each op ran alone); predicted 93.68 us (unfused 378.94 us)
//   schedule: 8192 reduced x 8192 kept; 64 tiles, each 2 clusters (4096 rows each) that exchange (max, sum) through global memory: 128 clusters of 8 blocks, each 512 rows x 128 columns, read once: max and sum in one pass (online); rows per thread 4 in registers, 16 in shared memory, 12 in L2
// ---- online softmax, L2 cache hints ----
__device__ __forceinline__ float fz_ex2(float x) {
  float y; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y;
}
// Folds a batch of rows x[] into a running (max m, sum s of exp(. - m)); the
// sum is rescaled only when the max grows, which is rare after the first rows
// (one exponential per element, not two). A NaN in x is dropped by fmaxf but
// makes s NaN, and the column's max becomes NaN at the end (fz_stat). FMA:
// the exponent as one fma (16-bit data; its error grows with |m|, 2^-24 |m|).
// While m is -inf (nothing but -inf or NaN so far) the exponent is taken
// against 0, not m: exp(-inf) adds 0 and a NaN still reaches the sum, with a
// select, not a branch per column and batch (those were 13% more
// instructions than bench/micro/column_softmax.cu, bench/NOTES.md session p).
template <int B, bool FMA>
__device__ __forceinline__ void fz_online_add(float &m, float &s, const float (&x)[B]) {
  float bm = m;
#pragma unroll
  for (int u = 0; u < B; ++u) bm = fmaxf(bm, x[u]);
  if (bm > m) { s *= fz_ex2((m - bm) * 1.4426950408889634f); m = bm; }
  const bool none = m == -__int_as_float(0x7f800000);
  const float mr = none ? 0.f : m, ml = mr * 1.4426950408889634f;
#pragma unroll
  for (int u = 0; u < B; ++u)
    s += fz_ex2(FMA ? fmaf(x[u], 1.4426950408889634f, -ml) : (x[u] - mr) * 1.4426950408889634f);
}
// Merges another running (max, sum) into (m, s). While both maxima are -inf
// the exponents are taken against 0 (they are 0, and a NaN either sum holds
// stays NaN): a select, not a branch. The merges run between pass one and
// the outputs, where every block of a cluster waits for the slowest: as
// branches they cost 1.5 us of 118 (bench/NOTES.md, session q).
__device__ __forceinline__ void fz_online_merge(float &m, float &s, float om, float os) {
  const float nm = fmaxf(m, om), r = nm == -__int_as_float(0x7f800000) ? 0.f : nm;
  s = s * fz_ex2((m - r) * 1.4426950408889634f) + os * fz_ex2((om - r) * 1.4426950408889634f);
  m = nm;
}
__device__ __forceinline__ unsigned long long fz_policy_keep() {
  unsigned long long p; asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p)); return p;
}
__device__ __forceinline__ unsigned long long fz_policy_drop() {
  unsigned long long p; asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p)); return p;
}
__device__ __forceinline__ uint4 fz_ld16(const void *p, unsigned long long pol) {
  uint4 v;
  asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(pol));
  return v;
}
template <typename S, int N, typename C>
__device__ __forceinline__ void fz_unpack(uint4 raw, C (&out)[N]) {
  fz_pack<S, N> u;
  u.v = raw;
#pragma unroll
  for (int i = 0; i < N; ++i) out[i] = fz_in(u.s[i]);
}
// bf16 from whole 32-bit words, a shift or a mask per value (the generic
// path takes each 16-bit half out first): 0.7 us of 117 (bench/NOTES.md).
template <>
__device__ __forceinline__ void fz_unpack<fz_bf16, 8, float>(uint4 raw, float (&out)[8]) {
  const unsigned w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int i = 0; i < 4; ++i)
    out[2 * i] = __uint_as_float(w[i] << 16), out[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
}
// fz_store with an L2 evict_first hint: the outputs are not read again here.
template <typename S, int N, typename C>
__device__ __forceinline__ void fz_store_ef(S *__restrict__ p, long long off, const C (&in)[N]) {
  const uint4 v = fz_pack_out<S, N>(in).v;
  asm volatile("st.global.L1::no_allocate.L2::cache_hint.v4.u32 [%0], {%1,%2,%3,%4}, %5;"
               :: "l"(p + off), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "l"(fz_policy_drop()) : "memory");
}
__device__ __forceinline__ float2 fz_dsmem_ld2(const float2 *p, unsigned rank) {
  unsigned local = (unsigned)__cvta_generic_to_shared(p), remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  float2 v;
  asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "r"(remote) : "memory");
  return v;
}

// ---- two clusters a tile: their (max, sum) through global memory ----
// A statistic travels as one 64-bit word {value bits, epoch}: a single
// 64-bit store is seen whole, so a word that carries this launch's epoch is
// this launch's value, with no flag and no fence (a flag and fences measured
// 6.5 us of 115, these words 1.6; bench/NOTES.md session v).
__device__ __forceinline__ void fz_publish(unsigned long long *w, float2 a, unsigned epoch) {
  const unsigned long long e = (unsigned long long)epoch << 32;
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" :: "l"(w), "l"(e | __float_as_uint(a.x)) : "memory");
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" :: "l"(w + 1), "l"(e | __float_as_uint(a.y)) : "memory");
}
// Waits for a word of this epoch. The other cluster of the pair is the
// next or previous in launch order, so it is resident or next to start;
// should it never come, the launch fails after 2^32 SM cycles (2-4 s)
// instead of hanging (the SM's cycle counter: the global timer is slower
// to read).
// Both words are read at once (one round trip a poll, not two in turn).
__device__ __forceinline__ float2 fz_await(const unsigned long long *w, unsigned epoch) {
  const long long t0 = clock64();
  for (;;) {
    unsigned long long a, b;
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(a) : "l"(w) : "memory");
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(b) : "l"(w + 1) : "memory");
    if ((unsigned)(a >> 32) == epoch && (unsigned)(b >> 32) == epoch)
      return make_float2(__uint_as_float((unsigned)a), __uint_as_float((unsigned)b));
    if (clock64() - t0 > (1ll << 32)) __trap();
  }
}
// A peer block's shared memory as a plain pointer: its loads are ordinary
// ones the compiler may batch (fz_dsmem_ld2's are volatile).
__device__ __forceinline__ const float2 *fz_peer(const float2 *p, unsigned rank) {
  unsigned long long r;
  asm("mapa.u64 %0, %1, %2;" : "=l"(r) : "l"(p), "r"(rank));
  return reinterpret_cast<const float2 *>(r);
}

extern "C" __global__ void __cluster_dims__(8, 1, 1) __launch_bounds__(256, 3)
k0_max_sub_exp_sum_etc(const fz_bf16 *__restrict__ in0, fz_bf16 *__restrict__ out0, unsigned char *__restrict__ fz_scratch) {
  fz_after_prior();  // the previous kernel's writes are visible from here on
  __shared__ unsigned fz_epoch_s;  // this launch's: one more than the last one's
  unsigned long long fz_last = 0;
  typedef long long fz_idx;
  extern __shared__ __align__(16) unsigned char fz_dyn[];
  fz_bf16 (*cache0)[128] = reinterpret_cast<fz_bf16 (*)[128]>(fz_dyn);
  __shared__ __align__(16) float2 fz_wred[8][128];  // per warp (max, sum)
  __shared__ float2 fz_part[128];  // this block's, read by the cluster
  float4 *const fz_stat = reinterpret_cast<float4 *>(&fz_wred[0][0]);  // the column's statistics
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const unsigned member = fz_cluster_rank();
  // Tile t's rows: the first half in cluster 2t, the second in cluster 2t + 1.
  const fz_idx tile = blockIdx.x / 16;
  const unsigned fz_half = blockIdx.x / 8 % 2;
  const fz_idx rbase = (fz_idx)fz_half * 4096 + (fz_idx)member * 512;
  if (threadIdx.x == 0)  // this half's word of the tile's first column
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(fz_last) : "l"(reinterpret_cast<unsigned long long *>(fz_scratch) + (tile * 256 + fz_half * 128) * 2) : "memory");
  const fz_idx kbase = (tile * 16 + tx) * 8;
  const bool active = true;  // whole tiles
  const fz_idx kb = active ? kbase : 0;  // compute on a valid column, store nothing
  const fz_idx kl = kb;
  const unsigned long long fz_keep = fz_policy_keep(), fz_drop = fz_policy_drop();
  float fz_rm[8], fz_rs[8];  // running max, sum
  #pragma unroll
  for (int l = 0; l < 8; ++l) fz_rm[l] = -__int_as_float(0x7f800000), fz_rs[l] = 0.f;
  uint4 fz_reg0[4];  // this thread's first rows
  // pass 1: HBM -> registers, shared memory, L2 (evict_last); running (max, sum)
    #pragma unroll
    for (int fz_k = 0; fz_k < 4; fz_k += 4) {
      uint4 fz_raw0[4];
      float fz_x[8][4];
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int fz_q = fz_k + u;
        const fz_idx rrow = rbase + ty + fz_q * 16;
        const fz_idx r0 = rrow;
        fz_raw0[u] = fz_ld16(in0 + ((r0 * 8192 + kl)), fz_drop);
      }
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int fz_q = fz_k + u;
        {
          fz_reg0[fz_q] = fz_raw0[u];
          const fz_idx rrow = rbase + ty + fz_q * 16;
          const fz_idx r0 = rrow;
          float cv0[8];
          fz_unpack<fz_bf16, 8>(fz_raw0[u], cv0);
          #pragma unroll
          for (int l = 0; l < 8; ++l) {
            const fz_idx k1 = kl + l;
            const float v0 = cv0[l];
            fz_x[l][u] = (float)v0;
          }
        }
      }
      #pragma unroll
      for (int l = 0; l < 8; ++l) fz_online_add<4, true>(fz_rm[l], fz_rs[l], fz_x[l]);
    }
    #pragma unroll 1
    for (int fz_k = 4; fz_k < 20; fz_k += 4) {
      uint4 fz_raw0[4];
      float fz_x[8][4];
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int fz_q = fz_k + u;
        const fz_idx rrow = rbase + ty + fz_q * 16;
        const fz_idx r0 = rrow;
        fz_raw0[u] = fz_ld16(in0 + ((r0 * 8192 + kl)), fz_drop);
      }
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int fz_q = fz_k + u;
        {
          *reinterpret_cast<uint4 *>(&cache0[(fz_q - 4) * 16 + ty][tx * 8]) = fz_raw0[u];
          const fz_idx rrow = rbase + ty + fz_q * 16;
          const fz_idx r0 = rrow;
          float cv0[8];
          fz_unpack<fz_bf16, 8>(fz_raw0[u], cv0);
          #pragma unroll
          for (int l = 0; l < 8; ++l) {
            const fz_idx k1 = kl + l;
            const float v0 = cv0[l];
            fz_x[l][u] = (float)v0;
          }
        }
      }
      #pragma unroll
      for (int l = 0; l < 8; ++l) fz_online_add<4, true>(fz_rm[l], fz_rs[l], fz_x[l]);
    }
    #pragma unroll 1
    for (int fz_k = 20; fz_k < 32; fz_k += 4) {
      uint4 fz_raw0[4];
      float fz_x[8][4];
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int fz_q = fz_k + u;
        const fz_idx rrow = rbase + ty + fz_q * 16;
        const fz_idx r0 = rrow;
        fz_raw0[u] = fz_ld16(in0 + ((r0 * 8192 + kl)), fz_keep);
      }
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int fz_q = fz_k + u;
        {
          const fz_idx rrow = rbase + ty + fz_q * 16;
          const fz_idx r0 = rrow;
          float cv0[8];
          fz_unpack<fz_bf16, 8>(fz_raw0[u], cv0);
          #pragma unroll
          for (int l = 0; l < 8; ++l) {
            const fz_idx k1 = kl + l;
            const float v0 = cv0[l];
            fz_x[l][u] = (float)v0;
          }
        }
      }
      #pragma unroll
      for (int l = 0; l < 8; ++l) fz_online_add<4, true>(fz_rm[l], fz_rs[l], fz_x[l]);
    }
  uint4 fz_pre0[4];
  #pragma unroll
  for (int u = 0; u < 4; ++u) {
    const int fz_q = 20 + u;
    const fz_idx rrow = rbase + ty + fz_q * 16;
    const fz_idx r0 = rrow;
    fz_pre0[u] = fz_ld16(in0 + ((r0 * 8192 + kl)), fz_drop);
  }
  if (threadIdx.x == 0) fz_epoch_s = (unsigned)(fz_last >> 32) + 1u;
  #pragma unroll
  for (int l = 0; l < 8; ++l) {
    float m = fz_rm[l], sum = fz_rs[l];
    for (int o = 16; o < 32; o <<= 1)
      fz_online_merge(m, sum, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, sum, o));
    if (threadIdx.x % 32 < 16) fz_wred[threadIdx.x / 32][tx * 8 + l] = make_float2(m, sum);
  }
  __syncthreads();
  if (threadIdx.x < 128) {
    const int c = threadIdx.x;
    float2 a = fz_wred[0][c];
    #pragma unroll
    for (int w = 1; w < 8; ++w) fz_online_merge(a.x, a.y, fz_wred[w][c].x, fz_wred[w][c].y);
    fz_part[c] = a;
  }
  fz_cluster_sync();  // every member's partials are published
  const unsigned fz_epoch = fz_epoch_s;
  if (threadIdx.x < 128) {
    const int c = threadIdx.x;
    float2 a = *fz_peer(&fz_part[c], 0);
    #pragma unroll
    for (int q = 1; q < 8; ++q) {
      const float2 b = *fz_peer(&fz_part[c], q);
      fz_online_merge(a.x, a.y, b.x, b.y);
    }
    if (member == 0) fz_publish(reinterpret_cast<unsigned long long *>(fz_scratch) + (tile * 256 + c) * 2 + fz_half * 256, a, fz_epoch);
    fz_stat[c] = make_float4(a.x, a.y, 0.f, 0.f);  // this half's
  }
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");  // done reading peers
  __syncthreads();
  if (threadIdx.x < 128) {
    const int c = threadIdx.x;
    const float4 own = fz_stat[c];
    const float2 b = fz_await(reinterpret_cast<unsigned long long *>(fz_scratch) + (tile * 256 + c) * 2 + (1 - fz_half) * 256, fz_epoch);
    float2 a = fz_half == 0 ? make_float2(own.x, own.y) : b;
    const float2 hi = fz_half == 0 ? b : make_float2(own.x, own.y);
    fz_online_merge(a.x, a.y, hi.x, hi.y);
    if (a.y != a.y && a.x != __int_as_float(0x7f800000)) a.x = a.y;  // a NaN input: max NaN
    // (max, sum, max * log2e, 1 / sum), once per column
    fz_stat[c] = make_float4(a.x, a.y, a.x * 1.4426950408889634f, 1.f / a.y);
  }
  __syncthreads();
  float fz_M[8], fz_S[8], fz_rcp[8], fz_ML[8];
  #pragma unroll
  for (int l = 0; l < 8; ++l) {
    const float4 st = fz_stat[tx * 8 + l];
    fz_M[l] = st.x;
    fz_S[l] = st.y;
    fz_ML[l] = st.z;
    fz_rcp[l] = st.w;
  }
  // outputs: the L2 rows first (the longest there), then shared memory, registers
    #pragma unroll
    for (int fz_k = 20; fz_k < 24; fz_k += 4) {
      uint4 fz_raw0[4];
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int fz_q = fz_k + u;
        fz_raw0[u] = fz_pre0[u];
      }
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int fz_q = fz_k + u;
        {
          const fz_idx rrow = rbase + ty + fz_q * 16;
          const fz_idx r0 = rrow;
          float cv0[8];
          fz_unpack<fz_bf16, 8>(fz_raw0[u], cv0);
      float o0[8];
          #pragma unroll
          for (int l = 0; l < 8; ++l) {
            const fz_idx k1 = kl + l;
            const float v0 = cv0[l];
            const float v1 = fz_ex2(fmaf(v0, 1.4426950408889634f, -fz_ML[l]));
            const float v2 = (v1 * fz_rcp[l]);
          o0[l] = v2;
          }
      if (active) fz_store_ef<fz_bf16, 8>(out0, (r0 * 8192 + kl), o0);
        }
      }
    }
    #pragma unroll 1
    for (int fz_k = 24; fz_k < 32; fz_k += 4) {
      uint4 fz_raw0[4];
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int fz_q = fz_k + u;
        const fz_idx rrow = rbase + ty + fz_q * 16;
        const fz_idx r0 = rrow;
        fz_raw0[u] = fz_ld16(in0 + ((r0 * 8192 + kl)), fz_drop);
      }
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int fz_q = fz_k + u;
        {
          const fz_idx rrow = rbase + ty + fz_q * 16;
          const fz_idx r0 = rrow;
          float cv0[8];
          fz_unpack<fz_bf16, 8>(fz_raw0[u], cv0);
      float o0[8];
          #pragma unroll
          for (int l = 0; l < 8; ++l) {
            const fz_idx k1 = kl + l;
            const float v0 = cv0[l];
            const float v1 = fz_ex2(fmaf(v0, 1.4426950408889634f, -fz_ML[l]));
            const float v2 = (v1 * fz_rcp[l]);
          o0[l] = v2;
          }
      if (active) fz_store_ef<fz_bf16, 8>(out0, (r0 * 8192 + kl), o0);
        }
      }
    }
    #pragma unroll 1
    for (int fz_k = 4; fz_k < 20; fz_k += 4) {
      uint4 fz_raw0[4];
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int fz_q = fz_k + u;
        fz_raw0[u] = *reinterpret_cast<const uint4 *>(&cache0[(fz_q - 4) * 16 + ty][tx * 8]);
      }
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int fz_q = fz_k + u;
        {
          const fz_idx rrow = rbase + ty + fz_q * 16;
          const fz_idx r0 = rrow;
          float cv0[8];
          fz_unpack<fz_bf16, 8>(fz_raw0[u], cv0);
      float o0[8];
          #pragma unroll
          for (int l = 0; l < 8; ++l) {
            const fz_idx k1 = kl + l;
            const float v0 = cv0[l];
            const float v1 = fz_ex2(fmaf(v0, 1.4426950408889634f, -fz_ML[l]));
            const float v2 = (v1 * fz_rcp[l]);
          o0[l] = v2;
          }
      if (active) fz_store_ef<fz_bf16, 8>(out0, (r0 * 8192 + kl), o0);
        }
      }
    }
    #pragma unroll
    for (int fz_k = 0; fz_k < 4; fz_k += 4) {
      uint4 fz_raw0[4];
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int fz_q = fz_k + u;
        fz_raw0[u] = fz_reg0[fz_q];
      }
      #pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int fz_q = fz_k + u;
        {
          const fz_idx rrow = rbase + ty + fz_q * 16;
          const fz_idx r0 = rrow;
          float cv0[8];
          fz_unpack<fz_bf16, 8>(fz_raw0[u], cv0);
      float o0[8];
          #pragma unroll
          for (int l = 0; l < 8; ++l) {
            const fz_idx k1 = kl + l;
            const float v0 = cv0[l];
            const float v1 = fz_ex2(fmaf(v0, 1.4426950408889634f, -fz_ML[l]));
            const float v2 = (v1 * fz_rcp[l]);
          o0[l] = v2;
          }
      if (active) fz_store_ef<fz_bf16, 8>(out0, (r0 * 8192 + kl), o0);
        }
      }
    }
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");  // peers are done with fz_part
}
