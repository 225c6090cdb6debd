// Microbenchmark behind the column-reduction design (bench/NOTES.md): how fast
// HBM serves a copy of an 8192 x 8192 bf16 matrix when each block owns a
// column tile of W bytes x R rows (read into shared memory once, then written
// back in the same pattern), against a plain device-to-device copy.
// Build: nvcc -O3 -arch=sm_90a -o column_tiles column_tiles.cu
#include <cstdio>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>

__device__ __forceinline__ void cp16(void *s, const void *g) {
  unsigned sa = (unsigned)__cvta_generic_to_shared(s);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sa), "l"(g));
}

// order 0: consecutive blocks are the members of one tile (cluster-like);
// order 1: consecutive blocks are neighbouring tiles of the same rows;
// order P > 1: as order 0, but the t-th team takes tile (t * P) mod tiles, so
// the teams running at one time are spread across the row (P odd, tiles a
// power of two: a bijection).
template <int WV>
__global__ void __launch_bounds__(256) tcopy(const uint4 *__restrict__ x, uint4 *__restrict__ y,
                                             int ldv, int rows, int members, int tiles, int order) {
  extern __shared__ uint4 s[];
  int b = blockIdx.x, tile, member;
  if (order == 1) { member = b / tiles; tile = b % tiles; }
  else {
    tile = b / members; member = b % members;
    if (order > 1) tile = (int)((long long)tile * order % tiles);
  }
  const int tx = threadIdx.x % WV, ty = threadIdx.x / WV, TY = 256 / WV;
  size_t base = (size_t)member * rows * ldv + (size_t)tile * WV + tx;
  for (int r = ty; r < rows; r += TY) cp16(&s[r * WV + tx], &x[base + (size_t)r * ldv]);
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
  __syncthreads();
  for (int r = ty; r < rows; r += TY) y[base + (size_t)r * ldv] = s[r * WV + tx];
}

template <int WV>
float run(const uint4 *x, uint4 *y, int n, int rows, int order) {
  int ldv = n / 8, tiles = ldv / WV, members = n / rows;
  size_t smem = (size_t)rows * WV * 16;
  if (smem > 227 * 1024) return -1;
  cudaFuncSetAttribute(tcopy<WV>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> t;
  for (int i = 0; i < 25; ++i) {
    cudaEventRecord(a);
    tcopy<WV><<<tiles * members, 256, smem>>>(x, y, ldv, rows, members, tiles, order);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    if (i >= 5) t.push_back(ms);
  }
  if (cudaGetLastError() != cudaSuccess) return -2;
  std::sort(t.begin(), t.end());
  return t[t.size() / 2] * 1000;
}

int main() {
  const int n = 8192;
  size_t bytes = (size_t)n * n * 2;
  uint4 *x, *y;
  cudaMalloc(&x, bytes); cudaMalloc(&y, bytes);
  cudaMemset(x, 1, bytes);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> t;
  for (int i = 0; i < 25; ++i) {
    cudaEventRecord(a); cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice); cudaEventRecord(b);
    cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); if (i >= 5) t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  float copy = t[t.size() / 2] * 1000;
  printf("memcpy D2D: %.1f us (%.2f TB/s)\n", copy, 2 * bytes / copy / 1e6);
  printf("%6s %6s %6s %9s %7s\n", "W(B)", "rows", "order", "us", "%copy");
  int widths[] = {64, 128, 256};
  int rowsv[] = {1024, 512};
  int orders[] = {0, 1, 3, 5, 9, 17, 33, 65};
  for (int w : widths)
    for (int r : rowsv)
      for (int o : orders) {
        float us = -1;
        switch (w) {
          case 64: us = run<4>(x, y, n, r, o); break;
          case 128: us = run<8>(x, y, n, r, o); break;
          case 256: us = run<16>(x, y, n, r, o); break;
          case 512: us = run<32>(x, y, n, r, o); break;
          case 1024: us = run<64>(x, y, n, r, o); break;
        }
        if (us > 0) printf("%6d %6d %6d %9.1f %6.1f%%\n", w, r, o, us, 100 * copy / us);
      }
  return 0;
}
