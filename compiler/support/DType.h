//===- DType.h - the six storage dtypes of fusec graphs -------------------===//
//
// The enum, its names and sizes are public (include/fusec/Tensor.h); what the
// frontend, the interpreter, safetensors I/O and codegen add to them is here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fusec/Tensor.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace fusec {

/// All dtypes in a fixed order (for tests and error messages).
inline constexpr DType kAllDTypes[] = {DType::F32, DType::F16, DType::BF16,
                                       DType::I32, DType::I64, DType::Bool};

/// safetensors name: "F32", "F16", "BF16", "I32", "I64", "BOOL".
std::string_view safetensorsName(DType t);
std::optional<DType> parseSafetensorsDType(std::string_view name);
/// CUDA C++ storage type name used by generated kernels.
std::string_view cudaTypeName(DType t);

inline bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}
/// bf16 or f16: the tensor cores' and the TMA paths' element types.
inline bool isHalfFloat(DType t) { return t == DType::F16 || t == DType::BF16; }
inline bool isInteger(DType t) { return t == DType::I32 || t == DType::I64; }

} // namespace fusec
