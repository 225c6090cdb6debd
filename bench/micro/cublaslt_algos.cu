// Does cuBLASLt's first heuristic pick the fastest algorithm for decode at
// 32 rows? fusec takes result 0 of cublasLtMatmulAlgoGetHeuristic. This times
// every returned algorithm on four layers in a row, D_l = A_l W_l^T + A_l,
// A_{l+1} = D_l (bf16, fp32 accumulation, the residual as C with beta = 1),
// back to back as `fusec bench` times a graph.
//
// With a fifth argument "x", also an exhaustive search: every algorithm id,
// tile and split-K count (1-16) that cublasLtMatmulAlgoCheck accepts within
// the workspace, each timed briefly, the fastest 12 timed again in full.
//
// Build: nvcc -O3 -o cublaslt_algos cublaslt_algos.cu -lcublasLt
// Run:   ./cublaslt_algos M N K [x]
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
  setvbuf(stdout, nullptr, _IONBF, 0);  // a crash loses nothing printed
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
  for (int rep = 0; rep < (argc > 4 ? 1 : 2); ++rep)
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
  if (argc > 4 && argv[4][0] == 'x') {
    // Exhaustive: algorithm ids x tiles x split-K, default stages.
    int ids[256], nids = 0;
    CB(cublasLtMatmulAlgoGetIds(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, 256, ids, &nids));
    struct Cand { cublasLtMatmulAlgo_t algo; int id, tile, splitk, scheme; size_t ws; float us; };
    std::vector<Cand> cands;
    for (int a = 0; a < nids; ++a) {
      cublasLtMatmulAlgo_t algo;
      if (cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, ids[a], &algo) != CUBLAS_STATUS_SUCCESS)
        continue;
      size_t sz = 0;
      cublasLtMatmulTile_t tiles[CUBLASLT_MATMUL_TILE_END];
      int ntiles = 0;
      if (cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, tiles, sizeof(tiles), &sz) == CUBLAS_STATUS_SUCCESS)
        ntiles = (int)(sz / sizeof(tiles[0]));
      if (ntiles == 0) {
        tiles[0] = CUBLASLT_MATMUL_TILE_UNDEFINED;
        ntiles = 1;
      }
      fprintf(stderr, "algo id %d: %d tiles\n", ids[a], ntiles);
      int splitSupport = 0;
      uint32_t schemes = 0;
      cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT, &splitSupport, sizeof(splitSupport), &sz);
      cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK, &schemes, sizeof(schemes), &sz);
      for (int ti = 0; ti < ntiles; ++ti)
        for (int sk : {1, 2, 3, 4, 6, 8, 12, 16}) {
          if (sk > 1 && !splitSupport) continue;
          for (int sc : {0, 1, 2, 4}) {
            if ((sk == 1) != (sc == 0)) continue;
            if (sc && !(schemes & sc)) continue;
            cublasLtMatmulAlgo_t c = algo;
            cublasLtMatmulAlgoConfigSetAttribute(&c, CUBLASLT_ALGO_CONFIG_TILE_ID, &tiles[ti], sizeof(tiles[ti]));
            cublasLtMatmulAlgoConfigSetAttribute(&c, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &sk, sizeof(int));
            uint32_t scheme = sc;
            cublasLtMatmulAlgoConfigSetAttribute(&c, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme, sizeof(scheme));
            cublasLtMatmulHeuristicResult_t chk = {};
            if (cublasLtMatmulAlgoCheck(lt, op, wl, al, cl, cl, &c, &chk) != CUBLAS_STATUS_SUCCESS) continue;
            if (chk.workspaceSize > wsBytes) continue;
            cands.push_back({c, ids[a], (int)tiles[ti], sk, sc, chk.workspaceSize, 0.f});
          }
        }
    }
    // The heuristic's own results (Hopper kernels need inner and cluster
    // shapes that AlgoInit leaves unset), each with other split-K counts.
    for (int i = 0; i < n; ++i) {
      const cublasLtMatmulAlgo_t &h = res[i].algo;
      int id = 0, tile = 0, sk = 0, stages = 0, inner = 0, cluster = 0;
      uint32_t scheme = 0;
      size_t sz;
      cublasLtMatmulAlgoConfigGetAttribute(&h, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof(id), &sz);
      cublasLtMatmulAlgoConfigGetAttribute(&h, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(tile), &sz);
      cublasLtMatmulAlgoConfigGetAttribute(&h, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &sk, sizeof(sk), &sz);
      cublasLtMatmulAlgoConfigGetAttribute(&h, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme, sizeof(scheme), &sz);
      cublasLtMatmulAlgoConfigGetAttribute(&h, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof(stages), &sz);
      cublasLtMatmulAlgoConfigGetAttribute(&h, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &inner, sizeof(inner), &sz);
      cublasLtMatmulAlgoConfigGetAttribute(&h, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, sizeof(cluster), &sz);
      printf("heuristic %d: algo id %d tile %d split-K %d reduction %u stages %d inner %d cluster %d\n", i, id, tile, sk, scheme, stages, inner, cluster);
      for (int k2 : {1, 2, 3, 4, 6, 8, 12, 16})
        for (uint32_t sc2 : {0u, 1u, 2u, 4u}) {
          if ((k2 == 1) != (sc2 == 0)) continue;
          cublasLtMatmulAlgo_t c = h;
          cublasLtMatmulAlgoConfigSetAttribute(&c, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &k2, sizeof(k2));
          cublasLtMatmulAlgoConfigSetAttribute(&c, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &sc2, sizeof(sc2));
          cublasLtMatmulHeuristicResult_t chk = {};
          if (cublasLtMatmulAlgoCheck(lt, op, wl, al, cl, cl, &c, &chk) != CUBLAS_STATUS_SUCCESS) continue;
          if (chk.workspaceSize > wsBytes) continue;
          cands.push_back({c, 1000 + i, tile, k2, (int)sc2, chk.workspaceSize, 0.f});
        }
    }
    printf("exhaustive: %d algorithm ids, %zu valid configurations (algo id 1000 + r: heuristic result r re-split)\n", nids, cands.size());
    auto timeAlgo = [&](const cublasLtMatmulAlgo_t &algo, int runs) {
      auto run4 = [&] {
        for (int l = 0; l < 4; ++l) {
          const __nv_bfloat16 *a = chain ? Y[l] : Y[0];
          __nv_bfloat16 *d = chain ? Y[l + 1] : Y[1 + (l % 2)];
          if (cublasLtMatmul(lt, op, &alpha, W[l], wl, a, al, &beta, chain ? a : d, cl, d, cl, &algo, ws, wsBytes, 0) != CUBLAS_STATUS_SUCCESS)
            return false;
        }
        return true;
      };
      for (int w = 0; w < 3; ++w)
        if (!run4()) { cudaGetLastError(); return 1e9f; }
      std::vector<cudaEvent_t> e0(runs), e1(runs);
      for (int r = 0; r < runs; ++r) cudaEventCreate(&e0[r]), cudaEventCreate(&e1[r]);
      for (int r = 0; r < runs; ++r) { cudaEventRecord(e0[r]); run4(); cudaEventRecord(e1[r]); }
      if (cudaDeviceSynchronize() != cudaSuccess) { cudaGetLastError(); return 1e9f; }
      std::vector<float> t;
      for (int r = 0; r < runs; ++r) { float ms; cudaEventElapsedTime(&ms, e0[r], e1[r]); t.push_back(ms * 1000); }
      for (int r = 0; r < runs; ++r) cudaEventDestroy(e0[r]), cudaEventDestroy(e1[r]);
      std::sort(t.begin(), t.end());
      return t[t.size() / 2];
    };
    for (auto &c : cands) c.us = timeAlgo(c.algo, 8);
    std::sort(cands.begin(), cands.end(), [](const Cand &a, const Cand &b) { return a.us < b.us; });
    const size_t top = std::min<size_t>(12, cands.size());
    for (size_t i = 0; i < top; ++i) cands[i].us = timeAlgo(cands[i].algo, 50);
    std::sort(cands.begin(), cands.begin() + top, [](const Cand &a, const Cand &b) { return a.us < b.us; });
    printf("| algo id | tile id | split-K | reduction | workspace KB | 4 layers us | per layer | %% of floor |\n|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < top; ++i)
      printf("| %d | %d | %d | %d | %zu | %.1f | %.2f | %.1f%% |\n", cands[i].id, cands[i].tile, cands[i].splitk, cands[i].scheme,
             cands[i].ws / 1024, cands[i].us, cands[i].us / 4, 100 * floorUs / cands[i].us);
  }
  CK(cudaGetLastError());
  return 0;
}
