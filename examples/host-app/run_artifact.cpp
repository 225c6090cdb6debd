// run-artifact: load a compiled artifact (fusec compile GRAPH -o model.fusec)
// with fusec's runtime alone (no compiler in the process), run it on random
// inputs and print each output's size and sum.
//
//   run-artifact MODEL.fusec
#include <fusec/Runtime.h>

#include <cstdio>
#include <memory>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: run-artifact MODEL.fusec\n");
    return 2;
  }
  std::unique_ptr<fusec::CompiledGraph> graph;
  fusec::Status s = fusec::CompiledGraph::load(argv[1], graph);
  if (s.code() == fusec::ErrorCode::NoGpu) {
    std::printf("no GPU: the artifact was read and checked; the run is skipped (%s)\n",
                s.message().c_str());
    return 0;
  }
  if (!s) {
    std::fprintf(stderr, "run-artifact: %s\n", s.message().c_str());
    return 1;
  }
  std::printf("loaded %s (%s kernels, written by %s)\n", argv[1], graph->arch().c_str(),
              graph->producer().c_str());
  std::vector<fusec::HostTensor> outputs;
  if (s = graph->runHost(graph->randomInputs(1), outputs); !s) {
    std::fprintf(stderr, "run-artifact: %s\n", s.message().c_str());
    return 1;
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    double sum = 0;
    for (int64_t i = 0; i < outputs[o].numel(); ++i)
      sum += outputs[o].get(i);
    std::printf("output %s: %lld elements, sum %.6g\n", graph->outputs()[o].name.c_str(),
                static_cast<long long>(outputs[o].numel()), sum);
  }
  return 0;
}
