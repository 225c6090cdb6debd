// Microbenchmark behind issue 33's host-cost goal (bench/NOTES.md): what the
// CUDA driver itself costs the host per kernel launch, beside which fusec's
// own per-launch bookkeeping is measured (`fusec bench --no-steps`). Host
// time of a burst of launches of an empty kernel taking 8 pointers (a fused
// kernel's typical arguments), median of bursts, for:
//   * cuLaunchKernel, plain;
//   * cuLaunchKernelEx with the programmatic-stream-serialization attribute
//     (how fusec launches on sm_90, each kernel overlapping the one before);
//   * cuGraphLaunch of a graph of 7 such kernels (a decode block's count),
//     per graph launch.
// Bursts of 7 (a decode block's launches, as `fusec bench` times a call) and
// of 64; both stay far below the launch queue's depth, so the host never
// waits for the GPU.
// Build: nvcc -O3 -arch=sm_90a -o launch_floor launch_floor.cu -lcuda
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>

extern "C" __global__ void empty8(float *a, float *b, float *c, float *d, float *e, float *f,
                                  float *g, float *h) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (a == nullptr && threadIdx.x == 1024)
    *h = 0;
}

#define CHECK(x)                                                                            \
  do {                                                                                      \
    CUresult r = (x);                                                                       \
    if (r != CUDA_SUCCESS) {                                                                \
      const char *s = nullptr;                                                              \
      cuGetErrorName(r, &s);                                                                \
      std::printf("%s failed: %s\n", #x, s ? s : "?");                                     \
      return 1;                                                                             \
    }                                                                                       \
  } while (0)

template <typename F>
double medianUsPer(int burst, int bursts, F &&launch) {
  std::vector<double> per;
  for (int b = 0; b < bursts + 3; ++b) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < burst; ++i)
      launch();
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                    .count();
    cudaDeviceSynchronize();
    if (b >= 3)  // warm-up bursts left out
      per.push_back(us / burst);
  }
  std::sort(per.begin(), per.end());
  return per[per.size() / 2];
}

int main() {
  cudaFree(nullptr);  // the primary context
  float *buf = nullptr;
  cudaMalloc(&buf, 1 << 20);
  CUfunction fn;
  cudaFunction_t rf;
  cudaGetFuncBySymbol(&rf, (const void *)empty8);
  fn = (CUfunction)rf;
  float *p[8];
  for (int i = 0; i < 8; ++i)
    p[i] = buf + 1024 * i;
  void *params[8];
  for (int i = 0; i < 8; ++i)
    params[i] = &p[i];
  CUstream stream;
  CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));

  auto plainLaunch = [&] { cuLaunchKernel(fn, 132, 1, 1, 256, 1, 1, 0, stream, params, nullptr); };
  double plain7 = medianUsPer(7, 51, plainLaunch), plain = medianUsPer(64, 51, plainLaunch);
  CUlaunchAttribute attr;
  attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attr.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig cfg = {};
  cfg.gridDimX = 132, cfg.gridDimY = 1, cfg.gridDimZ = 1;
  cfg.blockDimX = 256, cfg.blockDimY = 1, cfg.blockDimZ = 1;
  cfg.hStream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  auto pdlLaunch = [&] { cuLaunchKernelEx(&cfg, fn, params, nullptr); };
  double pdl7 = medianUsPer(7, 51, pdlLaunch), pdl = medianUsPer(64, 51, pdlLaunch);

  CUgraph graph;
  CUgraphExec exec;
  CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  for (int k = 0; k < 7; ++k)
    CHECK(cuLaunchKernelEx(&cfg, fn, params, nullptr));
  CHECK(cuStreamEndCapture(stream, &graph));
  CHECK(cuGraphInstantiate(&exec, graph, 0));
  double replay = medianUsPer(16, 51, [&] { cuGraphLaunch(exec, stream); });
  CHECK(cuStreamSynchronize(stream));

  std::printf("host us per launch, bursts of 7 / 64: cuLaunchKernel %.2f / %.2f, "
              "cuLaunchKernelEx + PDL %.2f / %.2f; cuGraphLaunch of 7 kernels %.2f per graph\n",
              plain7, plain, pdl7, pdl, replay);
  return 0;
}
