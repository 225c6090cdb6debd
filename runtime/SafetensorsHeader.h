//===- SafetensorsHeader.h - a safetensors file's index, without LLVM -----===//
//
// The format (https://github.com/huggingface/safetensors): an 8-byte
// little-endian header length N, N bytes of JSON mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the
// data region that follows the header) plus an optional "__metadata__" map of
// strings, then the data region. The header alone says where every tensor
// is, so weights are bound (runtime/WeightFiles.h) without reading the data
// into host memory first; runtime/Safetensors.h reads and writes whole files.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/support/DType.h"
#include "compiler/support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fusec {

/// One tensor of the header, checked against the data region.
struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  ///< bytes of the data region
};

struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries;  ///< in the header's order
  std::map<std::string, std::string> metadata;
  uint64_t dataStart = 0;  ///< where the data region starts in the file
};

/// The largest header fusec reads.
constexpr uint64_t kMaxSafetensorsHeaderBytes = uint64_t(100) << 20;

/// The header's length from the file's first 8 bytes, checked against the
/// file's size (`file` names it in messages).
rt::Expected<uint64_t> safetensorsHeaderLength(std::string_view file, std::string_view first8,
                                               uint64_t fileSize);

/// Parses the header's JSON text (the N bytes after the length) of a file
/// whose data region holds `dataSize` bytes: every entry's dtype, shape and
/// offsets checked, no two tensors sharing bytes. Errors name the file and,
/// where one is at fault, the tensor and the field.
rt::Expected<SafetensorsHeader> parseSafetensorsHeader(std::string_view file,
                                                       std::string_view json, uint64_t dataSize);

/// Both steps over the bytes of a whole file (or at least its header, with
/// `fileSize` the whole file's size).
rt::Expected<SafetensorsHeader> parseSafetensorsPrefix(std::string_view file,
                                                       std::string_view bytes, uint64_t fileSize);

class InputFile;
/// The header of the safetensors file `file` is, read at its start (the
/// length, then the JSON: nothing of the data region), with `dataStart` set.
rt::Expected<SafetensorsHeader> readSafetensorsHeader(const InputFile &file);

} // namespace fusec
