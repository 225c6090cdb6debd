//===- Prelude.cpp - device code every generated kernel starts with -------===//
#include "compiler/codegen/Prelude.h"

namespace fusec::codegen {

const char *kernelPrelude() {
  return R"CUDA(// ---- fusec prelude: storage types, conversions, vector access, reductions ----
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

// 2^x by the exponential unit (the approximation __expf uses): the streamed
// softmaxes take exp(x - m) as fz_ex2(fmaf(x, log2(e), -m log2(e))), one
// instruction before it.
__device__ __forceinline__ float fz_ex2(float x) {
  float y; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y;
}
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
)CUDA";
}

} // namespace fusec::codegen
