//===- Float16.cpp - bf16 and IEEE half <-> fp32/fp64 conversion ----------===//
//
// One narrowing routine serves both 16-bit formats: it takes the double apart
// into an integer significand and a power of two, picks the quantum (the value
// of one unit in the last place) of the target format at that magnitude, and
// rounds significand / quantum to an integer with ties to even. Because the
// subnormal range simply pins the quantum at its smallest value, subnormals,
// the carry into the next binade and the overflow to Inf all fall out of the
// same integer addition.
//
//===----------------------------------------------------------------------===//
#include "compiler/support/Float16.h"

#include <algorithm>
#include <cstring>

namespace fusec {
namespace {

/// A 16-bit format: 1 sign bit, `fracBits` stored fraction bits, exponent bias.
struct HalfFormat {
  int fracBits;
  int bias;
};
constexpr HalfFormat kHalf{10, 15};
constexpr HalfFormat kBF16{7, 127};

uint64_t bitsOf(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

float floatFromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

/// Index of the highest set bit of v > 0 (only subnormal doubles need it).
int highestBit(uint64_t v) {
  int n = 0;
  while (v >>= 1)
    ++n;
  return n;
}

uint16_t narrow(double value, HalfFormat fmt) {
  const uint64_t bits = bitsOf(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 63) << 15);
  const uint64_t exponent = (bits >> 52) & 0x7FF;
  const uint64_t fraction = bits & ((uint64_t(1) << 52) - 1);
  // The all-ones exponent field: Inf with a zero fraction, NaN otherwise.
  const uint32_t infBits = uint32_t(2 * fmt.bias + 1) << fmt.fracBits;

  if (exponent == 0x7FF) {
    if (fraction == 0)
      return sign | infBits;
    // Keep the top payload bits and force the quiet bit so it cannot become Inf.
    uint32_t payload = static_cast<uint32_t>(fraction >> (52 - fmt.fracBits));
    return sign | infBits | (uint32_t(1) << (fmt.fracBits - 1)) | payload;
  }
  if (exponent == 0 && fraction == 0)
    return sign;

  // |value| = significand * 2^scale, significand an integer below 2^53.
  uint64_t significand = exponent ? (fraction | (uint64_t(1) << 52)) : fraction;
  int scale = exponent ? static_cast<int>(exponent) - 1075 : -1074;
  // floor(log2 |value|): a normal double's leading bit is its hidden bit 52.
  int leading = scale + (exponent ? 52 : highestBit(significand));
  if (leading > fmt.bias)
    return sign | infBits;

  // Below the normal range the quantum stays at that of the smallest normal.
  int binade = std::max(leading, 1 - fmt.bias);
  int shift = (binade - fmt.fracBits) - scale; // >= 29 for both formats
  uint64_t q = 0;
  if (shift < 64) {
    q = significand >> shift;
    uint64_t rest = significand & ((uint64_t(1) << shift) - 1);
    uint64_t halfway = uint64_t(1) << (shift - 1);
    if (rest > halfway || (rest == halfway && (q & 1)))
      ++q;
  }
  // Normal: q includes the hidden bit, so (binade + bias - 1) << fracBits + q
  // is the encoding, and a rounding carry moves into the exponent (up to Inf).
  // Subnormal: binade + bias - 1 == 0 and q is the stored fraction.
  uint32_t encoded = (uint32_t(binade + fmt.bias - 1) << fmt.fracBits) + uint32_t(q);
  return static_cast<uint16_t>(sign | encoded);
}

} // namespace

float halfToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits >> 15) << 31;
  uint32_t exponent = (bits >> 10) & 0x1F;
  uint32_t fraction = bits & 0x3FF;
  if (exponent == 0x1F)
    return floatFromBits(sign | 0x7F800000u | (fraction << 13));
  if (exponent == 0) {
    // Subnormal: fraction * 2^-24, exact in float.
    float magnitude = static_cast<float>(fraction) * (1.0f / 16777216.0f);
    return sign ? -magnitude : magnitude;
  }
  return floatFromBits(sign | ((exponent - 15 + 127) << 23) | (fraction << 13));
}

float bf16ToFloat(uint16_t bits) { return floatFromBits(uint32_t(bits) << 16); }

uint16_t doubleToHalf(double value) { return narrow(value, kHalf); }
uint16_t doubleToBF16(double value) { return narrow(value, kBF16); }
uint16_t floatToBF16(float value) { return narrow(value, kBF16); }

} // namespace fusec
