//===- DType.cpp - dtype names -------------------------------------------===//
#include "compiler/support/DType.h"

namespace fusec {

namespace {
struct DTypeNames {
  DType type;
  std::string_view graph, safetensors, cuda;
};
constexpr DTypeNames kNames[] = {
    {DType::F32, "f32", "F32", "float"},
    {DType::F16, "f16", "F16", "__half"},
    {DType::BF16, "bf16", "BF16", "__nv_bfloat16"},
    {DType::I32, "i32", "I32", "int"},
    {DType::I64, "i64", "I64", "long long"},
    {DType::Bool, "bool", "BOOL", "bool"},
};
const DTypeNames &names(DType t) { return kNames[static_cast<int>(t)]; }
} // namespace

std::string_view dtypeName(DType t) { return names(t).graph; }
std::string_view safetensorsName(DType t) { return names(t).safetensors; }
std::string_view cudaTypeName(DType t) { return names(t).cuda; }

std::optional<DType> parseDType(std::string_view name) {
  for (const auto &n : kNames)
    if (n.graph == name)
      return n.type;
  return std::nullopt;
}
std::optional<DType> parseSafetensorsDType(std::string_view name) {
  for (const auto &n : kNames)
    if (n.safetensors == name)
      return n.type;
  return std::nullopt;
}

} // namespace fusec
