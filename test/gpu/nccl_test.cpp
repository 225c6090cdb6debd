//===- nccl_test.cpp - NCCL through fusec's loader, on one GPU ------------===//
//
// The collectives of a split program go through runtime/Nccl, which opens
// libnccl at run time and calls it through its own declarations of NCCL's
// entry points. On one GPU a group of one rank still runs every collective
// (each is then a copy), so this checks, without a second GPU, that those
// declarations match the library: a communicator made from a unique id, an
// all_reduce (sum, max, min), an all_gather and a reduce_scatter of bf16 and
// f32 tensors from 1 element to 64 MB on a stream, and the same captured in
// a CUDA graph and replayed. The outputs are poisoned (0xFF bytes, NaN) before
// every run; each must equal its input bit for bit.
//
// With 2 or more GPUs, the same collectives over a group of every GPU (up to
// 4; a thread and a GPU a rank), from 1 element to 64 MB, each rank's values
// small integers so that every sum is exact in bf16: an all_reduce (sum,
// max, min) must give every rank the same sums, an all_gather every rank's
// blocks in rank order, a reduce_scatter each rank its block of the sums.
//
// Exit status: 0 pass, 1 failure, 77 (ctest's SKIP_RETURN_CODE) without a
// GPU or without NCCL.
//
//===----------------------------------------------------------------------===//
#include "compiler/support/DType.h"
#include "compiler/support/Float16.h"
#include "compiler/support/RankThreads.h"
#include "compiler/support/LlvmError.h"
#include "runtime/CudaDriver.h"
#include "runtime/Nccl.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "Failures.h"

using namespace fusec;

namespace {

using gputest::fail;
using gputest::failures;

/// Runs `c` on `bytes` of `dtype` once on the stream, or captured in a graph
/// and replayed twice; the output must equal the input.
void runCase(CudaDriver &drv, Nccl &nccl, NcclComm comm, CUstream stream,
             const PlanCollective &c, DType dtype, int64_t bytes, bool graph) {
  std::string what = c.op + (c.op == "all_reduce" ? "(" + c.reduce + ")" : "") + " " +
                     std::string(dtypeName(dtype)) + " " + std::to_string(bytes) + " bytes" +
                     (graph ? " in a CUDA graph" : "");
  std::vector<uint8_t> host(bytes);
  std::mt19937 rng{static_cast<unsigned>(bytes)};
  for (size_t i = 0; i < host.size(); i += 2) {
    // Finite values only: NaN bits would compare equal to the poison.
    host[i] = uint8_t(rng());
    if (i + 1 < host.size())
      host[i + 1] = uint8_t(rng() % 0x7f);
  }
  CUdeviceptr in = 0, out = 0;
  auto check = [&](CUresult r, const char *call) {
    if (auto err = drv.check(r, call)) {
      fail(what + ": " + err.message());
      return false;
    }
    return true;
  };
  if (!check(drv.cuMemAlloc(&in, bytes), "cuMemAlloc") ||
      !check(drv.cuMemAlloc(&out, bytes), "cuMemAlloc")) {
    if (in)
      drv.cuMemFree(in);
    return;
  }
  bool ok = check(drv.cuMemcpyHtoD(in, host.data(), bytes), "cuMemcpyHtoD") &&
            check(drv.cuMemsetD8Async(out, 0xFF, bytes, stream), "cuMemsetD8Async");
  if (ok && !graph) {
    if (auto err = nccl.enqueue(c, dtype, bytes, in, out, comm, stream)) {
      fail(what + ": " + err.message());
      ok = false;
    }
  } else if (ok) {
    CUgraph g = nullptr;
    CUgraphExec exec = nullptr;
    ok = check(drv.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
               "cuStreamBeginCapture");
    if (ok) {
      rt::Error enq = nccl.enqueue(c, dtype, bytes, in, out, comm, stream);
      bool ended = check(drv.cuStreamEndCapture(stream, &g), "cuStreamEndCapture");
      if (enq) {
        fail(what + ": " + enq.message());
        ok = false;
      }
      ok = ok && ended && check(drv.cuGraphInstantiate(&exec, g, 0), "cuGraphInstantiate");
    }
    // Replayed twice, the output poisoned before each.
    for (int i = 0; ok && i < 2; ++i)
      ok = check(drv.cuMemsetD8Async(out, 0xFF, bytes, stream), "cuMemsetD8Async") &&
           check(drv.cuGraphLaunch(exec, stream), "cuGraphLaunch");
    if (exec)
      drv.cuGraphExecDestroy(exec);
    if (g)
      drv.cuGraphDestroy(g);
  }
  std::vector<uint8_t> back(bytes);
  ok = ok && check(drv.cuStreamSynchronize(stream), "cuStreamSynchronize") &&
       check(drv.cuMemcpyDtoH(back.data(), out, bytes), "cuMemcpyDtoH");
  if (ok && std::memcmp(back.data(), host.data(), bytes) != 0) {
    size_t at = 0;
    while (back[at] == host[at])
      ++at;
    fail(what + ": the output differs from the input at byte " + std::to_string(at));
  }
  drv.cuMemFree(in);
  drv.cuMemFree(out);
}

/// Calls fn(collective, dtype, elements, graph) for every case over `ranks`
/// ranks: each collective and reduction, bf16 and f32, 1 element to 64 MB
/// over the group, launch by launch and in a CUDA graph. Returns the count.
template <typename Fn> int forEachCase(int ranks, Fn &&fn) {
  int cases = 0;
  for (const char *op : {"all_reduce", "all_gather", "reduce_scatter"})
    for (const char *reduce : {"sum", "max", "min"}) {
      if (std::string(op) != "all_reduce" && std::string(reduce) != "sum")
        continue;
      PlanCollective c;
      c.op = op;
      c.reduce = reduce;
      c.ranks = ranks;
      for (DType dtype : {DType::BF16, DType::F32})
        for (int64_t elements : {int64_t(1), int64_t(3), int64_t(4096), int64_t(1) << 20,
                                 (int64_t(64) << 20) / dtypeBytes(dtype) / ranks})
          for (bool graph : {false, true}) {
            fn(c, dtype, elements, graph);
            ++cases;
          }
    }
  return cases;
}

/// Rank r's element i: a small integer, exact in bf16 and in any sum of 4.
float rankValue(int r, int64_t i) { return float((i * 7 + r * 3) % 17 - 8); }

void store(DType dtype, std::vector<uint8_t> &bytes, int64_t i, float v) {
  if (dtype == DType::BF16) {
    uint16_t b = floatToBF16(v);
    std::memcpy(bytes.data() + i * 2, &b, 2);
  } else {
    std::memcpy(bytes.data() + i * 4, &v, 4);
  }
}

float load(DType dtype, const std::vector<uint8_t> &bytes, int64_t i) {
  if (dtype == DType::BF16) {
    uint16_t b;
    std::memcpy(&b, bytes.data() + i * 2, 2);
    return bf16ToFloat(b);
  }
  float v;
  std::memcpy(&v, bytes.data() + i * 4, 4);
  return v;
}

/// One collective over `n` ranks on GPUs 0..n-1: each rank's output against
/// what the rule gives from every rank's input. `elements` is what each rank
/// holds before (all_reduce, all_gather) or after (reduce_scatter).
int runGroup(CudaDriver &drv, Nccl &nccl, const std::vector<GpuContext> &gpus,
             const std::vector<NcclComm> &comms, const PlanCollective &c, DType dtype,
             int64_t elements, bool graph) {
  const int n = int(comms.size());
  const int64_t eb = dtypeBytes(dtype);
  const bool gather = c.op == "all_gather", scatter = c.op == "reduce_scatter";
  const int64_t inCount = scatter ? elements * n : elements;
  const int64_t outCount = gather ? elements * n : scatter ? elements : elements;
  std::string what = c.op + (c.op == "all_reduce" ? "(" + c.reduce + ")" : "") + " over " +
                     std::to_string(n) + " GPUs, " + std::string(dtypeName(dtype)) + " " +
                     std::to_string(inCount * eb) + " bytes a rank" +
                     (graph ? " in a CUDA graph" : "");
  std::mutex m;
  std::vector<std::string> errors;
  std::vector<std::vector<uint8_t>> outs(size_t(n), std::vector<uint8_t>(size_t(outCount * eb)));
  onRankThreads(n, [&](int r) {
    auto fail = [&](const std::string &why) {
      std::lock_guard<std::mutex> lock(m);
      errors.push_back("rank " + std::to_string(r) + ": " + why);
    };
    CUstream stream = nullptr;
    CUdeviceptr in = 0, out = 0;
    auto ok = [&](CUresult res, const char *call) {
      if (auto err = drv.check(res, call)) {
        fail(err.message());
        return false;
      }
      return true;
    };
    std::vector<uint8_t> host(size_t(inCount * eb));
    for (int64_t i = 0; i < inCount; ++i)
      store(dtype, host, i, rankValue(r, i));
    bool good = !gpus[size_t(r)].makeCurrent() &&
                ok(drv.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate") &&
                ok(drv.cuMemAlloc(&in, host.size()), "cuMemAlloc") &&
                ok(drv.cuMemAlloc(&out, outs[size_t(r)].size()), "cuMemAlloc") &&
                ok(drv.cuMemcpyHtoD(in, host.data(), host.size()), "cuMemcpyHtoD") &&
                ok(drv.cuMemsetD8Async(out, 0xFF, outs[size_t(r)].size(), stream), "memset");
    CUgraph g = nullptr;
    CUgraphExec exec = nullptr;
    if (good && graph) {
      good = ok(drv.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "capture");
      if (good) {
        rt::Error enq = nccl.enqueue(c, dtype, inCount * eb, in, out, comms[size_t(r)], stream);
        good = ok(drv.cuStreamEndCapture(stream, &g), "cuStreamEndCapture");
        if (enq) {
          fail(enq.message());
          good = false;
        }
        good = good && ok(drv.cuGraphInstantiate(&exec, g, 0), "cuGraphInstantiate") &&
               ok(drv.cuGraphLaunch(exec, stream), "cuGraphLaunch");
      }
    } else if (good) {
      if (rt::Error err = nccl.enqueue(c, dtype, inCount * eb, in, out, comms[size_t(r)], stream)) {
        fail(err.message());
        good = false;
      }
    }
    good = good && ok(drv.cuStreamSynchronize(stream), "cuStreamSynchronize") &&
           ok(drv.cuMemcpyDtoH(outs[size_t(r)].data(), out, outs[size_t(r)].size()), "DtoH");
    if (exec)
      drv.cuGraphExecDestroy(exec);
    if (g)
      drv.cuGraphDestroy(g);
    if (in)
      drv.cuMemFree(in);
    if (out)
      drv.cuMemFree(out);
    if (stream)
      drv.cuStreamDestroy(stream);
  });
  if (!errors.empty()) {
    fail(what + ": " + errors.front() +
         (errors.size() > 1 ? " (and " + std::to_string(errors.size() - 1) + " more)" : ""));
    return 1;
  }
  for (int r = 0; r < n; ++r)
    for (int64_t i = 0; i < outCount; ++i) {
      float want = 0;
      if (gather) {
        want = rankValue(int(i / elements), i % elements);
      } else {
        const int64_t at = scatter ? r * elements + i : i;
        want = rankValue(0, at);
        for (int q = 1; q < n; ++q) {
          float v = rankValue(q, at);
          want = c.reduce == "max" ? std::max(want, v) : c.reduce == "min" ? std::min(want, v)
                                                                            : want + v;
        }
      }
      float got = load(dtype, outs[size_t(r)], i);
      if (got != want) {
        fail(what + ": rank " + std::to_string(r) + " element " + std::to_string(i) + " is " +
             std::to_string(got) + ", expected " + std::to_string(want));
        return 1;
      }
    }
  return 0;
}

/// Every collective over the first `n` GPUs (n >= 2).
int runGroups(CudaDriver &drv, Nccl &nccl, int n) {
  std::vector<GpuContext> gpus;
  for (int r = 0; r < n; ++r) {
    auto g = GpuContext::create(r);
    if (!g) {
      fail("GPU " + std::to_string(r) + ": " + g.takeError().message());
      return 0;
    }
    gpus.push_back(std::move(*g));
  }
  auto id = nccl.uniqueId();
  if (!id) {
    fail("ncclGetUniqueId: " + id.takeError().message());
    return 0;
  }
  std::vector<NcclComm> comms(size_t(n), nullptr);
  std::mutex m;
  std::string error;
  onRankThreads(n, [&](int r) {
    rt::Error err = gpus[size_t(r)].makeCurrent();
    if (!err) {
      auto c = nccl.communicator(*id, n, r);
      if (c)
        comms[size_t(r)] = *c;
      else
        err = c.takeError();
    }
    if (err) {
      std::lock_guard<std::mutex> lock(m);
      error = "rank " + std::to_string(r) + ": " + err.message();
    }
  });
  int cases = 0;
  if (!error.empty()) {
    fail("a group of " + std::to_string(n) + " GPUs: " + error);
  } else {
    cases = forEachCase(n, [&](const PlanCollective &c, DType dtype, int64_t elements,
                               bool graph) {
      runGroup(drv, nccl, gpus, comms, c, dtype, elements, graph);
    });
  }
  for (NcclComm c : comms)
    if (c)
      nccl.destroy(c);
  return cases;
}

} // namespace

int main() {
  auto drv = CudaDriver::get();
  if (!drv) {
    llvm::outs() << "SKIP: no GPU: " << drv.takeError().message() << "\n";
    return 77;
  }
  auto ctx = GpuContext::create();
  if (!ctx) {
    llvm::outs() << "SKIP: no GPU: " << ctx.takeError().message() << "\n";
    return 77;
  }
  auto nccl = Nccl::get();
  if (!nccl) {
    llvm::outs() << "SKIP: no NCCL: " << nccl.takeError().message() << "\n";
    return 77;
  }
  llvm::outs() << "NCCL " << (*nccl)->version() << " from " << (*nccl)->path() << "\n";
  auto id = (*nccl)->uniqueId();
  if (!id) {
    llvm::errs() << "FAIL: ncclGetUniqueId: " << id.takeError().message() << "\n";
    return 1;
  }
  auto comm = (*nccl)->communicator(*id, 1, 0);
  if (!comm) {
    llvm::errs() << "FAIL: a one-rank communicator: " << comm.takeError().message() << "\n";
    return 1;
  }
  CudaDriver &d = **drv;
  CUstream stream = nullptr;
  if (auto err = d.check(d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate")) {
    llvm::errs() << "FAIL: " << err.message() << "\n";
    return 1;
  }
  int cases = forEachCase(1, [&](const PlanCollective &c, DType dtype, int64_t elements,
                                 bool graph) {
    runCase(d, **nccl, *comm, stream, c, dtype, elements * dtypeBytes(dtype), graph);
  });
  d.cuStreamDestroy(stream);
  (*nccl)->destroy(*comm);
  int gpus = 0;
  (void)d.check(d.cuDeviceGetCount(&gpus), "cuDeviceGetCount");
  for (int n : {2, 4})
    if (n <= gpus)
      cases += runGroups(d, **nccl, n);
  if (gpus < 2)
    llvm::outs() << "nccl: one GPU: the groups of several GPUs were not run\n";
  llvm::outs() << "nccl: " << cases - failures << " of " << cases << " cases passed\n";
  return failures ? 1 : 0;
}
