// Does cuBLASLt's first heuristic pick the fastest algorithm for decode at
// 32 rows? fusec takes result 0 of cublasLtMatmulAlgoGetHeuristic. This times
// every returned algorithm on four layers in a row, D_l = A_l W_l^T + A_l,
// A_{l+1} = D_l (bf16, fp32 accumulation, the residual as C with beta = 1),
// back to back as `fusec bench` times a graph.
//
// Build: nvcc -O3 -o cublaslt_algos cublaslt_algos.cu -lcublasLt
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)
#define CB(x) do { cublasStatus_t s = (x); if (s != CUBLAS_STATUS_SUCCESS) { printf("%s:%d cublas status %d\n", __FILE__, __LINE__, (int)s); exit(1); } } while (0)

__global__ void fillRandom(__nv_bfloat16 *x, size_t n, unsigned seed, float scale) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    x[i] = __float2bfloat16(((h & 0xffff) / 65536.f * 2.f - 1.f) * scale);
  }
}

int main(int argc, char **argv) {
  const int M = argc > 1 ? atoi(argv[1]) : 32, N = argc > 2 ? atoi(argv[2]) : 4096, K = argc > 3 ? atoi(argv[3]) : 4096;
  const bool chain = N == K;  // layers in a row need D's shape to be A's
  const size_t wsBytes = 32u << 20;
  cublasLtHandle_t lt;
  CB(cublasLtCreate(&lt));
  __nv_bfloat16 *W[4], *Y[5];
  for (int l = 0; l < 4; ++l) {
    CK(cudaMalloc(&W[l], (size_t)N * K * 2));
    fillRandom<<<1024, 256>>>(W[l], (size_t)N * K, 100 + l, 0.03f);
  }
  for (int l = 0; l < 5; ++l) {
    CK(cudaMalloc(&Y[l], (size_t)M * std::max(N, K) * 2));
    fillRandom<<<64, 256>>>(Y[l], (size_t)M * std::max(N, K), 7 + l, 1.f);
  }
  void *ws;
  CK(cudaMalloc(&ws, wsBytes));
  cublasLtMatmulDesc_t op;
  CB(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  CB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  CB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  // column-major: W (K x N, ld K) transposed, A (K x M, ld K), C = D (N x M, ld N)
  cublasLtMatrixLayout_t wl, al, cl;
  CB(cublasLtMatrixLayoutCreate(&wl, CUDA_R_16BF, K, N, K));
  CB(cublasLtMatrixLayoutCreate(&al, CUDA_R_16BF, K, M, K));
  CB(cublasLtMatrixLayoutCreate(&cl, CUDA_R_16BF, N, M, N));
  cublasLtMatmulPreference_t pref;
  CB(cublasLtMatmulPreferenceCreate(&pref));
  uint64_t lim = wsBytes;
  CB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &lim, sizeof(lim)));
  cublasLtMatmulHeuristicResult_t res[32];
  int n = 0;
  CB(cublasLtMatmulAlgoGetHeuristic(lt, op, wl, al, cl, cl, pref, 32, res, &n));
  const float alpha = 1.f, beta = 1.f;
  const double floorUs = 4.0 * N * K * 2 / 3.0e12 * 1e6;
  printf("M %d N %d K %d: %d algorithms; floor (4 weights at 3.0 TB/s) %.1f us\n", M, N, K, n, floorUs);
  printf("| heuristic rank | workspace KB | waves | 4 layers us | per layer | %% of floor |\n|---|---|---|---|---|---|\n");
  for (int rep = 0; rep < 2; ++rep)
    for (int i = 0; i < n; ++i) {
      if (res[i].state != CUBLAS_STATUS_SUCCESS) continue;
      auto run4 = [&] {
        for (int l = 0; l < 4; ++l) {
          const __nv_bfloat16 *a = chain ? Y[l] : Y[0];
          __nv_bfloat16 *d = chain ? Y[l + 1] : Y[1 + (l % 2)];
          CB(cublasLtMatmul(lt, op, &alpha, W[l], wl, a, al, &beta, chain ? a : d, cl, d, cl, &res[i].algo, ws, wsBytes, 0));
        }
      };
      for (int w = 0; w < 20; ++w) run4();
      const int runs = 50;
      std::vector<cudaEvent_t> e0(runs), e1(runs);
      for (int r = 0; r < runs; ++r) cudaEventCreate(&e0[r]), cudaEventCreate(&e1[r]);
      for (int r = 0; r < runs; ++r) { cudaEventRecord(e0[r]); run4(); cudaEventRecord(e1[r]); }
      CK(cudaDeviceSynchronize());
      std::vector<float> t;
      for (int r = 0; r < runs; ++r) { float ms; cudaEventElapsedTime(&ms, e0[r], e1[r]); t.push_back(ms * 1000); }
      for (int r = 0; r < runs; ++r) cudaEventDestroy(e0[r]), cudaEventDestroy(e1[r]);
      std::sort(t.begin(), t.end());
      const float us = t[t.size() / 2];
      printf("| %d | %zu | %.2f | %.1f | %.2f | %.1f%% |\n", i, res[i].workspaceSize / 1024, res[i].wavesCount, us, us / 4, 100 * floorUs / us);
    }
  CK(cudaGetLastError());
  return 0;
}
