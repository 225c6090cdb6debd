//===- ranks_process_test.cpp - a split program, one process a GPU --------===//
//
// What a host application does with the API to run a tensor-parallel graph:
// one process makes a group id (Program::newGroupId) and starts one process
// a GPU; each compiles the graph split over the ranks (Options::ranks),
// joins the group as its rank (joinGroup, on the GPU $FUSEC_DEVICE names),
// binds its blocks of the weights from one file holding them whole
// (bindWeights) and runs, launch by launch and as a CUDA graph replay. The
// outputs of every rank must match the reference interpreter on the whole
// graph. examples/tp_llama_block.json over 2 ranks, and 4 where there are 4
// GPUs. A rank that does not finish within 120 s fails the test (its
// processes are killed): nothing waits forever.
//
// Exit status: 0 pass, 1 failure, 77 (ctest's SKIP_RETURN_CODE) with fewer
// than 2 GPUs or without NCCL.
//
//===----------------------------------------------------------------------===//
#include "fusec/fusec.h"

#include "compiler/support/LlvmError.h"
#include "runtime/CudaDriver.h"
#include "runtime/Nccl.h"
#include "runtime/Safetensors.h"
#include "runtime/TensorCompare.h"

#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#ifndef FUSEC_SOURCE_DIR
#error "FUSEC_SOURCE_DIR must name the source tree (for the example graph)"
#endif

using namespace fusec;

namespace {

const std::string kGraph = std::string(FUSEC_SOURCE_DIR) + "/examples/tp_llama_block.json";

std::string hex(const std::string &bytes) {
  static const char *digits = "0123456789abcdef";
  std::string s;
  for (unsigned char c : bytes) {
    s += digits[c >> 4];
    s += digits[c & 15];
  }
  return s;
}

std::string unhex(const std::string &s) {
  std::string bytes;
  for (size_t i = 0; i + 1 < s.size(); i += 2)
    bytes += char(std::stoi(s.substr(i, 2), nullptr, 16));
  return bytes;
}

/// One rank's process: argv = self --rank R --ranks N --id HEX --dir D.
int rankMain(int rank, int ranks, const std::string &id, const std::string &dir) {
  auto fail = [&](const std::string &what, const Status &s) {
    llvm::errs() << "rank " << rank << ": " << what << ": " << s.message() << "\n";
    return 1;
  };
  Options o;
  o.ranks = ranks;
  std::unique_ptr<Program> p;
  if (Status s = Program::compileFile(kGraph, o, p); !s)
    return fail("compile", s);
  if (Status s = p->joinGroup(rank, unhex(id)); !s)
    return fail("joinGroup", s);
  if (Status s = p->bindWeights({dir + "/weights.safetensors"}); !s)
    return fail("bindWeights", s);
  auto inputs = readSafetensors(dir + "/inputs.safetensors");
  if (!inputs)
    return fail("inputs", Status::error(llvm::toString(inputs.takeError())));
  std::vector<HostTensor> in;
  for (size_t i = 0; i < p->inputs().size(); ++i)
    if (!p->isParameter(i))
      in.push_back(inputs->at(p->inputs()[i].name));
  TensorMap out;
  for (bool graph : {false, true}) {
    std::vector<HostTensor> results;
    if (Status s = p->runHost(in, results, graph); !s)
      return fail(graph ? "runHost (CUDA graph)" : "runHost", s);
    for (size_t i = 0; i < results.size(); ++i)
      out.emplace(p->outputs()[i].name + (graph ? ".graph" : ""), std::move(results[i]));
  }
  if (llvm::Error err = writeSafetensors(dir + "/out" + std::to_string(rank) + ".safetensors", out))
    return fail("writing the outputs", Status::error(llvm::toString(std::move(err))));
  return 0;
}

/// Runs `ranks` processes of this binary; true where every one exits 0
/// within the deadline.
bool runRanks(const char *self, int ranks, const std::string &id, const std::string &dir) {
  std::vector<pid_t> pids;
  for (int r = 0; r < ranks; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      setenv("FUSEC_DEVICE", std::to_string(r).c_str(), 1);
      setenv("NCCL_NVLS_ENABLE", "0", 1);
      std::string rs = std::to_string(r), ns = std::to_string(ranks), hid = hex(id);
      execl(self, self, "--rank", rs.c_str(), "--ranks", ns.c_str(), "--id", hid.c_str(),
            "--dir", dir.c_str(), static_cast<char *>(nullptr));
      _exit(127);
    }
    pids.push_back(pid);
  }
  bool ok = true;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  size_t left = pids.size();
  std::vector<bool> done(pids.size(), false);
  while (left > 0) {
    for (size_t i = 0; i < pids.size(); ++i) {
      int status = 0;
      if (done[i] || waitpid(pids[i], &status, WNOHANG) != pids[i])
        continue;
      done[i] = true;
      --left;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        llvm::errs() << "FAIL: rank " << i << " of " << ranks << " exited with status "
                     << status << "\n";
        ok = false;
      }
    }
    if (left > 0 && std::chrono::steady_clock::now() > deadline) {
      llvm::errs() << "FAIL: " << left << " of " << ranks << " ranks still running after 120 s\n";
      for (size_t i = 0; i < pids.size(); ++i)
        if (!done[i]) {
          kill(pids[i], SIGKILL);
          waitpid(pids[i], nullptr, 0);
        }
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ok;
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 9 && std::string(argv[1]) == "--rank")
    return rankMain(std::atoi(argv[2]), std::atoi(argv[4]), argv[6], argv[8]);
  auto drv = CudaDriver::get();
  int gpus = 0;
  if (drv)
    (void)(*drv)->check((*drv)->cuDeviceGetCount(&gpus), "cuDeviceGetCount");
  else
    (void)drv.takeError();
  if (gpus < 2) {
    llvm::outs() << "SKIP: a split program needs 2 GPUs; this machine has " << gpus << "\n";
    return 77;
  }
  std::string id;
  if (Status s = Program::newGroupId(id); !s) {
    llvm::outs() << "SKIP: no NCCL: " << s.message() << "\n";
    return 77;
  }
  // The whole graph: its inputs and weights, and what it computes.
  std::unique_ptr<Program> whole;
  if (Status s = Program::compileFile(kGraph, Options(), whole); !s) {
    llvm::errs() << "FAIL: compile: " << s.message() << "\n";
    return 1;
  }
  std::vector<HostTensor> inputs = whole->randomInputs(7), expected;
  if (Status s = whole->evaluateReference(inputs, expected); !s) {
    llvm::errs() << "FAIL: reference: " << s.message() << "\n";
    return 1;
  }
  char dirTemplate[] = "/tmp/fusec-ranks-XXXXXX";
  std::string dir = mkdtemp(dirTemplate);
  TensorMap weights, perCall;
  for (size_t i = 0; i < inputs.size(); ++i)
    (whole->isParameter(i) ? weights : perCall).emplace(whole->inputs()[i].name, inputs[i]);
  if (llvm::Error err = writeSafetensors(dir + "/weights.safetensors", weights)) {
    llvm::errs() << "FAIL: " << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  if (llvm::Error err = writeSafetensors(dir + "/inputs.safetensors", perCall)) {
    llvm::errs() << "FAIL: " << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  int failures = 0;
  for (int ranks : {2, 4}) {
    if (ranks > gpus)
      break;
    if (ranks > 2 && Program::newGroupId(id).code() != ErrorCode::Ok)
      return 1;
    if (!runRanks(argv[0], ranks, id, dir)) {
      ++failures;
      continue;
    }
    for (int r = 0; r < ranks; ++r) {
      auto out = readSafetensors(dir + "/out" + std::to_string(r) + ".safetensors");
      if (!out) {
        llvm::errs() << "FAIL: " << llvm::toString(out.takeError()) << "\n";
        ++failures;
        continue;
      }
      for (size_t i = 0; i < expected.size(); ++i)
        for (const char *how : {"", ".graph"}) {
          std::string name = whole->outputs()[i].name + how;
          CheckResult c = compareTensors(out->at(name), expected[i]);
          llvm::outs() << (c.pass ? "ok" : "FAIL") << " " << ranks << " ranks, rank " << r << ", "
                       << name << ": " << c.describe() << "\n";
          failures += c.pass ? 0 : 1;
        }
    }
  }
  return failures ? 1 : 0;
}
