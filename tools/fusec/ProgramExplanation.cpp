//===- ProgramExplanation.cpp - a compiled program's explanation ----------===//
#include "tools/fusec/ProgramExplanation.h"

#include "api/ProgramImpl.h"
#include "compiler/pipeline/SharedLaunch.h"
#include "frontends/json/GraphReader.h"

namespace fusec::cli {

Explanation explainProgram(Program &program, const std::vector<std::string> &bind) {
  Program::Impl &impl = ProgramAccess::of(program);
  Explanation e = explain(*impl.fused, impl.profile());
  if (llvm::Expected<SizeBindings> sizes = parseSizeBindings(bind))
    e.sizes = *sizes;
  else
    llvm::consumeError(sizes.takeError());  // compiling has reported it
  if (impl.padded()) {
    for (const auto &[name, size] : impl.call.sizes)
      e.sizes[name] = size;
    e.paddedSizes = impl.plan.paddedAt;
  }
  e.sharedLaunches = impl.plan.sharedLaunches;
  e.sharedSavedUs = impl.plan.sharedLaunchSavedUs;
  e.launchesOverlap = launchesOverlap(impl.plan);
  for (ExplainedKernel &k : e.kernels)
    k.schedule = kernelSchedule(impl.plan, k.name);
  return e;
}

} // namespace fusec::cli
