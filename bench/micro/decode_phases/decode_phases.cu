// Times fusec's decode attention kernel instrumented by instrument.py: the
// kernel's time by events (L2 flushed before each launch, 8 input sets
// rotated), a plain read of the same K and V bytes beside it, and the
// spread over blocks of each phase's stamp (bench/NOTES.md, "the decode form").
#include KFILE
#ifdef TMAPS
#include <cstdio>
// The X variant's tensor maps: a K/V tensor as 2-D [entries x keys, 128],
// 64 x 64 boxes with the 128-byte swizzle (variants.py).
static CUtensorMap tensorMap(void *p, size_t rows) {
  CUtensorMap m;
  cuuint64_t dims[2] = {128, rows}, strides[1] = {256};
  cuuint32_t box[2] = {64, 64}, one[2] = {1, 1};
  CUresult r = cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, p, dims, strides, box, one,
                                      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) printf("cuTensorMapEncodeTiled: %d\n", (int)r);
  return m;
}
#define EXTRA , mk[it % sets], mv[it % sets]
#else
#define EXTRA
#endif
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
__global__ void readAll(const float4 *p, size_t n, float *sink) {
  float acc = 0.f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = __ldcs(p + i); acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 12345.f) *sink = acc;
}
// Both K and V in one kernel: the cold read of the kernel's bytes by one launch.
__global__ void readBoth(const float4 *p, const float4 *q, size_t n, float *sink) {
  float acc = 0.f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = __ldcs(p + i), w = __ldcs(q + i); acc += v.x + v.y + v.z + v.w + w.x + w.y + w.z + w.w;
  }
  if (acc == 12345.f) *sink = acc;
}
// Values in [-1, 1) from a hash of the index, as bf16 bits.
__global__ void fill(unsigned short *p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed; h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
    float f = (h & 0xffff) / 32768.f - 1.f;
    p[i] = (unsigned short)(__float_as_uint(f) >> 16);
  }
}
int main(int argc, char **argv) {
  const int GX = GRIDX, GY = GRIDY, smem = SMEM;
  const size_t kv = KVELEMS, q = QELEMS;
  const int sets = 8;
  std::vector<void *> K(sets), V(sets);
  for (int i = 0; i < sets; ++i) { CK(cudaMalloc(&K[i], kv * 2)); CK(cudaMalloc(&V[i], kv * 2)); fill<<<1024, 256>>>((unsigned short *)K[i], kv, 2 * i + 1); fill<<<1024, 256>>>((unsigned short *)V[i], kv, 2 * i + 2); }
  void *Q, *O, *S; CK(cudaMalloc(&Q, q * 2)); CK(cudaMalloc(&O, q * 2)); CK(cudaMalloc(&S, 64 << 20));
  fill<<<16, 256>>>((unsigned short *)Q, q, 99); CK(cudaMemset(S, 0, 64 << 20));
  CK(cudaFuncSetAttribute(k_matmul_mul_max_sub_etc, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
#ifdef TMAPS
#include <cstdio>
  std::vector<CUtensorMap> mk(sets), mv(sets);
  for (int i = 0; i < sets; ++i) { mk[i] = tensorMap(K[i], kv / 128); mv[i] = tensorMap(V[i], kv / 128); }
#endif
  void *flush; CK(cudaMalloc(&flush, 256 << 20));
  std::vector<float> ts, tr;
  for (int it = 0; it < 60; ++it) {
    CK(cudaMemsetAsync(flush, it, 256 << 20));
    cudaEventRecord(a);
    k_matmul_mul_max_sub_etc<<<dim3(GX, GY, 1), 128, smem>>>((const fz_bf16 *)K[it % sets], (const fz_bf16 *)V[it % sets], (const fz_bf16 *)Q, (fz_bf16 *)O, (unsigned char *)S EXTRA);
    cudaEventRecord(b);
    CK(cudaEventSynchronize(b));
    float ms; cudaEventElapsedTime(&ms, a, b); ts.push_back(ms * 1000);
  }
  CK(cudaGetLastError());
  unsigned long long st[1024][8];
  CK(cudaMemcpyFromSymbol(st, fz_stamps, sizeof(st)));
  // the read floor: the same bytes (K and V) read by a plain streaming kernel
  for (int it = 0; it < 60; ++it) {
    CK(cudaMemsetAsync(flush, it, 256 << 20));
    cudaEventRecord(a);
    readAll<<<132 * 8, 256>>>((const float4 *)K[it % sets], kv * 2 / 16, (float *)S);
    readAll<<<132 * 8, 256>>>((const float4 *)V[it % sets], kv * 2 / 16, (float *)S);
    cudaEventRecord(b);
    CK(cudaEventSynchronize(b));
    float ms; cudaEventElapsedTime(&ms, a, b); tr.push_back(ms * 1000);
  }
  // one launch of a kernel reading both
  std::vector<float> t1;
  for (int it = 0; it < 60; ++it) {
    CK(cudaMemsetAsync(flush, it, 256 << 20));
    cudaEventRecord(a);
    readBoth<<<132 * 8, 256>>>((const float4 *)K[it % sets], (const float4 *)V[it % sets], kv * 2 / 16, (float *)S);
    cudaEventRecord(b);
    CK(cudaEventSynchronize(b));
    float ms; cudaEventElapsedTime(&ms, a, b); t1.push_back(ms * 1000);
  }
  std::sort(t1.begin() + 5, t1.end());
  // back to back: 64 launches between one event pair, the 8 sets in turn
  // (268 MB, past L2), each launch's set-up hidden behind the one before
  float chain = 0.f, chainRead = 0.f;
  for (int pass = 0; pass < 2; ++pass) {
    cudaEventRecord(a);
    for (int it = 0; it < 64; ++it)
      if (pass == 0) k_matmul_mul_max_sub_etc<<<dim3(GX, GY, 1), 128, smem>>>((const fz_bf16 *)K[it % sets], (const fz_bf16 *)V[it % sets], (const fz_bf16 *)Q, (fz_bf16 *)O, (unsigned char *)S EXTRA);
      else readBoth<<<132 * 8, 256>>>((const float4 *)K[it % sets], (const float4 *)V[it % sets], kv * 2 / 16, (float *)S);
    cudaEventRecord(b);
    CK(cudaEventSynchronize(b));
    float ms; cudaEventElapsedTime(&ms, a, b);
    (pass == 0 ? chain : chainRead) = ms * 1000 / 64;
  }
  CK(cudaGetLastError());
  std::vector<unsigned short> o(q);
  CK(cudaMemcpy(o.data(), O, q * 2, cudaMemcpyDeviceToHost));
  double sum = 0, sabs = 0;
  for (size_t i = 0; i < q; ++i) { unsigned u = (unsigned)o[i] << 16; float f; memcpy(&f, &u, 4); sum += f; sabs += fabs(f); }
  printf("%s: output sum %.6f, sum |x| %.6f; back to back: kernel %.1f us, one read of K and V %.1f us; one read of K and V alone (event) %.1f us\n", argv[0], sum, sabs, chain, chainRead, t1[5 + 27]);
  std::sort(ts.begin() + 5, ts.end()); std::sort(tr.begin() + 5, tr.end());
  printf("%s: kernel (event) median %.1f us; two plain read kernels of K and V: %.1f us (%.0f GB/s)\n", argv[0], ts[5 + 27], tr[5 + 27], kv * 4 / (tr[5 + 27] * 1e3));
  const int nb = GX * GY;
  unsigned long long t0 = ~0ull, tend = 0;
  for (int i = 0; i < nb; ++i) { t0 = std::min(t0, st[i][0]); tend = std::max(tend, std::max(st[i][4], st[i][5])); }
  printf("first start to last end: %.2f us\n", (tend - t0) / 1000.0);
  const char *names[] = {"start", "tile0 in", "loop done", "partial stored", "handshake"};
  for (int p = 0; p < 5; ++p) {
    std::vector<double> v; for (int i = 0; i < nb; ++i) v.push_back((st[i][p] - t0) / 1000.0);
    std::sort(v.begin(), v.end());
    printf("%-16s min %6.2f  p50 %6.2f  p90 %6.2f  max %6.2f\n", names[p], v[0], v[nb / 2], v[nb * 9 / 10], v[nb - 1]);
  }
  int shown = 0;
  for (int i = 0; i < nb && shown < 4; ++i) if (st[i][5] > st[i][4] && st[i][5] - t0 < 1000000000ull) { ++shown; printf("last block %d: merge %.2f us, ends %.2f\n", i, (st[i][5] - st[i][4]) / 1000.0, (st[i][5] - t0) / 1000.0); }
  return 0;
}
