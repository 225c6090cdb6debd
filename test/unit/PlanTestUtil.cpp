//===- PlanTestUtil.cpp - planning a graph and compiling its kernels ------===//
#include "test/unit/PlanTestUtil.h"

#include "frontends/json/GraphReader.h"
#include "runtime/Nvrtc.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace fusec::testing {

/// Compiles every kernel of a plan with NVRTC for the plan's architecture.
void expectKernelsCompile(const std::string &name, const PlanDesc &plan) {
  for (const PlanStep &s : plan.steps) {
    if (s.kind != PlanStep::Kind::Kernel)
      continue;
    auto k = compile({s.name, s.kernel.source, plan.arch, {}, false});
    EXPECT_TRUE(bool(k)) << name << " " << s.name << " " << plan.arch << ": "
                         << (k ? "" : llvm::toString(k.takeError()));
    if (k)
      EXPECT_FALSE(k->cubin.empty());
  }
}

std::vector<std::string> graphFiles(std::initializer_list<const char *> dirs) {
  std::vector<std::string> files;
  for (const char *dir : dirs) {
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
      if (llvm::StringRef(it->path()).ends_with(".json"))
        files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// Plans a graph for `arch`: code generation differs by target (clusters on sm_90).
llvm::Expected<PlanDesc> planFor(mlir::MLIRContext &ctx, llvm::StringRef text,
                                 llvm::StringRef name, bool fuse, const char *arch,
                                 const char *gemm, int gemmCandidate) {
  auto module = importGraphText(text, name, ctx);
  if (!module)
    return module.takeError();
  CompileOptions o;
  o.fuse = fuse;
  o.arch = arch;
  o.gemm = gemm;
  o.gemmCandidate = gemmCandidate;
  if (llvm::Error err = fuseModule(**module, o))
    return std::move(err);
  return buildPlan(**module, o);
}

} // namespace fusec::testing
