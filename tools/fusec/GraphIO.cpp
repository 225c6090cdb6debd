//===- GraphIO.cpp - graph inputs and outputs as host tensors -------------===//
#include "tools/fusec/GraphIO.h"

#include "frontends/json/GraphReader.h"
#include "frontends/onnx/OnnxReader.h"

#include "compiler/dialect/FusecDialect.h"
#include "compiler/interp/Interpreter.h"
#include "compiler/pipeline/Compile.h"
#include "compiler/shape/ShapeRules.h"
#include "runtime/Safetensors.h"
#include "runtime/WeightFiles.h"
#include "compiler/support/LlvmError.h"

#include "runtime/TensorCompare.h"
#include "compiler/support/Printable.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

namespace fusec::cli {

namespace {
std::string nameAttr(mlir::DictionaryAttr attrs, size_t index) {
  if (attrs)
    if (auto s = attrs.getAs<mlir::StringAttr>("fusec.name"))
      return s.str();
  return "arg" + std::to_string(index);
}

std::string describe(DType t, llvm::ArrayRef<int64_t> shape) {
  return describeTensor(t, std::vector<int64_t>(shape.begin(), shape.end()));
}
} // namespace

std::vector<std::string> inputNames(mlir::func::FuncOp func) {
  std::vector<std::string> names;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    names.push_back(nameAttr(func.getArgAttrDict(i), i));
  return names;
}

std::set<std::string> parameterNames(mlir::func::FuncOp func) {
  std::vector<std::string> names = inputNames(func);
  std::set<std::string> out;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (isParameter(func, i))
      out.insert(names[i]);
  return out;
}

std::vector<std::string> outputNames(mlir::func::FuncOp func) {
  std::vector<std::string> names;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    names.push_back(nameAttr(func.getResultAttrDict(i), i));
  return names;
}

std::vector<GraphArgument> graphArguments(mlir::func::FuncOp func) {
  std::vector<std::string> names = inputNames(func);
  std::vector<double> scales = randomInputScales(func);
  std::vector<GraphArgument> args;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    mlir::Value arg = func.getArgument(i);
    llvm::ArrayRef<int64_t> shape = shapeOf(arg);
    args.push_back({names[i], dtypeOf(arg), std::vector<int64_t>(shape.begin(), shape.end()),
                    isParameter(func, i), scales[i]});
  }
  return args;
}

llvm::Expected<std::vector<HostTensor>> prepareInputs(mlir::func::FuncOp func,
                                                      const TensorSources &sources,
                                                      uint64_t seed) {
  return prepareInputs(graphArguments(func), sources, seed);
}

llvm::Expected<std::vector<HostTensor>> prepareInputs(const std::vector<GraphArgument> &args,
                                                      const TensorSources &sources,
                                                      uint64_t seed) {
  // The inputs live on the host first: ones that cannot be held are refused
  // before an allocation aborts the process (the reference interpreter's own
  // tensors are checked when it runs: checkInterpreterFits).
  {
    double bytes = 0;
    for (const GraphArgument &arg : args)
      bytes += double(shape::numElements(arg.shape)) * dtypeBytes(arg.dtype);
    double machine = hostMemoryBytes();
    if (machine > 0 && bytes > machine / 2)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "the graph's inputs take %.1f GiB, more than half of this "
                                     "machine's %.1f GiB of memory",
                                     bytes / (1 << 30), machine / (1 << 30));
  }
  std::vector<HostTensor> tensors;
  // Each tensor with the file it came from, for messages.
  std::map<std::string, std::pair<HostTensor, std::string>> inputs, weights;
  // Only the graph's tensors are read from --inputs (its header first): a
  // file of other tensors, or a huge one, is not read whole.
  std::vector<std::string> unread;
  if (!sources.inputs.empty()) {
    std::set<std::string> argNames;
    for (const GraphArgument &arg : args)
      argNames.insert(arg.name);
    auto read = readSafetensorsSelected(
        sources.inputs, [&](const std::string &n) { return argNames.count(n) > 0; }, &unread);
    if (!read)
      return read.takeError();
    for (auto &[name, t] : *read)
      inputs.emplace(name, std::make_pair(std::move(t), sources.inputs));
  }
  // Weights files: only their headers here; each parameter's bytes are read
  // into its tensor below (the matching rules: runtime/WeightFiles.h).
  const bool fromWeights = !sources.weights.empty();
  std::optional<WeightFiles> files;
  std::vector<std::optional<WeightRef>> refs;
  if (fromWeights) {
    auto opened = WeightFiles::open(sources.weights);
    if (!opened)
      return opened.takeError();
    files.emplace(std::move(*opened));
    std::vector<TensorSpec> specs;
    std::vector<bool> parameters;
    for (const GraphArgument &arg : args) {
      specs.push_back({arg.name, arg.dtype, arg.shape});
      parameters.push_back(arg.parameter);
    }
    auto bound = files->bind(specs, parameters);
    if (!bound)
      return bound.takeError();
    refs = std::move(*bound);
  }
  if (!fromWeights && !sources.model.empty()) {
    std::set<std::string> parameters;
    for (const GraphArgument &arg : args)
      if (arg.parameter)
        parameters.insert(arg.name);
    auto read = onnxFileWeights(sources.model, parameters);
    if (!read)
      return read.takeError();
    for (auto &[name, t] : *read)
      weights.emplace(name, std::make_pair(std::move(t), sources.model));
  }
  bool drawnParameters = false;
  std::vector<std::string> names;
  for (const GraphArgument &arg : args)
    names.push_back(arg.name);
  for (size_t i = 0; i < args.size(); ++i) {
    DType dt = args[i].dtype;
    llvm::ArrayRef<int64_t> shape = args[i].shape;
    const bool parameter = args[i].parameter;
    const char *kind = parameter ? "parameter" : "graph input";
    if (parameter && fromWeights) {
      HostTensor t(dt, args[i].shape);
      if (rt::Error err = files->read(*refs[i], 0, t.nbytes(), reinterpret_cast<char *>(t.data())))
        return std::move(err);
      tensors.push_back(std::move(t));
      continue;
    }
    auto *pool = parameter && weights.count(names[i]) ? &weights : &inputs;
    auto it = pool->find(names[i]);
    if (it == pool->end()) {
      if (!sources.inputs.empty() && !parameter)
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "%s: missing graph input '%s' (%s)", sources.inputs.c_str(),
                                       names[i].c_str(), describe(dt, shape).c_str());
      tensors.push_back(randomInput({args[i].name, dt, args[i].shape}, args[i].scale, seed, i));
      drawnParameters |= parameter;
      continue;
    }
    const HostTensor &t = it->second.first;
    if (t.dtype() != dt || llvm::ArrayRef<int64_t>(t.shape()) != shape)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(), "%s: tensor '%s' is %s but the %s is %s",
          printable(it->second.second).c_str(), printable(names[i]).c_str(),
          describe(t.dtype(), t.shape()).c_str(),
          kind, describe(dt, shape).c_str());
    tensors.push_back(t);
    pool->erase(it);
  }
  for (const auto &[name, t] : inputs)
    llvm::errs() << "fusec: note: " << printable(t.second) << ": tensor '" << printable(name)
                 << "' is not a graph input; ignored\n";
  for (const std::string &name : unread)
    llvm::errs() << "fusec: note: " << printable(sources.inputs) << ": tensor '"
                 << printable(name) << "' is not a graph input; ignored\n";
  if (drawnParameters)
    llvm::errs() << "fusec: note: parameters drawn at random (pass --weights FILE)\n";
  return tensors;
}

llvm::Expected<bool> checkExpected(mlir::func::FuncOp func, const std::vector<HostTensor> &results,
                                   const std::string &path, double tolerance) {
  return checkExpected(outputNames(func), results, path, tolerance);
}

llvm::Expected<bool> checkExpected(const std::vector<std::string> &names,
                                   const std::vector<HostTensor> &results,
                                   const std::string &path, double tolerance) {
  const std::set<std::string> outputs(names.begin(), names.end());
  auto expected = readSafetensorsSelected(
      path, [&](const std::string &n) { return outputs.count(n) > 0; });
  if (!expected)
    return expected.takeError();
  bool all = true;
  for (size_t i = 0; i < results.size(); ++i) {
    auto it = expected->find(names[i]);
    if (it == expected->end())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "%s: no tensor for output '%s'", printable(path).c_str(),
                                     printable(names[i]).c_str());
    const HostTensor &ref = it->second;
    if (ref.dtype() != results[i].dtype() || ref.shape() != results[i].shape())
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(), "%s: tensor '%s' is %s but the output is %s",
          printable(path).c_str(), printable(names[i]).c_str(), describe(ref.dtype(), ref.shape()).c_str(),
          describe(results[i].dtype(), results[i].shape()).c_str());
    CheckResult c = compareTensors(results[i], ref, tolerance);
    all &= c.pass;
    llvm::outs() << "  " << printable(names[i]) << " vs " << printable(path) << ": "
                 << c.describe() << "\n";
  }
  return all;
}

llvm::Error writeOutputs(mlir::func::FuncOp func, const std::vector<HostTensor> &results,
                         const std::string &path) {
  return writeOutputs(outputNames(func), results, path);
}

llvm::Error writeOutputs(const std::vector<std::string> &names,
                         const std::vector<HostTensor> &results, const std::string &path) {
  std::map<std::string, HostTensor> byName;
  for (size_t i = 0; i < results.size(); ++i)
    byName.emplace(names[i], results[i]);
  return writeSafetensors(path, byName);
}

} // namespace fusec::cli
