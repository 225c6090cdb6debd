//===- Float16.h - bf16 and IEEE half <-> fp32/fp64 conversion ------------===//
//
// The two 16-bit float formats fusec stores, as bit patterns (uint16_t):
//   IEEE binary16 ("half", f16): 1 sign, 5 exponent (bias 15), 10 fraction bits.
//   bfloat16 (bf16):             1 sign, 8 exponent (bias 127), 7 fraction bits.
// Narrowing rounds to nearest, ties to even; values past the largest finite
// number become +-Inf; results below the smallest normal become subnormals
// (half) with correct rounding; NaN stays NaN (quiet, sign kept). Widening is
// exact. Narrowing from double rounds once, so fp64 results are not rounded
// twice on their way to 16 bits.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace fusec {

/// Exact widening of a half bit pattern.
float halfToFloat(uint16_t bits);
/// Exact widening of a bf16 bit pattern.
float bf16ToFloat(uint16_t bits);

/// Round-to-nearest-even narrowing of a double to half.
uint16_t doubleToHalf(double value);
/// Round-to-nearest-even narrowing of a double to bf16.
uint16_t doubleToBF16(double value);

/// Round-to-nearest-even narrowing of a float to half (float -> double is exact).
inline uint16_t floatToHalf(float value) { return doubleToHalf(value); }
/// Round-to-nearest-even narrowing of a float to bf16.
uint16_t floatToBF16(float value);

} // namespace fusec
