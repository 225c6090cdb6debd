//===- FuzzSafetensors.cpp - libFuzzer target: the safetensors reader ------===//
#include "runtime/Safetensors.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  auto tensors = fusec::parseSafetensors("fuzz.safetensors", bytes);
  if (!tensors)
    llvm::consumeError(tensors.takeError());
  return 0;
}
