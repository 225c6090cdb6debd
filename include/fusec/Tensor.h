//===- Tensor.h - dtypes and tensors at fusec's public API -----------------===//
//
// The element types of fusec graphs (names as in docs/graph-format.md), the
// name, dtype and shape of a graph's inputs and outputs, and a dense tensor
// in host memory. Self-contained: the public API's headers include only each
// other and the standard library.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>
#include <string>

namespace fusec {

enum class DType : uint8_t { F32, F16, BF16, I32, I64, Bool };

/// Graph-format name: "f32", "f16", "bf16", "i32", "i64", "bool".
std::string_view dtypeName(DType t);
std::optional<DType> parseDType(std::string_view name);

inline int64_t dtypeBytes(DType t) {
  switch (t) {
  case DType::F32: case DType::I32: return 4;
  case DType::F16: case DType::BF16: return 2;
  case DType::I64: return 8;
  case DType::Bool: return 1;
  }
  return 0;
}

/// A graph input's or output's name, dtype and shape.
struct TensorSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  int64_t bytes() const { return numel() * dtypeBytes(dtype); }
};

/// A dense tensor in host memory, its elements exactly as a GPU buffer or a
/// safetensors file holds them: row-major, little-endian, in the dtype's own
/// storage format (f16/bf16 as 2-byte bit patterns, bool as one byte 0 or
/// 1). Element access goes through double (get/set) or int64 (getInt/setInt);
/// set() converts as the graph format's `cast` does.
class HostTensor {
public:
  /// A scalar f32 zero, so that containers can default-construct tensors.
  HostTensor() : HostTensor(DType::F32, {}) {}
  /// A zero-filled tensor. Dims must be non-negative.
  HostTensor(DType dtype, std::vector<int64_t> shape);

  DType dtype() const { return type; }
  const std::vector<int64_t> &shape() const { return dims; }
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  int64_t numel() const { return count; }
  int64_t nbytes() const { return static_cast<int64_t>(bytes.size()); }
  uint8_t *data() { return bytes.data(); }
  const uint8_t *data() const { return bytes.data(); }

  /// Element `i` (row-major) as a double; integers past 2^53 lose precision.
  double get(int64_t i) const;
  /// Element `i` as an integer; floats convert as set() does for i64.
  int64_t getInt(int64_t i) const;
  /// Stores `v` converted to the dtype: floats round to nearest even; integers
  /// truncate toward zero and saturate, NaN -> 0 (like CUDA's cvt.rzi); bool
  /// stores v != 0, so NaN -> true.
  void set(int64_t i, double v);
  /// Stores `v` converted to the dtype: i32 keeps the low 32 bits (two's
  /// complement wrap), floats round to nearest even, bool stores v != 0.
  void setInt(int64_t i, int64_t v);

  /// Same dtype, shape and bytes.
  bool operator==(const HostTensor &other) const {
    return type == other.type && dims == other.dims && bytes == other.bytes;
  }
  bool operator!=(const HostTensor &other) const { return !(*this == other); }

private:
  DType type;
  std::vector<int64_t> dims;
  int64_t count;
  std::vector<uint8_t> bytes;
};

} // namespace fusec
