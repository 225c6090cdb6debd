//===- e2e_test.cpp - graphs on the GPU against the reference interpreter -===//
//
// Every example (fused, --no-fuse and with --gemm fusec), 200 random matmul +
// epilogue graphs through fusec's GEMM, 100 with epilogues cuBLASLt applies
// itself, and 240 random pointwise / broadcast /
// reduction graphs (odd sizes, every dtype) run through the public API:
// compile, run on the GPU with outputs poisoned (NaN bytes) first, compare with
// the CPU reference interpreter (f32 1e-5, f16/bf16 1e-2 normwise; integers
// and bools exactly). Exits 77 without a GPU.
//
//===----------------------------------------------------------------------===//
#include "include/fusec/fusec.h"
#include "runtime/CudaDriver.h"
#include "api/ProgramImpl.h"
#include "runtime/TensorCompare.h"
#include "test/common/RandomGraph.h"
#include "test/gpu/E2eChecks.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>
#include "compiler/support/LlvmError.h"

using namespace fusec;

namespace {

using e2e::selected;
using e2e::Tally;

/// An error unless one of the program's kernels has `text` in its schedule.
Status expectSchedule(const Program &p, const char *text) {
  for (const KernelInfo &k : p.kernels())
    if (k.schedule.find(text) != std::string::npos)
      return Status::success();
  return Status::error("no kernel with \"" + std::string(text) + "\" in its schedule");
}

void check(const std::string &label, const std::string &json, const std::string &name,
           bool fuse, uint64_t seed, Tally &t, const std::string &gemm = "auto",
           int gemmCandidate = -1, int *libraryEpilogues = nullptr,
           const char *schedule = nullptr, const std::string &portableFor = "") {
  if (!selected(label))
    return;
  Options o;
  if (!portableFor.empty()) {  // the A100's kernels (no Hopper forms), built for this GPU
    o.device = "a100";
    o.arch = portableFor;
  }
  o.fuse = fuse;
  o.gemm = gemm;
  o.gemmCandidate = gemmCandidate;
  std::unique_ptr<Program> p;
  Status s = Program::compileText(json, name, o, p);
  std::vector<HostTensor> in, out, ref;
  if (s && libraryEpilogues)
    for (const KernelInfo &k : p->kernels())
      for (const char *part : {" alpha=", " beta=", " +bias", " +gelu"})
        if (k.family == "matmul (cuBLASLt)" && k.schedule.find(part) != std::string::npos) {
          ++*libraryEpilogues;
          break;
        }
  if (s && schedule)
    s = expectSchedule(*p, schedule);
  if (s) {
    in = p->randomInputs(seed);
    s = p->runHost(in, out);
  }
  if (s)
    s = p->evaluateReference(in, ref);
  if (!s) {
    std::printf("FAIL %s: %s\n", label.c_str(), s.message().c_str());
    ++t.failed;
    return;
  }
  // A value picked from a 16-bit product by the streamed row statistics (a
  // label's logit) is that product element rounded to 16 bits, which the
  // reference's and the kernel's orders of summation can round one unit
  // apart: an output reading it is held to the 16-bit tolerance. (So is any
  // other output of such a graph; the graphs checked here with picks have
  // only their loss as an output.)
  const bool picked = fuse && static_cast<bool>(expectSchedule(*p, "picked sum"));
  for (size_t i = 0; i < out.size(); ++i) {
    // A random matmul graph computes in bf16/f16 throughout; an f32 output is
    // a cast of a 16-bit value, whose rounding (which the reference applies to
    // every intermediate and the fused kernel only where it stores) the cast
    // keeps. It is held to the 16-bit tolerance.
    double tolerance =
        name == "random_matmul.json" || picked ? toleranceFor(DType::BF16) : -1;
    CheckResult c = compareTensors(out[i], ref[i], tolerance);
    if (!c.pass) {
      std::printf("FAIL %s output %zu (%s): %s\n", label.c_str(), i,
                  p->outputs()[i].name.c_str(), c.describe().c_str());
      if (name == "random.json" || name == "random_matmul.json")
        std::printf("%s\n", json.c_str());
      ++t.failed;
      return;
    }
  }
  ++t.passed;
}

/// The erf gelu of a 16-bit result uses a branch-free approximation
/// (fz_gelu_fast, relative error ~1e-5): every element must be within one
/// 16-bit ulp of the exact gelu (double precision, through erfc) rounded to
/// the dtype, over x in [-8, 8) (4 times the random inputs, exactly). Not
/// against the reference interpreter: its 0.5 x (1 + erf(x / sqrt 2)) in fp32
/// loses the result's digits below x ~ -4 (at x = -5.34: 3.19e-7 against
/// 2.44e-7), as did the kernel's erff form before.
void checkGeluUlps(const char *dtype, Tally &t) {
  const std::string d = dtype;
  std::string json = R"({"fusec": 1, "name": "gelu_ulps", "inputs": [
    {"name": "x", "dtype": ")" + d + R"(", "shape": [1023, 4097]}],
    "nodes": [{"name": "four", "op": "constant", "attrs": {"value": 4.0, "dtype": ")" + d + R"("}},
              {"name": "xs", "op": "mul", "inputs": ["x", "four"]},
              {"name": "y", "op": "gelu", "inputs": ["xs"]}],
    "outputs": ["y"]})";
  std::string label = std::string("gelu within a 16-bit ulp, ") + dtype;
  if (!selected(label))
    return;
  std::unique_ptr<Program> p;
  std::vector<HostTensor> in, out;
  Status s = Program::compileText(json, "gelu_ulps.json", Options(), p);
  if (s) {
    in = p->randomInputs(11);
    s = p->runHost(in, out);
  }
  if (!s) {
    std::printf("FAIL %s: %s\n", label.c_str(), s.message().c_str());
    ++t.failed;
    return;
  }
  const int bits = std::string(dtype) == "f16" ? 11 : 8;  // significand, with the implicit 1
  HostTensor exact(out[0].dtype(), {1});
  for (int64_t i = 0; i < out[0].numel(); ++i) {
    const double x = in[0].get(i) * 4;
    exact.set(0, 0.5 * x * std::erfc(-x / std::sqrt(2.0)));
    double a = out[0].get(i), b = exact.get(0);
    int e = 0;
    std::frexp(std::max(std::fabs(a), std::fabs(b)), &e);
    double ulp = std::max(std::ldexp(1.0, e - bits), bits == 11 ? std::ldexp(1.0, -24) : 0.0);
    if (!(std::fabs(a - b) <= ulp)) {
      std::printf("FAIL %s: element %lld (x = %g): %.9g against %.9g\n", label.c_str(),
                  (long long)i, x, a, b);
      ++t.failed;
      return;
    }
  }
  ++t.passed;
}

/// Six runs of one loaded plan over three input sets at different addresses
/// in turn, enqueued back to back (outputs poisoned, each run its own), then
/// every output checked against the reference: a TMA tensor map kept for the
/// wrong address (the runtime keeps the maps of the last few) would read
/// another set's data, and state a kernel keeps between launches (split-K
/// tile counters, the softmax pairs' epoch) must carry from one launch to the
/// next. `schedule`: a kernel whose schedule says so. With `asGraph`, 20
/// runs through Program::replay, each with outputs of its own: 20 bindings,
/// the last 4 captured into graphs updated in place (cuGraphExecUpdate).
void checkRotatedInputs(CudaDriver &drv, Tally &t, const std::string &label,
                        const std::string &json, const std::string &gemm,
                        const char *schedule = nullptr, bool asGraph = false) {
  if (!selected(label))
    return;
  auto fail = [&](const std::string &why) {
    std::printf("FAIL %s: %s\n", label.c_str(), why.c_str());
    ++t.failed;
  };
  Options o;
  o.gemm = gemm;
  std::unique_ptr<Program> p;
  Status s = Program::compileText(json, "rotated.json", o, p);
  if (s)
    s = p->load();
  if (!s)
    return fail(s.message());
  if (schedule)
    if (Status r = expectSchedule(*p, schedule); !r)
      return fail(r.message());
  std::vector<std::vector<HostTensor>> in(3), ref(3);
  std::vector<std::unique_ptr<DeviceBuffers>> sets, outs;
  for (int k = 0; k < 3; ++k) {
    in[k] = p->randomInputs(100 + k);
    if (Status r = p->evaluateReference(in[k], ref[k]); !r)
      return fail(r.message());
    sets.push_back(std::make_unique<DeviceBuffers>(drv));
    if (llvm::Error err = sets.back()->upload(in[k]))
      return fail(llvm::toString(std::move(err)));
  }
  const int kRuns = asGraph ? 20 : 6;
  for (int run = 0; run < kRuns; ++run) {
    outs.push_back(std::make_unique<DeviceBuffers>(drv));
    if (llvm::Error err = outs.back()->allocatePoisoned(p->outputs()))
      return fail(llvm::toString(std::move(err)));
  }
  for (int run = 0; run < kRuns; ++run) {
    std::vector<uint64_t> ins(sets[run % 3]->pointers().begin(), sets[run % 3]->pointers().end());
    std::vector<uint64_t> outPtrs(outs[run]->pointers().begin(), outs[run]->pointers().end());
    if (Status r = asGraph ? p->replay(ins, outPtrs) : p->run(ins, outPtrs); !r)
      return fail(r.message());
  }
  for (int run = 0; run < kRuns; ++run) {
    std::vector<HostTensor> out;
    if (llvm::Error err = outs[run]->download(out, p->outputs()))  // synchronous
      return fail(llvm::toString(std::move(err)));
    for (size_t o = 0; o < out.size(); ++o) {
      CheckResult c = compareTensors(out[o], ref[run % 3][o], -1);
      if (!c.pass)
        return fail("run " + std::to_string(run) + " (set " + std::to_string(run % 3) +
                    "), output " + std::to_string(o) + ": " + c.describe());
    }
  }
  ++t.passed;
}

/// Attention whose K and V tensor maps (3-D: a matrix per batch and head)
/// must follow the buffers they were encoded for.
const char *const kRotatedAttention = R"({"fusec": 1, "name": "rotated_attention", "inputs": [
    {"name": "q", "dtype": "bf16", "shape": [2, 3, 200, 128]},
    {"name": "k", "dtype": "bf16", "shape": [2, 3, 333, 128]},
    {"name": "v", "dtype": "bf16", "shape": [2, 3, 333, 128]}],
  "nodes": [{"name": "o", "op": "scaled_dot_product_attention", "inputs": ["q", "k", "v"]}],
  "outputs": ["o"]})";

/// One loaded program called from `threads` threads at once, each on a
/// stream of its own with an input set of its own, `rounds` times back to
/// back (directly, then as CUDA graphs): each stream's intermediates live in
/// memory of its own, so every output matches the reference of its set.
void checkConcurrentStreams(CudaDriver &drv, Tally &t, const std::string &label,
                            const std::string &json, int threads, int rounds) {
  if (!selected(label))
    return;
  auto fail = [&](const std::string &why) {
    std::printf("FAIL %s: %s\n", label.c_str(), why.c_str());
    ++t.failed;
  };
  std::unique_ptr<Program> p;
  Status s = Program::compileText(json, "streams.json", Options(), p);
  if (s)
    s = p->load();
  if (!s)
    return fail(s.message());
  std::vector<std::vector<HostTensor>> in(threads), ref(threads);
  std::vector<std::unique_ptr<DeviceBuffers>> sets, outs;
  std::vector<CUstream> streams(threads, nullptr);
  for (int k = 0; k < threads; ++k) {
    in[k] = p->randomInputs(200 + k);
    if (Status r = p->evaluateReference(in[k], ref[k]); !r)
      return fail(r.message());
    sets.push_back(std::make_unique<DeviceBuffers>(drv));
    outs.push_back(std::make_unique<DeviceBuffers>(drv));
    if (llvm::Error err = sets.back()->upload(in[k]))
      return fail(llvm::toString(std::move(err)));
    if (llvm::Error err = outs.back()->allocatePoisoned(p->outputs()))
      return fail(llvm::toString(std::move(err)));
    if (llvm::Error err = drv.check(drv.cuStreamCreate(&streams[k], CU_STREAM_NON_BLOCKING),
                                    "cuStreamCreate"))
      return fail(llvm::toString(std::move(err)));
  }
  if (llvm::Error err = drv.check(drv.cuCtxSynchronize(), "uploads"))
    return fail(llvm::toString(std::move(err)));
  std::vector<std::string> errors(threads);
  std::vector<std::thread> pool;
  for (int k = 0; k < threads; ++k)
    pool.emplace_back([&, k] {
      std::vector<uint64_t> ins(sets[k]->pointers().begin(), sets[k]->pointers().end());
      std::vector<uint64_t> o(outs[k]->pointers().begin(), outs[k]->pointers().end());
      for (int r = 0; r < 2 * rounds && errors[k].empty(); ++r) {
        Status st = r < rounds ? p->run(ins, o, streams[k]) : p->replay(ins, o, streams[k]);
        if (!st)
          errors[k] = st.message();
      }
    });
  for (std::thread &th : pool)
    th.join();
  for (int k = 0; k < threads; ++k) {
    if (!errors[k].empty())
      return fail("thread " + std::to_string(k) + ": " + errors[k]);
    if (llvm::Error err = drv.check(drv.cuStreamSynchronize(streams[k]), "cuStreamSynchronize"))
      return fail(llvm::toString(std::move(err)));
    std::vector<HostTensor> got;
    if (llvm::Error err = outs[k]->download(got, p->outputs()))
      return fail(llvm::toString(std::move(err)));
    for (size_t o = 0; o < got.size(); ++o) {
      CheckResult c = compareTensors(got[o], ref[k][o], -1);
      if (!c.pass)
        return fail("stream " + std::to_string(k) + ", output " + std::to_string(o) + ": " +
                    c.describe());
    }
    drv.cuStreamDestroy(streams[k]);
  }
  ++t.passed;
}

} // namespace

int main(int argc, char **argv) {
  // The examples folder: argv[1], else the source tree this was built from.
  std::string examplesDir = argc > 1 ? argv[1] : FUSEC_SOURCE_DIR "/examples";
  auto drv = CudaDriver::get();
  if (!drv) {
    std::printf("SKIP: no GPU: %s\n", llvm::toString(drv.takeError()).c_str());
    return 77;
  }
  if (const char *f = std::getenv("FUSEC_GPU_TEST_FILTER"))
    std::printf("FUSEC_GPU_TEST_FILTER=%s: only the checks whose label holds it\n", f);
  Tally examples, random;
  std::error_code ec;
  std::vector<std::string> files;
  for (llvm::sys::fs::directory_iterator it(examplesDir, ec), end;
       it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(".json"))
      files.push_back(it->path());
  std::sort(files.begin(), files.end());
  for (const std::string &f : files) {
    auto buffer = llvm::MemoryBuffer::getFile(f);
    if (!buffer) {
      std::printf("FAIL cannot read %s\n", f.c_str());
      ++examples.failed;
      continue;
    }
    for (bool fuse : {true, false})
      check(f + (fuse ? "" : " --no-fuse"), (*buffer)->getBuffer().str(), f, fuse, 1, examples);
    // Every matmul group through fusec's own GEMM, whatever the cost model says.
    check(f + " --gemm fusec", (*buffer)->getBuffer().str(), f, true, 1, examples, "fusec");
  }
  // Decode layers in a row, each launched beside the one ahead: the Hopper
  // dot-product kernel requests its weights before its wait and lets the
  // next kernel launch early, so a layer (or the norm after it) that read its
  // input too soon reads the poisoned arena and fails (bench/NOTES.md,
  // session t). The bench graphs sit beside the examples folder.
  for (const char *g : {"decode_o_chain4_m32", "decode_wide_chain4_m32", "llama_block_decode_b32"}) {
    std::string f = examplesDir + "/../bench/graphs/" + g + ".json";
    auto buffer = llvm::MemoryBuffer::getFile(f);
    if (!buffer) {
      std::printf("FAIL cannot read %s\n", f.c_str());
      ++examples.failed;
      continue;
    }
    check(f + " --gemm fusec", (*buffer)->getBuffer().str(), f, true, 1, examples, "fusec");
  }
  Tally gemms;
  // Shapes with enough tiles for the large configurations, every candidate
  // (on Hopper the first ones are the wgmma kernel: 128 x 128 and 64 x 128
  // tiles for the first two shapes; 128 x 256 with 4 and 3 stages, 128 x 128
  // ping-pong, 128 x 128 and 128 x 256 in clusters of two blocks multicasting
  // B tiles for the others; 1900 rows make an odd number of tile rows, where
  // the cluster candidate runs without clusters; 4000 x 2200 x 72 has 2 to 5
  // tiles per block of 2 K steps each, so buffers go round many times per
  // tile): gelu(x @ w^T + b), M, N and K not multiples of the tiles; f16 too.
  // Output rows of 16 bytes (N % 8 == 0) leave through TMA stores (not from
  // ping-pong); with a residual, the TMA loads it into the same boxes: 1800 x
  // 776 has boxes wholly past M and past N in its last tiles.
  struct Case {
    int m, n, k;
    const char *dtype;
    bool residual = false;
  };
  for (Case c : {Case{2000, 1500, 200, "bf16"}, Case{1024, 2304, 136, "bf16"},
                 Case{2000, 2200, 200, "bf16"}, Case{2000, 2200, 200, "f16"},
                 Case{1900, 2200, 200, "bf16"}, Case{4000, 2200, 72, "bf16"},
                 Case{2000, 2200, 200, "bf16", true}, Case{1800, 776, 200, "bf16", true},
                 Case{4000, 2200, 72, "f16", true}})
    for (int cand = 0; cand < 10; ++cand)
      check("gemm " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                std::to_string(c.k) + " " + c.dtype + (c.residual ? " + residual" : "") +
                " candidate " + std::to_string(cand),
            test::linearGeluGraph(c.m, c.n, c.k, c.dtype, c.residual), "gemm_tiles.json", true, 3,
            gemms, "fusec", cand);
  for (const char *dtype : {"bf16", "f16"})
    checkGeluUlps(dtype, examples);
  checkRotatedInputs(**drv, examples, "fusec GEMM on three rotated input sets",
                     test::linearGeluGraph(1000, 1024, 200, "bf16", true), "fusec");
  // softmax over leading dims: shapes that take the online column kernel
  // ("(online)" in its schedule) on Hopper with every storage tier in use (registers, shared memory, L2),
  // narrow last tiles, two reduced dims, f16 and f32; and one that does not.
  struct Outer {
    std::vector<int64_t> shape;
    int reduced;
    const char *dtype;
    bool online;  ///< takes the online kernel on sm_90+
    bool masked = false;  ///< negative entries -inf (whole -inf rows per batch)
  };
  int major = 0;
  if (auto info = queryDevice(0))
    major = info->ccMajor;
  else
    llvm::consumeError(info.takeError());
  for (const Outer &o : {Outer{{8192, 200}, 1, "bf16", true}, Outer{{9216, 64}, 1, "bf16", true},
                         Outer{{2048, 72}, 1, "f16", true}, Outer{{4096, 100}, 1, "f32", true},
                         Outer{{16, 512, 136}, 2, "bf16", true},
                         Outer{{8192, 200}, 1, "bf16", true, true},
                         Outer{{8192, 8192}, 1, "bf16", true, true},
                         Outer{{1000, 96}, 1, "bf16", false}}) {
    std::string name = "outer softmax";
    for (int64_t d : o.shape)
      name += " " + std::to_string(d);
    check(name + " " + o.dtype + (o.masked ? " masked" : ""),
          test::outerSoftmaxGraph(o.shape, o.reduced, o.dtype, o.masked),
          "outer_softmax.json", true, 5, examples, "auto", -1, nullptr,
          o.online && major >= 9 ? "(online)" : nullptr);
  }
  // softmax over dim 0 at 8192 x 8192 bf16 (the bench size), six launches
  // back to back: on Hopper each 256-byte tile's rows are split over two
  // clusters that exchange their statistics under an epoch the kernel keeps
  // in its scratch from launch to launch.
  checkRotatedInputs(**drv, examples, "softmax over dim 0, 8192 x 8192 bf16, six launches",
                     test::outerSoftmaxGraph({8192, 8192}, 1, "bf16", false), "auto",
                     major >= 9 ? "exchange (max, sum)" : nullptr);
  // 9-64 rows through the Hopper dot-product kernel (WgmmaGemv.cpp; its
  // first candidate there): the o projection with its residual; 9 rows with
  // 32 weight rows a cluster and K = 1000 (the last step past K); 33 rows
  // (halves of 17 and 16) with a cluster past N = 4100 and an odd number of
  // steps, f16; 64 rows with 96 weight rows a cluster; 112 rows a cluster
  // and one step a half; 46 rows a cluster rounded to 48 with K = 4104; 9
  // rows at 120 rows a cluster, whose shared memory (12 stages) is within 2
  // KB of the block's limit; at 64 weight rows a cluster, where the weights
  // are wgmma's 64-row operand and A's rows N, 9 (N of 16), 17 (24, f16) and
  // 64 rows. Each takes the form on any Hopper part of 114-132 SMs.
  for (Case c : {Case{32, 4096, 4096, "bf16", true}, Case{9, 2112, 1000, "bf16"},
                 Case{33, 4100, 520, "f16", true}, Case{64, 6144, 256, "bf16"},
                 Case{16, 7296, 128, "bf16", true}, Case{48, 3000, 4104, "bf16"},
                 Case{9, 7680, 4096, "bf16"}, Case{9, 4096, 1000, "bf16", true},
                 Case{17, 4096, 2048, "f16"}, Case{64, 4096, 520, "bf16"}})
    check("decode " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
              std::to_string(c.k) + " " + c.dtype + (c.residual ? " + residual" : ""),
          test::linearGeluGraph(c.m, c.n, c.k, c.dtype, c.residual), "decode.json", true, 11, gemms,
          "fusec", 0, nullptr, major >= 9 ? "TMA stages into wgmma" : nullptr);
  // SwiGLU's gate and up as one dual product on Hopper (both candidates):
  // ragged M and N, f16 too; elsewhere the plan keeps up apart.
  for (Case c : {Case{1000, 776, 200, "bf16"}, Case{2000, 2200, 72, "f16"},
                 Case{1000, 776, 200, "bf16", true}})
    for (int cand = 0; cand < 2; ++cand)
      check("swiglu " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                std::to_string(c.k) + " " + c.dtype + (c.residual ? " + residual" : "") +
                " candidate " + std::to_string(cand),
            test::swigluGraph(c.m, c.n, c.k, c.dtype, c.residual), "swiglu.json", true, 7, gemms, "auto",
            cand, nullptr, major >= 9 ? "dual product" : nullptr);
  // Q/K/V-like siblings written as they are: one kernel over their tiles
  // side by side on Hopper (both candidates); ragged M, widths ending
  // mid-box, f16, two parts of one width.
  struct Siblings {
    int m;
    std::vector<int> ns;
    int k;
    const char *dtype;
  };
  for (const Siblings &c : {Siblings{1000, {776, 200, 136}, 200, "bf16"},
                            Siblings{2000, {2200, 520}, 72, "f16"},
                            Siblings{700, {1024, 1024}, 128, "bf16"}})
    for (int cand = 0; cand < 2; ++cand) {
      std::string widths;
      for (int n : c.ns)
        widths += (widths.empty() ? "" : "+") + std::to_string(n);
      check("side by side " + std::to_string(c.m) + "x(" + widths + ")x" + std::to_string(c.k) +
                " " + c.dtype + " candidate " + std::to_string(cand),
            test::siblingProductsGraph(c.m, c.ns, c.k, c.dtype), "siblings.json", true, 11, gemms,
            "auto", cand, nullptr, major >= 9 ? "side by side" : nullptr);
    }
  // The same at decode sizes: the TMA + wgmma dot-product kernel side by
  // side (Q/K/V as three weights; ragged M, f16, K not a whole step).
  for (const Siblings &c : {Siblings{32, {4096, 1024, 1024}, 4096, "bf16"},
                            Siblings{9, {1024, 512, 512}, 1000, "bf16"},
                            Siblings{33, {512, 256}, 520, "f16"},
                            Siblings{64, {2048, 2048}, 256, "bf16"}}) {
    std::string widths;
    for (int n : c.ns)
      widths += (widths.empty() ? "" : "+") + std::to_string(n);
    check("decode side by side " + std::to_string(c.m) + "x(" + widths + ")x" +
              std::to_string(c.k) + " " + c.dtype,
          test::siblingProductsGraph(c.m, c.ns, c.k, c.dtype), "siblings.json", true, 13, gemms,
          "auto", -1, nullptr, major >= 9 ? "products side by side" : nullptr);
  }
  for (uint64_t seed = 0; seed < 200; ++seed)
    check("random matmul seed " + std::to_string(seed), test::randomMatmulGraph(seed),
          "random_matmul.json", true, seed, gemms, "fusec");
  // Epilogues cuBLASLt applies itself (a scale, a residual as C, a bias,
  // gelu(tanh)), through cuBLASLt: most of them must take that path.
  int libraryEpilogues = 0;
  for (uint64_t seed = 0; seed < 100; ++seed)
    check("library epilogue seed " + std::to_string(seed), test::randomMatmulGraph(seed, true),
          "random_matmul.json", true, seed, gemms, "cublaslt", -1, &libraryEpilogues);
  std::printf("cuBLASLt applied the epilogue itself in %d of 100 graphs\n", libraryEpilogues);
  if (libraryEpilogues < 50 && selected("library epilogue seed")) {
    std::printf("FAIL the cuBLASLt epilogue path was taken too rarely\n");
    ++gemms.failed;
  }
  for (uint64_t seed = 0; seed < 240; ++seed)
    check("random graph seed " + std::to_string(seed), test::randomGraph(seed), "random.json",
          true, seed, random);
  // Attention over random shapes and masks, outputs poisoned first (runHost):
  // the GPU's own form (on Hopper, wgmma for head dims 64 and 128) and the
  // portable mma.sync form built for the same GPU.
  std::string arch;
  if (auto info = queryDevice(0))
    arch = info->nvrtcArch();
  else
    llvm::consumeError(info.takeError());
  int hopperForms = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const std::string json = test::randomAttentionGraph(seed);
    check("random attention seed " + std::to_string(seed), json, "random_attention.json", true,
          seed, random);
    check("random attention seed " + std::to_string(seed) + " (portable)", json,
          "random_attention.json", true, seed, random, "auto", -1, nullptr, nullptr, arch);
    std::unique_ptr<Program> p;
    if (Program::compileText(json, "random_attention.json", Options(), p))
      hopperForms += expectSchedule(*p, "wgmma") ? 1 : 0;
  }
  std::printf("the Hopper attention form ran in %d of 60 random attention graphs\n", hopperForms);
  // Decode-sized attention (the keys split over blocks): grouped-query heads
  // read through their repeat, caches joined with new rows read in pieces.
  for (uint64_t seed = 0; seed < 40; ++seed)
    check("random decode attention seed " + std::to_string(seed),
          test::randomDecodeAttentionGraph(seed), "random_decode_attention.json", true, seed,
          random);
  // Log-sum-exp over a product's rows (cross-entropy's normalizer), the
  // product never written: padded vocabularies, rows masked whole, batches.
  int rowStatsStreamed = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    const std::string json = test::randomRowStatsGraph(seed);
    check("random row stats seed " + std::to_string(seed), json, "random_row_stats.json", true,
          seed, random);
    std::unique_ptr<Program> p;
    if (selected("random row stats") &&
        Program::compileText(json, "random_row_stats.json", Options(), p))
      rowStatsStreamed += expectSchedule(*p, "the product never written") ? 1 : 0;
  }
  std::printf("the row statistics were streamed in %d of 40 random graphs\n", rowStatsStreamed);
  // Enough tiles for every SM: on Hopper the persistent blocks take
  // several tiles each, one row tile's last tile merging between others.
  check("row stats over 256 tiles", R"({"fusec": 1, "name": "row_stats_tiles", "inputs": [
          {"name": "h", "dtype": "bf16", "shape": [512, 64]},
          {"name": "w", "dtype": "bf16", "shape": [16384, 64]}],
        "nodes": [
          {"name": "wt", "op": "transpose", "inputs": ["w"], "attrs": {"perm": [1, 0]}},
          {"name": "logits", "op": "matmul", "inputs": ["h", "wt"]},
          {"name": "x", "op": "cast", "inputs": ["logits"], "attrs": {"dtype": "f32"}},
          {"name": "mx", "op": "max", "inputs": ["x"], "attrs": {"axes": -1, "keepdims": true}},
          {"name": "d", "op": "sub", "inputs": ["x", "mx"]},
          {"name": "e", "op": "exp", "inputs": ["d"]},
          {"name": "l", "op": "sum", "inputs": ["e"], "attrs": {"axes": -1, "keepdims": true}},
          {"name": "logl", "op": "log", "inputs": ["l"]},
          {"name": "lse", "op": "add", "inputs": ["logl", "mx"]}],
        "outputs": ["lse", "mx"]})",
        "row_stats_tiles.json", true, 3, random, "auto", -1, nullptr,
        major >= 9 ? "persistent blocks over 256 tiles" : "the product never written");
  if (rowStatsStreamed < 25 && selected("random row stats")) {
    std::printf("FAIL the streamed row statistics were formed too rarely\n");
    ++random.failed;
  }
  // Its K and V tensor maps (3-D: a matrix per batch and head) kept for the
  // right addresses over three input sets.
  checkRotatedInputs(**drv, random, "attention on three rotated input sets",
                     kRotatedAttention,
                     "auto", major >= 9 ? "wgmma" : nullptr);
  // The same plans as CUDA graphs: captured per binding, replayed, and
  // updated in place past 16 bindings; PDL edges, clusters, cooperative and
  // cuBLASLt steps inside a graph.
  checkRotatedInputs(**drv, random, "CUDA graph: attention over 20 bindings",
                     kRotatedAttention,
                     "auto", nullptr, /*asGraph=*/true);
  checkRotatedInputs(**drv, random, "CUDA graph: fusec GEMM over 20 bindings",
                     test::linearGeluGraph(1000, 1024, 200, "bf16", true), "fusec", nullptr,
                     /*asGraph=*/true);
  checkRotatedInputs(**drv, random, "CUDA graph: softmax over dim 0 over 20 bindings",
                     test::outerSoftmaxGraph({8192, 8192}, 1, "bf16", false), "auto", nullptr,
                     /*asGraph=*/true);
  for (const char *g : {"../bench/graphs/llama_block_decode_b1", "cross_entropy", "swiglu_ffn",
                        "linear_gelu_residual", "llama_decoder_block"}) {
    std::string label = std::string("CUDA graph: ") + g + " over 20 bindings";
    auto buffer = llvm::MemoryBuffer::getFile(examplesDir + "/" + g + ".json");
    if (!buffer && selected(label)) {
      std::printf("FAIL %s: cannot read the graph\n", label.c_str());
      ++random.failed;
    } else if (buffer) {
      checkRotatedInputs(**drv, random, label, (*buffer)->getBuffer().str(), "auto", nullptr,
                         /*asGraph=*/true);
    }
  }
  // Four threads on four streams at once, each with its own input set.
  for (const char *g : {"llama_decoder_block", "swiglu_ffn", "cross_entropy"}) {
    auto buffer = llvm::MemoryBuffer::getFile(examplesDir + "/" + g + ".json");
    if (buffer)
      checkConcurrentStreams(**drv, random, std::string("four streams at once: ") + g,
                             (*buffer)->getBuffer().str(), 4, 8);
  }
  e2e::checkPaddedPrograms(**drv, random);
  if (major >= 9 && hopperForms < 15 && selected("random attention")) {
    std::printf("FAIL the Hopper attention form was taken too rarely\n");
    ++random.failed;
  }
  std::printf("examples: %d passed, %d failed; random graphs: %d passed, %d failed; "
              "random matmul graphs (fusec GEMM): %d passed, %d failed\n",
              examples.passed, examples.failed, random.passed, random.failed, gemms.passed,
              gemms.failed);
  const int ran = examples.passed + examples.failed + random.passed + random.failed +
                  gemms.passed + gemms.failed;
  if (ran == 0) {  // a filter that matches nothing must not read as a pass
    std::printf("FAIL no check ran (FUSEC_GPU_TEST_FILTER matches no label)\n");
    return 1;
  }
  return examples.failed + random.failed + gemms.failed == 0 ? 0 : 1;
}
