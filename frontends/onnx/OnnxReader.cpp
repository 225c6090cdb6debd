//===- OnnxReader.cpp - ONNX models -> fusec's graph format ---------------===//
#include "frontends/onnx/OnnxReader.h"
#include "compiler/support/Printable.h"
#include "compiler/support/ReadFile.h"

#include "frontends/onnx/Converter.h"

#include "llvm/Support/MemoryBuffer.h"

#include <set>

namespace fusec {

using onnx_import::Converter;
using onnx_import::initializerValues;
using onnx_import::Unsupported;

namespace {

/// The model in `bytes`, or an error naming `fileName`.
llvm::Expected<onnx::ModelProto> parseModel(llvm::StringRef bytes, llvm::StringRef fileName) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "%s: not an ONNX model (the protobuf does not parse)",
                                   fileName.str().c_str());
  return model;
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readModel(llvm::StringRef path) {
  return readFileBounded(path, "model", FileLimits::kModel);
}

} // namespace

llvm::Expected<std::string> onnxToGraphJson(llvm::StringRef bytes, llvm::StringRef fileName,
                                            const SizeBindings &sizes) {
  llvm::Expected<onnx::ModelProto> model = parseModel(bytes, fileName);
  if (!model)
    return model.takeError();
  try {
    Converter c(*model, fileName.str(), sizes);
    return c.convert().dump(2) + "\n";
  } catch (const Unsupported &u) {
    // The model's names (nodes, tensors, dynamic axes) are in the message:
    // escaped here, once for every message the converter builds.
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s",
                                   printable(u.message).c_str());
  } catch (const std::exception &e) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s",
                                   printable(fileName.str()).c_str(), printable(e.what()).c_str());
  }
}

llvm::Expected<std::map<std::string, HostTensor>>
onnxFileWeights(llvm::StringRef path, const std::set<std::string> &names) {
  auto buffer = readModel(path);
  if (!buffer)
    return buffer.takeError();
  llvm::Expected<onnx::ModelProto> model = parseModel((*buffer)->getBuffer(), path);
  if (!model)
    return model.takeError();
  std::map<std::string, HostTensor> weights;
  for (const onnx::TensorProto &t : model->graph().initializer()) {
    if (!names.count(t.name()))
      continue;
    llvm::Expected<HostTensor> v = initializerValues(t, path);
    if (!v)
      return v.takeError();
    weights.emplace(t.name(), std::move(*v));
  }
  return weights;
}

llvm::Expected<std::string> onnxFileToGraphJson(llvm::StringRef path, const SizeBindings &sizes) {
  auto buffer = readModel(path);
  if (!buffer)
    return buffer.takeError();
  return onnxToGraphJson((*buffer)->getBuffer(), path, sizes);
}

llvm::Expected<NamedDims> namedDimsOfModelFile(llvm::StringRef path) {
  const bool onnx = path.ends_with(".onnx");
  auto buffer = readFileBounded(path, onnx ? "model" : "graph",
                                onnx ? FileLimits::kModel : FileLimits::kGraph);
  if (!buffer)
    return buffer.takeError();
  llvm::StringRef bytes = (*buffer)->getBuffer();
  if (!path.ends_with(".onnx"))
    return namedDimsOfGraphText(bytes, path);
  NamedDims out;
  llvm::Expected<onnx::ModelProto> model = parseModel(bytes, path);
  if (!model) {
    llvm::consumeError(model.takeError());  // reading the model reports it
    return out;
  }
  for (const onnx::ValueInfoProto &v : model->graph().input()) {
    if (!v.type().has_tensor_type())
      continue;
    std::vector<std::string> dims;
    bool named = false;
    // A name no --bind can give is left out: converting the model reports it.
    for (const auto &d : v.type().tensor_type().shape().dim()) {
      bool name = d.has_dim_param() && sizeNameProblem(d.dim_param()).empty();
      dims.push_back(name ? d.dim_param() : "");
      named |= name;
    }
    if (named)
      out[v.name()] = dims;
  }
  return out;
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> importModelFile(llvm::StringRef path,
                                                                  mlir::MLIRContext &ctx,
                                                                  const SizeBindings &sizes) {
  if (!path.ends_with(".onnx"))
    return importGraphFile(path, ctx, sizes);
  llvm::Expected<std::string> json = onnxFileToGraphJson(path, sizes);
  if (!json)
    return json.takeError();
  return importGraphText(*json, path, ctx);
}

} // namespace fusec
