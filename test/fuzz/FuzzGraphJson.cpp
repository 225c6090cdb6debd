//===- FuzzGraphJson.cpp - libFuzzer target: the JSON graph reader --------===//
//
// Any bytes as a graph file: the reader and the verifier either accept them
// or give an error; no crash, leak, hang or unbounded allocation.
//
//===----------------------------------------------------------------------===//
#include "compiler/dialect/FusecDialect.h"
#include "frontends/json/GraphReader.h"

#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *ctx = [] {
    auto *c = new mlir::MLIRContext();
    c->disableMultithreading();
    return c;
  }();
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  auto module = fusec::importGraphText(text, "fuzz.json", *ctx);
  if (!module)
    llvm::consumeError(module.takeError());
  return 0;
}
