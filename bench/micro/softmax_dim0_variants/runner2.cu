// The generated softmax_dim0 kernel (variant A) and the microbenchmark's best
// layout, timed the same way: with and without a poisoning memset of y before
// each run, inputs rotated over two copies.
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#include "variants.cuh"
#define main micro_main
#include "../../bench/micro/column_softmax.cu"
#undef main
typedef void (*K)(const void *, void *);
// The read-only ceiling: 134 MB read once, 16-byte loads, grid-stride.
__global__ void readAll(const uint4 *x, size_t n, unsigned *sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = __ldcs(x + i); acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) *sink = acc;
}
static float timeRead(const unsigned short *const *x, unsigned *sink) {
  cudaEvent_t a[60], b[60];
  for (int i = 0; i < 60; ++i) cudaEventCreate(&a[i]), cudaEventCreate(&b[i]);
  for (int i = 0; i < 60; ++i) { cudaEventRecord(a[i]); readAll<<<132 * 8, 256>>>((const uint4 *)x[i % 2], 8192ull * 8192 / 8, sink); cudaEventRecord(b[i]); }
  cudaDeviceSynchronize();
  std::vector<float> t;
  for (int i = 10; i < 60; ++i) { float ms; cudaEventElapsedTime(&ms, a[i], b[i]); t.push_back(ms * 1000); }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
static const char *const *names;
static float run(int v, K k, const unsigned short *const *x, unsigned short *y, int poison, cudaEvent_t e0, cudaEvent_t e1) {
  static cudaEvent_t ev[2][64];
  static bool made = false;
  if (!made) { for (auto &r : ev) for (auto &e : r) cudaEventCreate(&e); made = true; }
  const size_t n = 8192ull * 8192;
  std::vector<float> t;
  auto mk = colSoftmax<64, 256, 8, 4, 16, 2, 3, 4, 1>;
  // poison 2: back to back, no sync between runs (as fusec bench)
  for (int i = 0; i < 60; ++i) {
    if (poison == 1) cudaMemsetAsync(y, 0xff, n * 2);
    if (poison == 2) { e0 = ev[0][i]; e1 = ev[1][i]; }
    cudaEventRecord(e0);
    if (v < 0 || names[v][0] == 'L') {
      auto kk = v < 0 ? (void *)mk : (void *)k;
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3(1024); cfg.blockDim = dim3(256); cfg.dynamicSmemBytes = 65536;
      cudaLaunchAttribute at[2];
      at[0].id = cudaLaunchAttributeClusterDimension;
      at[0].val.clusterDim.x = 8; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
      at[1].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
      at[1].val.clusterSchedulingPolicyPreference = cudaClusterSchedulingPolicySpread;
      cfg.attrs = at; cfg.numAttrs = 2;
      if (v < 0) cudaLaunchKernelEx(&cfg, mk, (const uint4 *)x[i % 2], (uint4 *)y, 8192, 8192);
      else { const void *a0 = x[i % 2]; void *a1 = y; void *args[] = {&a0, &a1}; cudaLaunchKernelExC(&cfg, kk, args); }
    } else {
      k<<<1024, 256, 65536>>>(x[i % 2], y);
    }
    cudaEventRecord(e1);
    if (poison == 2) continue;
    cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    if (i >= 10) t.push_back(ms * 1000);
  }
  if (poison == 2) {
    cudaDeviceSynchronize();
    for (int i = 10; i < 60; ++i) { float ms; cudaEventElapsedTime(&ms, ev[0][i], ev[1][i]); t.push_back(ms * 1000); }
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
int main() {
  const size_t n = 8192ull * 8192;
  unsigned short *x[2], *y;
  for (auto &p : x) cudaMalloc(&p, n * 2);
  cudaMalloc(&y, n * 2);
  fillRandom<<<1024, 256>>>((__nv_bfloat16 *)x[0], n, 12345u);
  fillRandom<<<1024, 256>>>((__nv_bfloat16 *)x[1], n, 999u);
  K ks[] = {VARIANT_FUNCS};
  static const char *nm[] = {VARIANT_NAMES};
  names = nm;
  cudaFuncSetAttribute(colSoftmax<64, 256, 8, 4, 16, 2, 3, 4, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
  for (auto k : ks) cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  const int nv = sizeof ks / sizeof ks[0];
  for (int rep = 0; rep < 4; ++rep)
    for (int p = 2; p < 3; ++p)
      for (int v = -1; v < nv; ++v)
        printf("%-32s poison %d  %7.1f us\n", v < 0 ? "micro best layout" : names[v], p, run(v, v < 0 ? nullptr : ks[v], x, y, p, e0, e1));
  { unsigned *sink; cudaMalloc(&sink, 4); for (int i = 0; i < 3; ++i) printf("read-only 134 MB, grid-stride      %7.1f us\n", timeRead(x, sink)); }
  printf("status: %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
