//===- Kernels.cpp - kernel dispatch and what all families share ----------===//
#include "compiler/codegen/KernelSpec.h"
#include "compiler/support/Printable.h"

#include "compiler/codegen/Prelude.h"
#include "compiler/codegen/ReductionPhases.h"
#include "compiler/codegen/ScalarOps.h"
#include "compiler/cost/CostModel.h"
#include "compiler/shape/ShapeRules.h"

#include <cctype>
#include <cstdio>

using namespace mlir;

namespace fusec::codegen {

llvm::Error finishKernel(FusionOp fusion, KernelSpec &spec) {
  // The runtime launches a kernel before the one ahead of it has completed
  // (sm_90+); one that reads operands before its wait (readsBeforeWait)
  // must wait in each role instead of first (printKernel writes the wait).
  if ((spec.readsBeforeWait >= 0) != spec.text.waitPerRole)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: kernel %s reads %s before its wait but waits "
                                   "%s",
                                   spec.name.c_str(), spec.readsBeforeWait >= 0 ? "operands" : "nothing",
                                   spec.text.waitPerRole ? "per role" : "first");
  spec.text.header = detail::headerComment(fusion, spec);
  spec.entry = entryName(spec.name);
  spec.source = compiledSource(spec.text, spec.entry);
  return llvm::Error::success();
}

std::string entryName(llvm::StringRef name) {
  llvm::StringRef rest = name;
  if (!rest.consume_front("k"))
    return name.str();
  size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits])))
    ++digits;
  if (digits == 0 || digits == rest.size() || rest[digits] != '_')
    return name.str();
  return "k" + rest.drop_front(digits).str();
}

std::string compiledSource(const KernelText &text, const std::string &entry) {
  return std::string(kernelPrelude()) + "\n" + printKernel(text, entry);
}

std::string annotatedSource(const KernelLaunch &kernel) {
  return std::string(kernelPrelude()) + "\n" + kernel.text.header +
         printKernel(kernel.text, kernel.entry);
}

std::string printKernel(const KernelText &t, const std::string &name) {
  std::string params;
  for (const KernelParam &p : t.params)
    params += (params.empty() ? "" : ", ") + p.type + p.name;
  return t.helpers + "extern \"C\" __global__ void " + t.qualifiers + "\n" + name + "(" + params +
         t.moreParams + ") {\n" + (t.waitPerRole ? detail::kWaitPerRole : detail::kAfterPrior) +
         t.body + "}\n";
}

namespace detail {

std::string headerComment(FusionOp fusion, const KernelSpec &spec) {
  std::string s = "// kernel " + spec.name + " (" + spec.family + ")\n";
  if (auto nodes = fusion->getAttrOfType<ArrayAttr>("nodes"); nodes && !nodes.empty()) {
    s += "//   graph nodes:";
    for (Attribute n : nodes)
      s += " " + printable(cast<StringAttr>(n).getValue());
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

std::vector<KernelParam> parameters(FusionOp fusion) {
  std::vector<KernelParam> params;
  unsigned i = 0;
  for (Value v : fusion.getInputs())
    params.push_back({"const " + std::string(storageType(dtypeOf(v))) + " *__restrict__ ",
                      "in" + std::to_string(i++)});
  unsigned o = 0;
  for (Value v : fusion.getResults())
    params.push_back({std::string(storageType(dtypeOf(v))) + " *__restrict__ ",
                      "out" + std::to_string(o++)});
  return params;
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
