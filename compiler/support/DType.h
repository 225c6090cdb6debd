//===- DType.h - the six storage dtypes of fusec graphs -------------------===//
//
// One enum shared by the frontend, the interpreter, safetensors I/O and codegen.
// Names are the graph-format names (docs/graph-format.md).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace fusec {

enum class DType : uint8_t { F32, F16, BF16, I32, I64, Bool };

/// All dtypes in a fixed order (for tests and error messages).
inline constexpr DType kAllDTypes[] = {DType::F32, DType::F16, DType::BF16,
                                       DType::I32, DType::I64, DType::Bool};

/// Graph-format name: "f32", "f16", "bf16", "i32", "i64", "bool".
std::string_view dtypeName(DType t);
std::optional<DType> parseDType(std::string_view name);
/// safetensors name: "F32", "F16", "BF16", "I32", "I64", "BOOL".
std::string_view safetensorsName(DType t);
std::optional<DType> parseSafetensorsDType(std::string_view name);
/// CUDA C++ storage type name used by generated kernels.
std::string_view cudaTypeName(DType t);

inline int64_t dtypeBytes(DType t) {
  switch (t) {
  case DType::F32: case DType::I32: return 4;
  case DType::F16: case DType::BF16: return 2;
  case DType::I64: return 8;
  case DType::Bool: return 1;
  }
  return 0;
}
inline bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}
/// bf16 or f16: the tensor cores' and the TMA paths' element types.
inline bool isHalfFloat(DType t) { return t == DType::F16 || t == DType::BF16; }
inline bool isInteger(DType t) { return t == DType::I32 || t == DType::I64; }

} // namespace fusec
