//===- Kernels.cpp - kernel dispatch and what all families share ----------===//
#include "compiler/codegen/KernelSpec.h"

#include "compiler/codegen/Prelude.h"
#include "compiler/codegen/ReductionPhases.h"
#include "compiler/codegen/ScalarOps.h"
#include "compiler/cost/CostModel.h"
#include "compiler/shape/ShapeRules.h"

#include <cstdio>
#include <cstring>

using namespace mlir;

namespace fusec::codegen {

llvm::Error finishKernel(FusionOp fusion, KernelSpec &spec) {
  // The runtime launches kernels before the one ahead of them has completed
  // (sm_90+): one that touched memory before the wait would race it. A kernel
  // that reads its weights first says so (readsBeforeWait) and waits per role.
  size_t entry = spec.source.find("extern \"C\" __global__");
  size_t body = entry == std::string::npos ? entry : spec.source.find(") {\n", entry);
  const char *first = spec.readsBeforeWait >= 0 ? detail::kWaitPerRole : detail::kAfterPrior;
  auto waits = [&] {  // one per role
    size_t n = 0;
    for (size_t at = spec.source.find("fz_after_prior();", body); at != std::string::npos;
         at = spec.source.find("fz_after_prior();", at + 1))
      ++n;
    return n;
  };
  if (body == std::string::npos || spec.source.compare(body + 4, std::strlen(first), first) != 0 ||
      (spec.readsBeforeWait >= 0 && waits() < 2))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: kernel %s does not wait for the kernel ahead "
                                   "(fz_after_prior()) first, or in each role",
                                   spec.name.c_str());
  spec.source = std::string(kernelPrelude()) + "\n" + detail::headerComment(fusion, spec) +
                 spec.source;
  return llvm::Error::success();
}

namespace detail {

std::string headerComment(FusionOp fusion, const KernelSpec &spec) {
  std::string s = "// kernel " + spec.name + " (" + spec.family + ")\n";
  if (auto nodes = fusion->getAttrOfType<ArrayAttr>("nodes"); nodes && !nodes.empty()) {
    s += "//   graph nodes:";
    for (Attribute n : nodes)
      s += " " + cast<StringAttr>(n).str();
    s += "\n";
  }
  s += "//   ops:";
  for (Operation &op : fusion.getBodyBlock().without_terminator())
    s += " " + op.getName().stripDialect().str();
  s += "\n";
  char buf[256];
  auto i64 = [&](const char *name) {
    auto a = fusion->getAttrOfType<IntegerAttr>(name);
    return a ? a.getInt() : 0;
  };
  auto f64 = [&](const char *name) {
    auto a = fusion->getAttrOfType<FloatAttr>(name);
    return a ? a.getValueAsDouble() : 0.0;
  };
  std::snprintf(buf, sizeof buf,
                "//   HBM bytes: %lld fused (%lld if each op ran alone); predicted %.2f us "
                "(unfused %.2f us)\n",
                (long long)i64("bytes_fused"), (long long)i64("bytes_unfused"),
                f64("predicted_us"), f64("unfused_us"));
  return s + buf + "//   schedule: " + spec.schedule + "\n";
}

std::string parameterList(FusionOp fusion) {
  std::string s;
  unsigned i = 0;
  for (Value v : fusion.getInputs())
    s += std::string(i ? ", " : "") + "const " + storageType(dtypeOf(v)) + " *__restrict__ in" +
         std::to_string(i), ++i;
  unsigned o = 0;
  for (Value v : fusion.getResults())
    s += std::string(", ") + storageType(dtypeOf(v)) + " *__restrict__ out" + std::to_string(o++);
  if (i == 0 && !s.empty())
    s = s.substr(2);
  return s;
}

int64_t maxElementBytes(FusionOp fusion) {
  int64_t m = 1;
  for (Value v : fusion.getInputs())
    m = std::max(m, dtypeBytes(dtypeOf(v)));
  for (Value v : fusion.getResults())
    m = std::max(m, dtypeBytes(dtypeOf(v)));
  return m;
}

const char *indexType(FusionOp fusion) {
  int64_t most = 1;
  for (Value v : fusion.getInputs())
    most = std::max(most, shape::numElements(shapeOf(v)));
  for (Value v : fusion.getResults())
    most = std::max(most, shape::numElements(shapeOf(v)));
  if (auto d = fusion->getAttrOfType<DenseI64ArrayAttr>("domain"))
    most = std::max(most, shape::numElements(d.asArrayRef()));
  // Offsets are computed with a little headroom (a vector past the end, clamps).
  return most < (int64_t(1) << 30) ? "int" : "long long";
}

} // namespace detail
} // namespace fusec::codegen
