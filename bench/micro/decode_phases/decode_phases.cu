// Times fusec's decode attention kernel instrumented by instrument.py: the
// kernel's time by events (L2 flushed before each launch, 8 input sets
// rotated), a plain read of the same K and V bytes beside it, and the
// spread over blocks of each phase's stamp (bench/NOTES.md, "the decode form").
#include KFILE
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
__global__ void readAll(const float4 *p, size_t n, float *sink) {
  float acc = 0.f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = __ldcs(p + i); acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 12345.f) *sink = acc;
}
int main(int argc, char **argv) {
  const int GX = GRIDX, GY = GRIDY, smem = SMEM;
  const size_t kv = KVELEMS, q = QELEMS;
  const int sets = 8;
  std::vector<void *> K(sets), V(sets);
  for (int i = 0; i < sets; ++i) { CK(cudaMalloc(&K[i], kv * 2)); CK(cudaMalloc(&V[i], kv * 2)); CK(cudaMemset(K[i], 0x3c, kv*2)); CK(cudaMemset(V[i], 0x3c, kv*2)); }
  void *Q, *O, *S; CK(cudaMalloc(&Q, q * 2)); CK(cudaMalloc(&O, q * 2)); CK(cudaMalloc(&S, 64 << 20));
  CK(cudaMemset(Q, 0x3c, q*2)); CK(cudaMemset(S, 0, 64 << 20));
  CK(cudaFuncSetAttribute(k_matmul_mul_max_sub_etc, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  void *flush; CK(cudaMalloc(&flush, 256 << 20));
  std::vector<float> ts, tr;
  for (int it = 0; it < 60; ++it) {
    CK(cudaMemsetAsync(flush, it, 256 << 20));
    cudaEventRecord(a);
    k_matmul_mul_max_sub_etc<<<dim3(GX, GY, 1), 128, smem>>>((const fz_bf16 *)K[it % sets], (const fz_bf16 *)V[it % sets], (const fz_bf16 *)Q, (fz_bf16 *)O, (unsigned char *)S);
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
