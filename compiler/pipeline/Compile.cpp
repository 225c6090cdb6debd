//===- Compile.cpp - graph module -> fused module -> executable plan ------===//
#include "compiler/pipeline/Compile.h"

#include "compiler/codegen/KernelSpec.h"
#include "compiler/families/CollectiveStep.h"
#include "compiler/families/KernelFamily.h"
#include "compiler/families/LibraryMatmul.h"
#include "compiler/cost/CostModel.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/pipeline/Arena.h"
#include "compiler/pipeline/SharedLaunch.h"
#include "compiler/pipeline/InPlaceOutputs.h"
#include "compiler/support/Printable.h"
#include "compiler/schedule/StridedView.h"
#include "compiler/transforms/Passes.h"
#include "compiler/plan/MatmulTuning.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;

namespace fusec {

llvm::Error fuseModule(ModuleOp module, const CompileOptions &options) {
  if (!findDeviceProfile(options.device))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown device profile '%s' (known: h100, h200, a100, l40s)",
                                   options.device.c_str());
  if (!options.arch.empty() && !isCompileTarget(options.arch))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "unknown target architecture '%s' (fusec compiles for sm_80 and later: sm_80, sm_86, "
        "sm_89, sm_90a, ...)",
        printable(options.arch).c_str());
  if (options.gemm != "auto" && options.gemm != "fusec" && options.gemm != "cublaslt")
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown GEMM choice '%s' (known: auto, fusec, cublaslt)",
                                   options.gemm.c_str());
  std::string diag, why;
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    llvm::raw_string_ostream os(diag);
    os << d.getLocation() << ": " << d.str() << "\n";
    why += (why.empty() ? "" : "; ") + d.str();
    return success();
  });
  // Which pass failed: the partition's failures are the graph's (a sharded
  // dim the ranks do not divide), not fusec's.
  struct FailedPass : PassInstrumentation {
    std::string *name;
    explicit FailedPass(std::string *name) : name(name) {}
    void runAfterPassFailed(Pass *pass, Operation *) override {
      if (name->empty())
        *name = pass->getArgument().str();
    }
  };
  std::string failedPass;
  PassManager pm(module.getContext());
  pm.addInstrumentation(std::make_unique<FailedPass>(&failedPass));
  FusionPipelineOptions o;
  o.fuse = options.fuse;
  o.ranks = options.ranks;
  o.device = options.device;
  o.copyBytesPerSec = options.measured.copyBytesPerSec;
  o.smCount = options.measured.smCount;
  o.arch = options.arch;
  o.gemm = options.gemm;
  buildFusionPipeline(pm, o);
  TimingScope passes = options.timing ? options.timing->nest("fusion passes") : TimingScope();
  if (options.timing)
    pm.enableTiming(passes);
  if (failed(pm.run(module))) {
    if (failedPass == "fusec-partition")
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "cannot split the graph over %d ranks: %s", options.ranks,
                                     why.c_str());
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: fusion failed:\n%s", diag.c_str());
  }
  return llvm::Error::success();
}

namespace {

std::string nameAttr(DictionaryAttr attrs, size_t i) {
  if (attrs)
    if (auto s = attrs.getAs<StringAttr>("fusec.name"))
      return s.str();
  return "t" + std::to_string(i);
}

TensorSpec specOf(Value v, std::string name) {
  ArrayRef<int64_t> s = shapeOf(v);
  return {std::move(name), dtypeOf(v), std::vector<int64_t>(s.begin(), s.end())};
}

} // namespace

StepCost fusionCost(FusionOp f) {
  StepCost c;
  if (auto nodes = f->getAttrOfType<ArrayAttr>("nodes"))
    for (Attribute n : nodes)
      c.nodes.push_back(cast<StringAttr>(n).str());
  for (Operation &op : f.getBodyBlock().without_terminator())
    if (!isView(&op) && !isGenerator(&op))
      c.ops.push_back(op.getName().stripDialect().str());
  auto i64 = [&](const char *n) {
    auto a = f->getAttrOfType<IntegerAttr>(n);
    return a ? a.getInt() : 0;
  };
  auto f64 = [&](const char *n) {
    auto a = f->getAttrOfType<FloatAttr>(n);
    return a ? a.getValueAsDouble() : 0.0;
  };
  c.bytesFused = i64("bytes_fused");
  c.bytesUnfused = i64("bytes_unfused");
  c.flops = i64("flops");
  c.launchesUnfused = static_cast<int>(i64("launches_unfused"));
  c.predictedUs = f64("predicted_us");
  c.unfusedUs = f64("unfused_us");
  return c;
}

std::vector<double> randomInputScales(func::FuncOp graph) {
  std::vector<double> scales(graph.getNumArguments(), 1.0);
  for (unsigned i = 0; i < graph.getNumArguments(); ++i) {
    std::vector<Value> work{graph.getArgument(i)};
    while (!work.empty()) {
      Value v = work.back();
      work.pop_back();
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        int64_t k = 0;
        if (isView(user))
          work.push_back(user->getResult(0));
        else if (auto mm = dyn_cast<MatmulOp>(user))
          k = shapeOf(mm.getLhs()).back();
        else if (auto lin = dyn_cast<LinearOp>(user); lin && use.getOperandNumber() == 1)
          k = shapeOf(lin.getWeight()).back();
        if (k > 1)
          scales[i] = std::min(scales[i], 1.0 / std::sqrt(static_cast<double>(k)));
      }
    }
  }
  return scales;
}

llvm::Expected<PlanDesc> buildPlan(ModuleOp fused, const CompileOptions &options) {
  TimingScope timed = options.timing ? options.timing->nest("planning and kernel sources")
                                     : TimingScope();
  std::optional<DeviceProfile> profile = measuredProfile(options.device, options.measured);
  if (!profile)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "unknown device profile '%s'",
                                   options.device.c_str());
  func::FuncOp func;
  for (auto f : fused.getOps<func::FuncOp>())
    func = f;
  PlanDesc plan;
  plan.graphName = func.getSymName().str();
  plan.device = profile->name;
  plan.arch = options.arch.empty() ? profile->arch : options.arch;
  plan.fused = options.fuse;
  plan.overlapLaunches = options.overlapLaunches;
  plan.ranks = int(programRanks(func));
  if (plan.ranks > 1) {
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      plan.inputShards.push_back(shardAxis(func, i).value_or(-1));
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      plan.outputShards.push_back(resultShardAxis(func, i).value_or(-1));
  }
  llvm::DenseMap<Value, int> bufferOf;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    TensorSpec t = specOf(func.getArgument(i), nameAttr(func.getArgAttrDict(i), i));
    plan.inputs.push_back(t);
    bufferOf[func.getArgument(i)] = plan.buffers.size();
    plan.buffers.push_back({PlanBuffer::Kind::Input, (int)i, t, -1});
  }
  // Graph outputs get their own buffers; the first kernel writing one writes it there.
  Operation *ret = func.getBody().front().getTerminator();
  llvm::DenseMap<Value, int> outputOf;
  for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
    TensorSpec t = specOf(v, nameAttr(func.getResultAttrDict(i), i));
    plan.outputs.push_back(t);
    if (!outputOf.count(v))
      outputOf[v] = i;
  }
  // An output that only reshapes another kernel's result: that kernel writes
  // the output buffer, and the copy group does not run (InPlaceOutputs.h).
  llvm::DenseMap<Operation *, Value> inPlace = outputsWrittenInPlace(func);
  for (auto [copy, source] : inPlace)
    outputOf[source] = outputOf.lookup(copy->getResult(0));
  std::vector<std::string> unused;  // tuned entries that did not apply
  for (Operation &op : func.getBody().front().without_terminator()) {
    auto f = dyn_cast<FusionOp>(op);
    if (!f)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "internal error: op outside a fused group: %s",
                                     op.getName().getStringRef().str().c_str());
    if (auto it = inPlace.find(f); it != inPlace.end()) {
      bufferOf[f->getResult(0)] = bufferOf.lookup(it->second);
      continue;
    }
    std::vector<int> ins, outs;
    for (Value v : f.getInputs())
      ins.push_back(bufferOf.lookup(v));
    for (Value r : f.getResults()) {
      bool isOut = outputOf.count(r);
      int id = plan.buffers.size();
      plan.buffers.push_back({isOut ? PlanBuffer::Kind::Output : PlanBuffer::Kind::Temp,
                              isOut ? outputOf[r] : -1, specOf(r, ""), -1});
      bufferOf[r] = id;
      outs.push_back(id);
    }
    PlanStep step;
    step.name = f->getAttrOfType<StringAttr>("name").str();
    step.cost = fusionCost(f);
    llvm::Expected<KernelFamily> family = familyOf(f);
    if (!family)
      return family.takeError();
    if (*family == KernelFamily::Collective) {
      if (llvm::Error err = collectiveStep(f, ins.at(0), outs.at(0), *profile, step))
        return err;
      const PlanCollective &c = step.collective;
      plan.collectiveScratchBytes =
          std::max(plan.collectiveScratchBytes,
                   collectiveScratchBytes(c, plan.buffers[c.src].tensor,
                                          plan.buffers[c.dst].tensor));
    } else if (kernelFamily(*family).isLibrary()) {
      auto m = libraryMatmul(f, ins, outs[0]);
      if (!m)
        return m.takeError();
      step.kind = PlanStep::Kind::Matmul;
      step.matmul = *m;
      // cuBLASLt's algorithm: a candidate being autotuned, else a tuned one.
      step.matmul.tuningKey = matmulTuningKey(step.matmul.desc, plan.arch);
      if (options.gemmCandidate >= 0) {
        step.matmul.algoRank = options.gemmCandidate;
      } else if (auto t = options.gemmTuning.find(step.matmul.tuningKey);
                 t != options.gemmTuning.end()) {
        if (std::optional<int> r = parseMatmulRankConfig(t->second))
          step.matmul.algoRank = *r;
        else
          unused.push_back("entry '" + printable(t->first) + "' (configuration '" +
                           printable(t->second) + "') does not parse as a cuBLASLt algorithm rank");
      }
      plan.workspaceBytes = 32 << 20;
    } else {
      FamilyTarget target{*profile, plan.arch};
      target.gemm.candidate = options.gemmCandidate;
      target.gemm.tuned = &options.gemmTuning;
      target.gemm.unused = &unused;
      auto k = emitKernel(f, target);
      if (!k)
        return k.takeError();
      step.kind = PlanStep::Kind::Kernel;
      static_cast<KernelLaunch &>(step.kernel) = std::move(*k);
      step.kernel.args = ins;
      step.kernel.inputs = ins.size();
      step.kernel.args.insert(step.kernel.args.end(), outs.begin(), outs.end());
      reducedFirstStep(f, ins, step);
    }
    plan.steps.push_back(std::move(step));
  }
  // An output that repeats another output's value is copied from it at the end.
  for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
    if (outputOf.lookup(v) == (int)i)
      continue;
    int id = plan.buffers.size();
    plan.buffers.push_back({PlanBuffer::Kind::Output, (int)i, plan.outputs[i], -1});
    PlanStep copy;
    copy.kind = PlanStep::Kind::Copy;
    copy.name = "copy_" + plan.outputs[i].name;
    copy.copy = {bufferOf.lookup(v), id};
    plan.steps.push_back(copy);
  }
  if (options.fuse && options.shareLaunches)
    shareLaunches(plan);
  placeTemporaries(plan);
  const std::string file = options.gemmTuningFile.empty() ? "the GEMM tuning cache"
                                                           : options.gemmTuningFile;
  for (const std::string &u : unused)
    plan.warnings.push_back(file + ": " + u + "; using the heuristic's configuration");
  return plan;
}

} // namespace fusec
