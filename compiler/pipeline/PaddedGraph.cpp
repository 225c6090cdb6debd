//===- PaddedGraph.cpp - one compile for every size up to a bound ----------===//
#include "compiler/pipeline/PaddedGraph.h"

#include "compiler/support/LlvmError.h"
#include "compiler/support/Printable.h"
#include "compiler/transforms/Passes.h"
#include "compiler/transforms/SizeDims.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir;

namespace fusec {

namespace {

llvm::Error fail(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", message.c_str());
}

func::FuncOp firstFunc(ModuleOp m) {
  for (auto f : m.getOps<func::FuncOp>())
    return f;
  return {};
}

std::vector<std::string> strings(ArrayAttr a, size_t rank) {
  std::vector<std::string> out(rank);
  if (a && a.size() == rank)
    for (size_t i = 0; i < rank; ++i)
      out[i] = cast<StringAttr>(a[i]).getValue().str();
  return out;
}

} // namespace

llvm::Expected<OwningOpRef<ModuleOp>> readPadded(const GraphRead &read, const SizeMap &sizes,
                                                 const SizeMap &bounds) {
  auto module = read(sizes);
  if (!module)
    return module.takeError();
  func::FuncOp graph = firstFunc(**module);
  bool any = false;
  for (auto [name, bound] : bounds) {
    auto it = sizes.find(name);
    if (it == sizes.end())
      return fail("the size of '" + printable(name) + "' is not given");
    const int64_t size = it->second;
    if (bound > kMaxPaddedBound)
      return fail("the bound of '" + printable(name) + "' is " + std::to_string(bound) +
                  "; a size that varies is at most " + std::to_string(kMaxPaddedBound) +
                  " (the program takes it as an i32)");
    if (size <= 1 && bound <= 1)
      continue;  // nothing varies
    // Another size the graph reads at in the same way: below the padded one
    // (the graph may not take more than the bound), or above 2 when that
    // would be 1 (a dim of 1 may broadcast). At size 1 nothing is padded;
    // the probe only checks that the name is one of the graph's.
    int64_t probeSize = size - 1;
    if (probeSize <= 1)
      probeSize = std::min<int64_t>(bound, size == 1 ? 2 : 3);
    if (probeSize == size)
      continue;  // size 2 of at most 2: compiled as it is, serving 2 only
    SizeMap other = sizes;
    other[name] = probeSize;
    auto probe = read(other);
    if (!probe)
      return fail("the graph does not read at " + printable(name) + "=" +
                  std::to_string(probeSize) + ": " + llvm::toString(probe.takeError()));
    OwningOpRef<ModuleOp> checked;
    func::FuncOp target = graph;
    if (size == 1) {  // marks on a copy, thrown away
      checked = (**module).clone();
      target = firstFunc(*checked);
    }
    if (llvm::Error err = markSizeDims(target, firstFunc(**probe), name, size, probeSize)) {
      if (size == 1) {  // the graph changes with the name: it is the graph's (a dim of 1
        llvm::consumeError(std::move(err));  // may read otherwise than larger ones)
        continue;
      }
      return fail("'" + printable(name) + "' cannot vary from call to call: " +
                  llvm::toString(std::move(err)));
    }
    bool used = false;
    target.walk([&](Operation *op) {
      if (auto dims = op->getAttrOfType<ArrayAttr>(kSizeDimsAttr))
        for (Attribute r : dims)
          for (Attribute d : cast<ArrayAttr>(r))
            used |= splitMark(cast<StringAttr>(d).getValue()).first == name;
    });
    for (unsigned i = 0; i < target.getNumArguments() && !used; ++i)
      if (auto dims = target.getArgAttrOfType<ArrayAttr>(i, kSizeDimsAttr))
        for (Attribute d : dims)
          used |= splitMark(cast<StringAttr>(d).getValue()).first == name;
    if (!used)
      return fail("'" + printable(name) + "' is no named dim of the graph");
    any |= size > 1;
  }
  if (!any)
    return module;
  std::string diag;
  ScopedDiagnosticHandler handler(graph.getContext(), [&](Diagnostic &d) {
    llvm::raw_string_ostream os(diag);
    os << d.str();
    return success();
  });
  PassManager pm(graph.getContext());
  pm.addNestedPass<func::FuncOp>(createFusecPadSizes());
  if (failed(pm.run(**module)))
    return fail(diag.empty() ? std::string("the graph cannot be padded") : diag);
  return module;
}

PaddedSignature paddedSignature(func::FuncOp graph) {
  PaddedSignature sig;
  for (unsigned i = 0; i < graph.getNumArguments(); ++i) {
    auto name = graph.getArgAttrOfType<StringAttr>(i, kSizeArgAttr);
    sig.sizeArgs.push_back(name ? name.getValue().str() : "");
    auto type = cast<RankedTensorType>(graph.getArgument(i).getType());
    sig.argDims.push_back(
        strings(graph.getArgAttrOfType<ArrayAttr>(i, kSizeDimsAttr), type.getRank()));
    sig.argShapes.emplace_back(type.getShape().begin(), type.getShape().end());
  }
  for (unsigned i = 0; i < graph.getNumResults(); ++i) {
    size_t rank = cast<RankedTensorType>(graph.getResultTypes()[i]).getRank();
    sig.resultDims.push_back(
        strings(graph.getResultAttrOfType<ArrayAttr>(i, kSizeDimsAttr), rank));
  }
  return sig;
}

} // namespace fusec

namespace fusec {

llvm::Expected<std::vector<HostTensor>> interpretPadded(func::FuncOp graph,
                                                        const std::vector<HostTensor> &inputs,
                                                        const SizeMap &sizes,
                                                        const InterpOptions &options) {
  PaddedSignature sig = paddedSignature(graph);
  auto args = padInputs(sig, inputs, sizes);
  if (!args)
    return args.takeError();
  auto results = interpret(graph, *args, options);
  if (!results)
    return results.takeError();
  return cropOutputs(sig, *results, sizes);
}

} // namespace fusec
