// Microbenchmark behind the decode targets (bench/NOTES.md): how long the
// GPU takes, timed the way `fusec bench` times a kernel (one event pair per
// run, median), to stream a weight matrix of N bytes that is not in L2. This
// is the best a decode linear layer (M = 1..32) can do: its weights are read
// once and everything else is tiny.
//   * read: one 16-byte load per thread per step, `U` steps in flight, grid
//     of `bps` blocks per SM, a block sum written at the end;
//   * rows: a warp per 8 KB row (a GEMV's pattern), all 16 loads in flight;
//   * memcpy of the same bytes (read + write, so half the bytes each way);
//   * chains: four such reads in a row between one event pair, each of its
//     own buffer, launched as fusec launches a plan on sm_90 (programmatic
//     stream serialization, each kernel waiting for the last with
//     griddepcontrol.wait): per layer, what a decode step's layers in a row
//     cannot beat (session p).
// Build: nvcc -O3 -arch=sm_90a -o stream_read stream_read.cu
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

template <int U>
__global__ void __launch_bounds__(256) readAll(const uint4 *__restrict__ x, size_t n, float *out) {
  asm volatile("griddepcontrol.wait;" ::: "memory");  // a no-op unless launched dependent
  float acc = 0.f;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = __ldcs(&x[i + u * stride]);
#pragma unroll
    for (int u = 0; u < U; ++u) acc += __uint_as_float(v[u].x ^ v[u].y ^ v[u].z ^ v[u].w);
  }
  for (; i < n; i += stride) {
    uint4 v = __ldcs(&x[i]);
    acc += __uint_as_float(v.x ^ v.w);
  }
  if (acc == 1234.5f) out[blockIdx.x] = acc;  // keeps the loads
}

// One warp per row of `rowVec` 16-byte vectors (a GEMV without the math).
template <int PER_LANE>
__global__ void __launch_bounds__(256) readRows(const uint4 *__restrict__ x, int rows, float *out) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (warp >= rows) return;
  const uint4 *row = x + (size_t)warp * PER_LANE * 32;
  uint4 v[PER_LANE];
#pragma unroll
  for (int u = 0; u < PER_LANE; ++u) v[u] = __ldcs(&row[u * 32 + lane]);
  float acc = 0.f;
#pragma unroll
  for (int u = 0; u < PER_LANE; ++u) acc += __uint_as_float(v[u].x ^ v[u].y ^ v[u].z ^ v[u].w);
  if (acc == 1234.5f) out[warp] = acc;
}

template <typename F> float timeIt(F launch, int sets) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> t;
  for (int i = 0; i < 60; ++i) {
    cudaEventRecord(a);
    launch(i % sets);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    if (i >= 10) t.push_back(ms * 1000);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  if (cudaGetLastError() != cudaSuccess) return -1;
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Launches k<<<grid, 256>>>(args...) as a programmatic dependent of the
// previous launch in the stream (sm_90), as fusec's runtime does.
template <typename... A, typename... P>
void launchPdl(void (*k)(P...), int grid, A... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(256);
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  cudaLaunchKernelEx(&cfg, k, args...);
}

// Four reads of `mb` MB each in a row (each its own buffer): us per layer.
void chains(int sms, const std::vector<uint4 *> &buf, float *out) {
  printf("\n| MB per layer | floor at 3.0 TB/s | 80%% of it | config | per layer, 4 in a row, PDL (us) | without PDL (us) | one layer alone (us) |\n");
  printf("|---|---|---|---|---|---|---|\n");
  for (size_t mb : {32, 48}) {
    const size_t bytes = mb << 20, n = bytes / 16;
    // 8 buffers of mb MB carved from the 4 x 112 MB sets: two chains' worth, rotated
    std::vector<const uint4 *> layer;
    for (int s = 0; s < 4; ++s)
      for (int h = 0; h < 2; ++h) layer.push_back(buf[s] + h * n);
    auto one = [&](bool pdl, int which, int u, int bps) {
      const int g = sms * bps;
      if (u == 0) {
        int rows = (int)(bytes / 8192);
        int grid = (rows * 32 + 255) / 256;
        if (pdl) launchPdl(readRows<16>, grid, layer[which], rows, out);
        else readRows<16><<<grid, 256>>>(layer[which], rows, out);
      } else if (u == 4) {
        if (pdl) launchPdl(readAll<4>, g, layer[which], n, out);
        else readAll<4><<<g, 256>>>(layer[which], n, out);
      } else {
        if (pdl) launchPdl(readAll<8>, g, layer[which], n, out);
        else readAll<8><<<g, 256>>>(layer[which], n, out);
      }
    };
    for (int u : {0, 4, 8})
      for (int bps : {1, 2, 4, 8}) {
        if (u == 0 && bps > 1) continue;
        float pdl = timeIt([&](int s) { for (int l = 0; l < 4; ++l) one(true, s * 4 + l, u, bps); }, 2);
        float plain = timeIt([&](int s) { for (int l = 0; l < 4; ++l) one(false, s * 4 + l, u, bps); }, 2);
        float alone = timeIt([&](int s) { one(false, s, u, bps); }, 8);
        double floorUs = bytes / 3.0e12 * 1e6;
        char cfg[64];
        if (u == 0) snprintf(cfg, sizeof cfg, "rows (GEMV pattern)");
        else snprintf(cfg, sizeof cfg, "U%d x %d/SM", u, bps);
        printf("| %zu | %.1f | %.1f | %s | %.2f | %.2f | %.1f |\n", mb, floorUs, floorUs / 0.8, cfg,
               pdl / 4, plain / 4, alone);
      }
  }
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const size_t maxBytes = (size_t)112 << 20;
  const int sets = 4;  // 4 x 112 MB rotated: a run never finds its bytes in L2
  std::vector<uint4 *> buf(sets);
  for (auto &p : buf) {
    cudaMalloc(&p, maxBytes);
    cudaMemset(p, 1, maxBytes);
  }
  uint4 *dst;
  cudaMalloc(&dst, maxBytes);
  float *out;
  cudaMalloc(&out, 1 << 20);
  printf("| MB | floor at 3.0 TB/s (us) | best read (us) | config | %% of floor | rows (us) | memcpy (us) |\n");
  printf("|---|---|---|---|---|---|---|\n");
  for (size_t mb : {16, 32, 48, 64, 112}) {
    size_t bytes = mb << 20, n = bytes / 16;
    float best = 1e9;
    char cfg[64] = "";
    for (int bps : {1, 2, 4, 8}) {
      float t4 = timeIt([&](int s) { readAll<4><<<sms * bps, 256>>>(buf[s], n, out); }, sets);
      float t8 = timeIt([&](int s) { readAll<8><<<sms * bps, 256>>>(buf[s], n, out); }, sets);
      if (t4 > 0 && t4 < best) { best = t4; snprintf(cfg, sizeof cfg, "U4 x %d/SM", bps); }
      if (t8 > 0 && t8 < best) { best = t8; snprintf(cfg, sizeof cfg, "U8 x %d/SM", bps); }
    }
    int rows = (int)(bytes / 8192);
    float tr = timeIt([&](int s) { readRows<16><<<(rows * 32 + 255) / 256, 256>>>(buf[s], rows, out); }, sets);
    float tc = timeIt([&](int s) { cudaMemcpyAsync(dst, buf[s], bytes / 2, cudaMemcpyDeviceToDevice); }, sets);
    double floorUs = bytes / 3.0e12 * 1e6;
    printf("| %zu | %.1f | %.1f | %s | %.0f%% | %.1f | %.1f |\n", mb, floorUs, best, cfg,
           100 * floorUs / best, tr, tc);
  }
  chains(sms, buf, out);
  return 0;
}
