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
// Exit status: 0 pass, 1 failure, 77 (ctest's SKIP_RETURN_CODE) without a
// GPU or without NCCL.
//
//===----------------------------------------------------------------------===//
#include "compiler/support/DType.h"
#include "compiler/support/LlvmError.h"
#include "runtime/CudaDriver.h"
#include "runtime/Nccl.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace fusec;

namespace {

int failures = 0;

void fail(const std::string &what) {
  ++failures;
  llvm::errs() << "FAIL: " << what << "\n";
}

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
  int cases = 0;
  for (const char *op : {"all_reduce", "all_gather", "reduce_scatter"})
    for (const char *reduce : {"sum", "max", "min"}) {
      if (std::string(op) != "all_reduce" && std::string(reduce) != "sum")
        continue;
      PlanCollective c;
      c.op = op;
      c.reduce = reduce;
      c.ranks = 1;
      for (DType dtype : {DType::BF16, DType::F32})
        for (int64_t elements : {int64_t(1), int64_t(3), int64_t(4096), int64_t(1) << 20,
                                 (int64_t(64) << 20) / int64_t(dtypeBytes(dtype))})
          for (bool graph : {false, true}) {
            runCase(d, **nccl, *comm, stream, c, dtype, elements * dtypeBytes(dtype), graph);
            ++cases;
          }
    }
  d.cuStreamDestroy(stream);
  (*nccl)->destroy(*comm);
  llvm::outs() << "nccl: " << cases - failures << " of " << cases << " cases passed\n";
  return failures ? 1 : 0;
}
