// host-app: compile a graph with fusec's library, show its kernels, check the
// reference interpreter on random inputs, and where a GPU is present run it
// there and compare.
//
//   host-app GRAPH.json
#include <fusec/fusec.h>

#include <cmath>
#include <cstdio>
#include <memory>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: host-app GRAPH.json\n");
    return 2;
  }
  std::printf("fusec %s\n", fusec::version());
  std::unique_ptr<fusec::Program> program;
  fusec::Status s = fusec::Program::compileFile(argv[1], fusec::Options(), program);
  if (!s) {
    std::fprintf(stderr, "host-app: %s\n", s.message().c_str());
    return 1;
  }
  for (const fusec::KernelInfo &k : program->kernels())
    std::printf("kernel %s [%s]: %lld bytes, predicted %.1f us\n", k.name.c_str(),
                k.family.c_str(), static_cast<long long>(k.bytes), k.predictedUs);
  std::vector<fusec::HostTensor> inputs = program->randomInputs(1), expected, got;
  if (s = program->evaluateReference(inputs, expected); !s) {
    std::fprintf(stderr, "host-app: %s\n", s.message().c_str());
    return 1;
  }
  std::printf("reference: %zu output(s)\n", expected.size());
  s = program->load();
  if (s.code() == fusec::ErrorCode::NoGpu) {
    std::printf("no GPU: the GPU run is skipped (%s)\n", s.message().c_str());
    return 0;
  }
  if (!s || !(s = program->runHost(inputs, got))) {
    std::fprintf(stderr, "host-app: %s\n", s.message().c_str());
    return 1;
  }
  // Largest difference relative to the reference's largest magnitude.
  double worst = 0;
  for (size_t o = 0; o < got.size(); ++o) {
    double scale = 0, diff = 0;
    for (int64_t i = 0; i < got[o].numel(); ++i) {
      scale = std::fmax(scale, std::fabs(expected[o].get(i)));
      diff = std::fmax(diff, std::fabs(got[o].get(i) - expected[o].get(i)));
    }
    worst = std::fmax(worst, scale > 0 ? diff / scale : diff);
  }
  std::printf("GPU run: largest difference %.2e of the reference's scale\n", worst);
  return worst < 2e-2 ? 0 : 1;
}
