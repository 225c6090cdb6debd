//===- HostTensor.cpp - a dense tensor in host memory ---------------------===//
#include "compiler/support/HostTensor.h"

#include "compiler/support/Float16.h"


#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <thread>

// Storage is little-endian by definition; on such hosts memcpy is the decoder.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "HostTensor assumes a little-endian host");

namespace fusec {
namespace {

template <typename T> T load(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T> void store(uint8_t *p, T v) { std::memcpy(p, &v, sizeof v); }

uint32_t bitsOfFloat(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

/// Truncates toward zero and saturates to [lo, hi]; NaN gives 0.
int64_t truncSaturate(double v, int64_t lo, int64_t hi) {
  if (std::isnan(v))
    return 0;
  // Both bounds are compared as doubles: 2^63 is exact, INT64_MAX is not.
  if (v >= static_cast<double>(hi))
    return hi;
  if (v <= static_cast<double>(lo))
    return lo;
  return static_cast<int64_t>(v);
}

} // namespace

HostTensor::HostTensor(DType dtype, std::vector<int64_t> shape)
    : type(dtype), dims(std::move(shape)), count(1) {
  for (int64_t d : dims) {
    if (d < 0) {  // a caller's bug: the readers check shapes before they get here
      std::fprintf(stderr, "fusec: HostTensor: negative dimension in shape\n");
      std::abort();
    }
    count *= d;
  }
  bytes.assign(static_cast<size_t>(count * dtypeBytes(type)), 0);
}

double HostTensor::get(int64_t i) const {
  const uint8_t *p = bytes.data() + i * dtypeBytes(type);
  switch (type) {
  case DType::F32: return load<float>(p);
  case DType::F16: return halfToFloat(load<uint16_t>(p));
  case DType::BF16: return bf16ToFloat(load<uint16_t>(p));
  case DType::I32: return load<int32_t>(p);
  case DType::I64: return static_cast<double>(load<int64_t>(p));
  case DType::Bool: return *p ? 1.0 : 0.0;
  }
  return 0;
}

int64_t HostTensor::getInt(int64_t i) const {
  const uint8_t *p = bytes.data() + i * dtypeBytes(type);
  switch (type) {
  case DType::I32: return load<int32_t>(p);
  case DType::I64: return load<int64_t>(p);
  case DType::Bool: return *p ? 1 : 0;
  case DType::F32: case DType::F16: case DType::BF16:
    return truncSaturate(get(i), std::numeric_limits<int64_t>::min(),
                         std::numeric_limits<int64_t>::max());
  }
  return 0;
}

void HostTensor::set(int64_t i, double v) {
  uint8_t *p = bytes.data() + i * dtypeBytes(type);
  switch (type) {
  case DType::F32: return store(p, static_cast<float>(v));
  case DType::F16: return store(p, doubleToHalf(v));
  case DType::BF16: return store(p, doubleToBF16(v));
  case DType::I32:
    return store(p, static_cast<int32_t>(
                        truncSaturate(v, std::numeric_limits<int32_t>::min(),
                                      std::numeric_limits<int32_t>::max())));
  case DType::I64:
    return store(p, truncSaturate(v, std::numeric_limits<int64_t>::min(),
                                  std::numeric_limits<int64_t>::max()));
  case DType::Bool: *p = v != 0.0; return; // NaN != 0 holds, so NaN -> true
  }
}

void HostTensor::setInt(int64_t i, int64_t v) {
  uint8_t *p = bytes.data() + i * dtypeBytes(type);
  switch (type) {
  // int64 -> float and -> double round to nearest even in hardware.
  case DType::F32: return store(p, static_cast<float>(v));
  case DType::F16: return store(p, doubleToHalf(static_cast<double>(v)));
  case DType::BF16: return store(p, doubleToBF16(static_cast<double>(v)));
  case DType::I32:
    return store(p, static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))));
  case DType::I64: return store(p, v);
  case DType::Bool: *p = v != 0; return;
  }
}

//===----------------------------------------------------------------------===//
// Random tensors
//===----------------------------------------------------------------------===//

namespace {

/// Output i (0-based) of splitmix64 (Steele, Lea, Flood 2014) started at
/// `seed`. Its state only ever advances by the constant below, so output i can
/// be computed on its own; threads then fill disjoint ranges of a tensor and
/// produce exactly the sequential stream, on any platform and thread count.
uint64_t splitMix64At(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Calls fill(begin, end) over [0, n) on up to hardware_concurrency threads
/// (one for small n): random weights of a large model are hundreds of
/// millions of elements.
void fillInParallel(int64_t n, const std::function<void(int64_t, int64_t)> &fill) {
  const int64_t minPerThread = int64_t(1) << 20;
  int64_t threads = std::min<int64_t>(std::max(1u, std::thread::hardware_concurrency()),
                                      std::max<int64_t>(1, n / minPerThread));
  std::vector<std::thread> workers;
  int64_t chunk = (n + threads - 1) / threads;
  for (int64_t t = 1; t < threads; ++t)
    workers.emplace_back(fill, std::min(n, t * chunk), std::min(n, (t + 1) * chunk));
  fill(0, std::min(n, chunk));
  for (std::thread &w : workers)
    w.join();
}

/// Significand bits (hidden bit included) of a float dtype.
int significandBits(DType t) {
  switch (t) {
  case DType::F16: return 11;
  case DType::BF16: return 8;
  default: return 24;
  }
}

} // namespace

HostTensor randomTensor(DType dtype, std::vector<int64_t> shape, uint64_t seed) {
  HostTensor t(dtype, std::move(shape));
  // Floats: -2 + k * 2^(1 - p) for k uniform in [0, 2^(p + 1)), p the
  // significand width. Every such value is exact in the dtype, so rounding on
  // store can never turn a value near 2 into 2.
  int p = significandBits(dtype);
  double step = std::ldexp(1.0, 1 - p);
  fillInParallel(t.numel(), [&](int64_t begin, int64_t end) {
    uint8_t *out = t.data();
    for (int64_t i = begin; i < end; ++i) {
      uint64_t r = splitMix64At(seed, static_cast<uint64_t>(i));
      if (!isFloat(dtype)) {
        t.setInt(i, dtype == DType::Bool ? static_cast<int64_t>(r >> 63)
                                         : static_cast<int64_t>(r >> 60) - 8);
        continue;
      }
      // Exact in float as well, so the stores below need no rounding: bf16
      // is the top half of the float's bits.
      float v = static_cast<float>(-2.0 + static_cast<double>(r >> (63 - p)) * step);
      if (dtype == DType::F32)
        store(out + 4 * i, v);
      else if (dtype == DType::BF16)
        store(out + 2 * i, static_cast<uint16_t>(bitsOfFloat(v) >> 16));
      else
        store(out + 2 * i, floatToHalf(v));
    }
  });
  return t;
}

//===----------------------------------------------------------------------===//
// Summary
//===----------------------------------------------------------------------===//

namespace {

std::string formatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

} // namespace

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string describeTensor(DType dtype, const std::vector<int64_t> &shape) {
  return std::string(dtypeName(dtype)) + " " + formatShape(shape);
}

std::string summary(const HostTensor &t) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
  int64_t finite = 0, nans = 0, infs = 0;
  for (int64_t i = 0, n = t.numel(); i < n; ++i) {
    double v = t.get(i);
    if (std::isnan(v)) {
      ++nans;
      continue;
    }
    if (std::isinf(v)) {
      ++infs;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
    ++finite;
  }
  std::string s = describeTensor(t.dtype(), t.shape());
  if (finite > 0)
    s += " min=" + formatNumber(lo) + " max=" + formatNumber(hi) +
         " mean=" + formatNumber(sum / static_cast<double>(finite));
  else
    s += " min=- max=- mean=-";
  s += " nan=" + std::to_string(nans) + " inf=" + std::to_string(infs) + " first=[";
  for (int64_t i = 0, n = std::min<int64_t>(t.numel(), 4); i < n; ++i)
    s += (i ? ", " : "") + (isFloat(t.dtype()) ? formatNumber(t.get(i))
                                               : std::to_string(t.getInt(i)));
  return s + (t.numel() > 4 ? ", ...]" : "]");
}

void scaleFloatValues(HostTensor &t, double scale) {
  if (scale == 1.0 || !isFloat(t.dtype()))
    return;
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set(i, t.get(i) * scale);
}

HostTensor randomInput(const TensorSpec &spec, double scale, uint64_t seed, size_t i) {
  HostTensor t = randomTensor(spec.dtype, spec.shape, seed * 0x9E3779B97F4A7C15ull + i + 1);
  scaleFloatValues(t, scale);
  return t;
}

std::vector<HostTensor> drawRandomInputs(const std::vector<TensorSpec> &specs,
                                         const std::vector<double> &scales, uint64_t seed) {
  std::vector<HostTensor> in;
  for (size_t i = 0; i < specs.size(); ++i)
    in.push_back(randomInput(specs[i], i < scales.size() ? scales[i] : 1.0, seed, i));
  return in;
}

int64_t elementsBefore(const std::vector<int64_t> &shape, int64_t axis) {
  int64_t n = 1;
  for (int64_t d = 0; d < axis; ++d)
    n *= shape[size_t(d)];
  return n;
}

HostTensor rankBlock(const HostTensor &t, int64_t axis, int rank, int ranks) {
  std::vector<int64_t> shape = t.shape();
  const int64_t part = shape[size_t(axis)] / ranks;
  shape[size_t(axis)] = part;
  HostTensor out(t.dtype(), shape);
  const int64_t outer = elementsBefore(shape, axis);
  const int64_t block = out.numel() / std::max<int64_t>(outer, 1) * dtypeBytes(t.dtype());
  for (int64_t o = 0; o < outer && block > 0; ++o)
    std::memcpy(out.data() + o * block, t.data() + (o * ranks + rank) * block, size_t(block));
  return out;
}

HostTensor joinBlocks(const std::vector<HostTensor> &blocks, int64_t axis) {
  std::vector<int64_t> shape = blocks.front().shape();
  const int64_t outer = elementsBefore(shape, axis);
  const int64_t block =
      blocks.front().numel() / std::max<int64_t>(outer, 1) * dtypeBytes(blocks.front().dtype());
  shape[size_t(axis)] *= int64_t(blocks.size());
  HostTensor out(blocks.front().dtype(), shape);
  const int64_t ranks = int64_t(blocks.size());
  for (int64_t o = 0; o < outer && block > 0; ++o)
    for (int64_t r = 0; r < ranks; ++r)
      std::memcpy(out.data() + (o * ranks + r) * block, blocks[size_t(r)].data() + o * block,
                  size_t(block));
  return out;
}

std::vector<HostTensor> rankInputs(const std::vector<int64_t> &shards,
                                   const std::vector<HostTensor> &whole, int rank, int ranks) {
  std::vector<HostTensor> in;
  for (size_t i = 0; i < whole.size(); ++i) {
    const int64_t axis = i < shards.size() ? shards[i] : -1;
    in.push_back(axis >= 0 ? rankBlock(whole[i], axis, rank, ranks) : whole[i]);
  }
  return in;
}

int64_t joinRankOutputs(const std::vector<int64_t> &shards,
                        const std::vector<std::vector<HostTensor>> &perRank,
                        std::vector<HostTensor> &whole) {
  whole.clear();
  for (size_t i = 0; i < perRank.front().size(); ++i) {
    std::vector<HostTensor> blocks;
    for (const auto &rank : perRank)
      blocks.push_back(rank.at(i));
    if (i < shards.size() && shards[i] >= 0) {
      whole.push_back(joinBlocks(blocks, shards[i]));
      continue;
    }
    for (size_t r = 1; r < blocks.size(); ++r)
      if (blocks[r] != blocks.front())
        return int64_t(i);
    whole.push_back(std::move(blocks.front()));
  }
  return -1;
}

} // namespace fusec
