//===- Safetensors.h - read and write .safetensors files -----------------===//
//
// The format (https://github.com/huggingface/safetensors): an 8-byte
// little-endian header length N, N bytes of JSON mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the
// data region that follows the header) plus an optional "__metadata__" map of
// strings, then the data region. fusec reads and writes the six dtypes of
// compiler/support/DType.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/support/HostTensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <string>

namespace fusec {

using TensorMap = std::map<std::string, HostTensor>;
using SafetensorsMetadata = std::map<std::string, std::string>;

/// Reads every tensor of `path`. Errors name the file and, where one is at
/// fault, the tensor and the field. With `metadata`, "__metadata__" is
/// returned there.
llvm::Expected<TensorMap> readSafetensors(llvm::StringRef path,
                                          SafetensorsMetadata *metadata = nullptr);

/// The tensors of `path` that `wanted` accepts by name: its header first,
/// then only their bytes, each at its offset (a file of many other tensors,
/// or one whose size is past what its header states, is not read whole).
/// `others` (if given) receives the names left out.
llvm::Expected<TensorMap> readSafetensorsSelected(
    llvm::StringRef path, const std::function<bool(const std::string &)> &wanted,
    std::vector<std::string> *others = nullptr);

/// Parses the bytes of a safetensors file; `file` names it in error messages.
llvm::Expected<TensorMap> parseSafetensors(llvm::StringRef file, llvm::StringRef bytes,
                                           SafetensorsMetadata *metadata = nullptr);

/// Writes `tensors` (header keys sorted, data in name order, the data region
/// 8-byte aligned by padding the header with spaces) atomically to `path`.
llvm::Error writeSafetensors(llvm::StringRef path, const TensorMap &tensors,
                             const SafetensorsMetadata &metadata = {});

/// The bytes writeSafetensors writes, for callers that hash or stream them.
llvm::Expected<std::string> serializeSafetensors(const TensorMap &tensors,
                                                 const SafetensorsMetadata &metadata = {});

} // namespace fusec
