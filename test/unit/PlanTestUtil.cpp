//===- PlanTestUtil.cpp - planning a graph and compiling its kernels ------===//
#include "test/unit/PlanTestUtil.h"

#include "compiler/interp/Interpreter.h"
#include "compiler/transforms/Passes.h"
#include "frontends/json/GraphReader.h"
#include "runtime/Nvrtc.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace fusec::testing {

bool nvrtcLoads() {
  if (llvm::Error err = loadNvrtc()) {
    llvm::consumeError(std::move(err));
    return false;
  }
  return true;
}


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

std::vector<HostTensor> randomInputs(mlir::func::FuncOp f, uint64_t seed) {
  std::vector<HostTensor> in;
  for (unsigned i = 0; i < f.getNumArguments(); ++i) {
    llvm::ArrayRef<int64_t> s = shapeOf(f.getArgument(i));
    in.push_back(randomTensor(dtypeOf(f.getArgument(i)), {s.begin(), s.end()}, seed + i));
  }
  return in;
}

void expectSameResults(const std::string &text, uint64_t seed, bool fuse,
                       mlir::OwningOpRef<mlir::ModuleOp> *keep, mlir::MLIRContext *context,
                       const char *gemm, bool decomposedReference) {
  mlir::MLIRContext local;
  mlir::MLIRContext &ctx = context ? *context : local;
  auto module = importGraphText(text, "random.json", ctx);
  ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError()) << "\n" << text;
  mlir::OwningOpRef<mlir::ModuleOp> fused = (*module)->clone();
  if (decomposedReference) {  // composites as the compiler computes them
    mlir::PassManager pm(&ctx);
    buildDecomposePipeline(pm);
    ASSERT_TRUE(mlir::succeeded(pm.run(**module))) << text;
  }
  CompileOptions o;
  o.fuse = fuse;
  o.gemm = gemm;
  ASSERT_FALSE(bool(fuseModule(*fused, o))) << text;
  auto before = graphFunction(**module), after = graphFunction(*fused);
  std::vector<HostTensor> in = randomInputs(before, seed * 31);
  auto ref = interpret(before, in);
  auto got = interpret(after, in);
  ASSERT_TRUE(bool(ref)) << llvm::toString(ref.takeError());
  ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
  ASSERT_EQ(ref->size(), got->size());
  for (size_t i = 0; i < ref->size(); ++i)
    EXPECT_TRUE((*ref)[i] == (*got)[i]) << "seed " << seed << " output " << i << "\n" << text;
  if (keep)
    *keep = std::move(fused);
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
