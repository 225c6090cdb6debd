//===- FuzzOnnx.cpp - libFuzzer target: the ONNX reader --------------------===//
//
// Any bytes as an ONNX model: parsed, folded and converted to a graph, or an
// error naming what is wrong.
//
//===----------------------------------------------------------------------===//
#include "frontends/onnx/OnnxReader.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  auto graph = fusec::onnxToGraphJson(bytes, "fuzz.onnx", {});
  if (!graph)
    llvm::consumeError(graph.takeError());
  return 0;
}
