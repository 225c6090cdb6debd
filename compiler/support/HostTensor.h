//===- HostTensor.h - a dense tensor in host memory -----------------------===//
//
// A HostTensor holds its elements exactly as a GPU buffer or a safetensors
// file does: row-major, little-endian, in the dtype's own storage format
// (f16/bf16 as 2-byte bit patterns, bool as one byte 0 or 1). The interpreter,
// safetensors I/O and the runtime's host<->device copies all share it, so no
// conversion happens at those boundaries.
//
// Element access goes through double (get/set) or int64 (getInt/setInt). The
// rules of set() are those of `cast` in docs/graph-format.md, so storing a
// computed value behaves like the GPU's conversion instructions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/support/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fusec {

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

/// A tensor of reproducible pseudo-random values (splitmix64, the same on every
/// platform): floats uniform in [-2, 2) on a grid the dtype represents exactly,
/// integers uniform in [-8, 8), bool true or false with probability 1/2.
HostTensor randomTensor(DType dtype, std::vector<int64_t> shape, uint64_t seed);

/// Multiplies every element of a float tensor by `scale` (rounding to its dtype);
/// integer and bool tensors are left alone. Used to scale random weights.
void scaleFloatValues(HostTensor &t, double scale);

/// One line: dtype, shape, min, max and mean of the finite elements, the count
/// of NaN and Inf elements, and the first 4 values.
std::string summary(const HostTensor &t);

} // namespace fusec
