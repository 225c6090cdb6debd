// Times the generated pairs kernel of softmax over dim 0 (genw.cu and gen.cu,
// which mk.py writes with build/bin/fusec, and its variants) beside
// bench/micro/column_softmax.cu's pairs kernel, in one harness: 8192 x 8192
// bf16, two input sets in turn, back to back (no sync between runs, as
// `fusec bench`), median of 30 after 10; each variant's outputs checked
// against the reference. Also each one's resident clusters.
// Build: python3 mk.py && nvcc -O3 -arch=sm_90a -o /tmp/pr runner.cu
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#include "variants.cuh"
#define main micro_main
#include "../../column_softmax.cu"
#undef main
typedef void (*K)(const void *, void *, unsigned char *);

struct Launch {
  const void *fn;
  bool clusterAttr;  ///< cluster shape at launch (else __cluster_dims__)
  bool pdl;          ///< programmatic stream serialization, as fusec launches
  bool micro;        ///< the microbenchmark's signature
  const void *prof = nullptr;  ///< per-phase cycle counters (PROF variants)
};

static void launch(const Launch &l, const void *x, void *y, unsigned char *scratch, int *flags, int epoch) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(1024);
  cfg.blockDim = dim3(256);
  cfg.dynamicSmemBytes = 65536;
  cudaLaunchAttribute at[3];
  unsigned n = 0;
  if (l.clusterAttr) {
    at[n].id = cudaLaunchAttributeClusterDimension;
    at[n].val.clusterDim.x = 8, at[n].val.clusterDim.y = 1, at[n].val.clusterDim.z = 1;
    ++n;
    at[n].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
    at[n].val.clusterSchedulingPolicyPreference = cudaClusterSchedulingPolicySpread;
    ++n;
  }
  if (l.pdl) {
    at[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[n].val.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  cfg.attrs = at;
  cfg.numAttrs = n;
  if (l.micro) {
    const uint4 *a0 = (const uint4 *)x;
    uint4 *a1 = (uint4 *)y;
    int r = 8192, c = 8192, c0 = 0, pdl = 0;
    float2 *xc = (float2 *)scratch;
    void *args[] = {&a0, &a1, &r, &c, &c0, &pdl, &xc, &flags, &epoch};
    cudaLaunchKernelExC(&cfg, l.fn, args);
  } else {
    void *args[] = {&x, &y, &scratch};
    cudaLaunchKernelExC(&cfg, l.fn, args);
  }
}

static float timeIt(const Launch &l, const __nv_bfloat16 *const *x, uint4 *y, int *flags, int &clusters) {
  static unsigned char *scratch = nullptr;
  const size_t scratchBytes = 4u << 20;
  if (!scratch) cudaMalloc(&scratch, scratchBytes);
  cudaMemset(scratch, 0, scratchBytes);  // zeroed once per variant, as fusec's scratch
  cudaMemset(flags, 0, (1 << 20) * 4 + 16);
  cudaFuncSetAttribute(l.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
  {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1024), cfg.blockDim = dim3(256), cfg.dynamicSmemBytes = 65536;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = 8, at[0].val.clusterDim.y = 1, at[0].val.clusterDim.z = 1;
    cfg.attrs = at, cfg.numAttrs = l.clusterAttr ? 1 : 0;
    clusters = 0;
    cudaOccupancyMaxActiveClusters(&clusters, l.fn, &cfg);
  }
  cudaMemset(y, 0xff, 8192ull * 8192 * 2);  // poisoned once
  unsigned long long zero[8] = {};
  if (l.prof) cudaMemcpyToSymbol(l.prof, zero, sizeof zero);
  const int runs = 41;                       // the last reads set 0, which the check compares
  std::vector<cudaEvent_t> ev(2 * runs);
  for (cudaEvent_t &e : ev) cudaEventCreate(&e);
  for (int i = 0; i < runs; ++i) {
    cudaEventRecord(ev[2 * i]);
    launch(l, x[(runs - 1 - i) % 2], y, scratch, flags, i + 1);
    cudaEventRecord(ev[2 * i + 1]);
  }
  cudaDeviceSynchronize();
  std::vector<float> t;
  for (int i = 10; i < runs; ++i) {
    float ms;
    cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]);
    t.push_back(ms * 1000);
  }
  for (cudaEvent_t e : ev) cudaEventDestroy(e);
  if (l.prof) {
    unsigned long long p[8];
    cudaMemcpyFromSymbol(p, l.prof, sizeof p);
    printf("  phases (kcycles a block, mean): pass1+fold %.2f | cluster sync %.2f | merge+publish+arrive %.2f | await %.2f | outputs %.2f | final wait %.2f\n",
           p[0] / 1e3 / p[7], p[1] / 1e3 / p[7], p[2] / 1e3 / p[7], p[3] / 1e3 / p[7], p[4] / 1e3 / p[7], p[5] / 1e3 / p[7]);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  const size_t n = 8192ull * 8192;
  __nv_bfloat16 *x[2], *ref;
  uint4 *y;
  float *dmax;
  int *flags;
  for (int i = 0; i < 2; ++i) cudaMalloc(&x[i], n * 2), fillRandom<<<1024, 256>>>(x[i], n, 12345u + 77u * i);
  cudaMalloc(&y, n * 2);
  cudaMalloc(&ref, n * 2);
  cudaMalloc(&dmax, 4);
  cudaMalloc(&flags, (1 << 20) * 4 + 16);
  refSoftmax<<<(8192 + 127) / 128, 128>>>(x[0], ref, 8192, 8192);
  cudaDeviceSynchronize();
  K ks[] = {VARIANT_FUNCS};
  const char *names[] = {VARIANT_NAMES};
  bool attr[] = {VARIANT_ATTR};
  const void *profs[] = {VARIANT_PROF};
  std::vector<std::pair<std::string, Launch>> all;
  all.push_back({"micro pairs, own-word epoch (XS 131)",
                 {(const void *)colSoftmax<128, 256, 8, 4, 16, 2, 3, 4, 1, 2, 131>, true, false, true}});
  all.push_back({"micro pairs, no exchange, no spill (P -2, XS 0; wrong)",
                 {(const void *)colSoftmax<128, 256, 8, 4, 16, 2, 3, 4, 1, -2, 0>, true, false, true}});
  for (size_t v = 0; v < sizeof ks / sizeof ks[0]; ++v) {
    all.push_back({names[v], {(const void *)ks[v], attr[v], false, false, profs[v]}});
  }
  printf("| variant | resident clusters | us (median of 30, back to back) | max rel err |\n|---|---|---|---|\n");
  for (int rep = 0; rep < 3; ++rep)
    for (auto &[name, l] : all) {
      int clusters = 0;
      float us = timeIt(l, x, y, flags, clusters);
      float err = maxRelError(y, ref, dmax);
      printf("| %s | %d | %.1f | %.2g%s |\n", name.c_str(), clusters, us, err,
             name.find("wrong") != std::string::npos || name.find("bound") != std::string::npos ? " (expected)" : "");
    }
  printf("status: %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
