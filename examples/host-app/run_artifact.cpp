// run-artifact: load a compiled artifact (fusec compile GRAPH -o model.fusec)
// with fusec's runtime alone (no compiler in the process), bind its weights
// where given, run it once on random inputs in GPU memory, and print where
// the time went and each output's size and sum.
//
//   run-artifact MODEL.fusec [WEIGHTS.safetensors ...]
#include <fusec/Runtime.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {
double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int fail(const fusec::Status &s) {
  std::fprintf(stderr, "run-artifact: %s\n", s.message().c_str());
  return 1;
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: run-artifact MODEL.fusec [WEIGHTS.safetensors ...]\n");
    return 2;
  }
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<fusec::CompiledGraph> graph;
  fusec::Status s = fusec::CompiledGraph::load(argv[1], graph);
  if (s.code() == fusec::ErrorCode::NoGpu) {
    std::printf("no GPU: the artifact was read and checked; the run is skipped (%s)\n",
                s.message().c_str());
    return 0;
  }
  if (!s)
    return fail(s);
  if (argc > 2)
    if (s = graph->bindWeights(std::vector<std::string>(argv + 2, argv + argc)); !s)
      return fail(s);
  double loadMs = msSince(t0);
  std::printf("loaded %s (%s kernels, written by %s)\n", argv[1], graph->arch().c_str(),
              graph->producer().c_str());

  // The inputs in GPU memory (less the bound weights), the outputs beside.
  std::vector<fusec::HostTensor> host = graph->randomInputs(1);
  std::vector<std::shared_ptr<fusec::DeviceMemory>> buffers;
  std::vector<uint64_t> in, out;
  for (size_t i = 0; i < host.size(); ++i) {
    if (graph->weightsBound() && graph->isParameter(i))
      continue;
    std::shared_ptr<fusec::DeviceMemory> m;
    if (s = fusec::DeviceMemory::allocate(host[i].nbytes(), m); !s)
      return fail(s);
    if (s = m->copyFromHost(host[i].data(), host[i].nbytes()); !s)
      return fail(s);
    in.push_back(m->address());
    buffers.push_back(m);
  }
  std::vector<fusec::HostTensor> outputs;
  std::vector<std::shared_ptr<fusec::DeviceMemory>> results;
  for (const fusec::TensorSpec &spec : graph->outputs()) {
    std::shared_ptr<fusec::DeviceMemory> m;
    if (s = fusec::DeviceMemory::allocate(spec.bytes(), m); !s)
      return fail(s);
    out.push_back(m->address());
    results.push_back(m);
    outputs.emplace_back(spec.dtype, spec.shape);
  }

  // The first call, to its outputs on the host (a copy to the host waits
  // for the GPU).
  auto t1 = std::chrono::steady_clock::now();
  if (s = graph->run(in, out); !s)
    return fail(s);
  for (size_t o = 0; o < outputs.size(); ++o)
    if (s = results[o]->copyToHost(outputs[o].data(), outputs[o].nbytes()); !s)
      return fail(s);
  double firstMs = msSince(t1);

  const fusec::CompiledGraph::LoadTimes &t = graph->loadTimes();
  std::printf("load %.1f ms (file %.1f, CUDA driver and context %.1f, kernels %.1f, weights "
              "%.1f); first call %.2f ms; load and first call without the driver's start "
              "%.1f ms\n",
              loadMs, t.read, t.gpu, t.kernels, t.weights, firstMs, loadMs - t.gpu + firstMs);
  for (size_t o = 0; o < outputs.size(); ++o) {
    double sum = 0;
    for (int64_t i = 0; i < outputs[o].numel(); ++i)
      sum += outputs[o].get(i);
    std::printf("output %s: %lld elements, sum %.6g\n", graph->outputs()[o].name.c_str(),
                static_cast<long long>(outputs[o].numel()), sum);
  }
  return 0;
}
