// How fast blocks that each stream their own contiguous region of two
// tensors (the decode attention's split of K and of V) read 33.6 MB cold,
// against one grid-striding read of the same bytes (bench/NOTES.md, "what
// limits the batch-1 decode attention"). No shared memory: each thread keeps
// U 16-byte loads of each tensor in flight, so what is timed is the access
// pattern and the bytes in flight, not a pipeline.
//   region_read SPLITS U THREADS   (8 K/V entries of 8192 x 128 bf16 each)
// Build: nvcc -O3 -arch=sm_90a -o region_read region_read.cu
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

template <int U>
__global__ void regions(const uint4 *k, const uint4 *v, size_t perEntry, int splits, float *sink) {
  const size_t per = (perEntry + splits - 1) / splits;
  const size_t base = blockIdx.y * perEntry + blockIdx.x * per;
  const size_t end = min(base + per, (size_t)(blockIdx.y + 1) * perEntry);
  float acc = 0.f;
  for (size_t i = base + threadIdx.x; i < end; i += (size_t)U * blockDim.x) {
    uint4 a[U], b[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      size_t j = i + (size_t)u * blockDim.x;
      a[u] = j < end ? __ldcs(k + j) : make_uint4(0, 0, 0, 0);
      b[u] = j < end ? __ldcs(v + j) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) acc += __uint_as_float(a[u].x ^ b[u].w);
  }
  if (acc == 12345.f) *sink = acc;
}

__global__ void stride(const uint4 *k, const uint4 *v, size_t n, float *sink) {
  float acc = 0.f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint4 a = __ldcs(k + i), b = __ldcs(v + i);
    acc += __uint_as_float(a.x ^ b.w);
  }
  if (acc == 12345.f) *sink = acc;
}

int main(int argc, char **argv) {
  const int splits = argc > 1 ? atoi(argv[1]) : 13, U = argc > 2 ? atoi(argv[2]) : 8,
            threads = argc > 3 ? atoi(argv[3]) : 128;
  const size_t entry = 8192ull * 128 * 2 / 16, n = 8 * entry;  // uint4s
  const int sets = 8;
  std::vector<uint4 *> K(sets), V(sets);
  for (int i = 0; i < sets; ++i) {
    cudaMalloc(&K[i], n * 16); cudaMalloc(&V[i], n * 16);
    cudaMemset(K[i], 1, n * 16); cudaMemset(V[i], 2, n * 16);
  }
  float *sink; cudaMalloc(&sink, 4);
  void *flush; cudaMalloc(&flush, 256 << 20);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  auto launch = [&](int which, int s) {
    dim3 grid(splits, 8);
    if (which == 1) stride<<<132 * 8, 256>>>(K[s], V[s], n, sink);
    else if (U == 4) regions<4><<<grid, threads>>>(K[s], V[s], entry, splits, sink);
    else if (U == 8) regions<8><<<grid, threads>>>(K[s], V[s], entry, splits, sink);
    else regions<16><<<grid, threads>>>(K[s], V[s], entry, splits, sink);
  };
  for (int which = 0; which < 2; ++which) {
    std::vector<float> t;
    for (int it = 0; it < 40; ++it) {
      cudaMemsetAsync(flush, it, 256 << 20);
      cudaEventRecord(a); launch(which, it % sets); cudaEventRecord(b); cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms * 1000);
    }
    std::sort(t.begin() + 5, t.end());
    cudaEventRecord(a);
    for (int it = 0; it < 64; ++it) launch(which, it % sets);
    cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    printf("%s splits %d U %d threads %d: alone %.1f us, back to back %.1f us (%.0f GB/s)\n",
           which ? "stride " : "regions", splits, U, threads, t[5 + 17], ms * 1000 / 64, n * 32 / (ms * 1e6 / 64));
  }
  return cudaGetLastError() != cudaSuccess;
}
