//===- HostTensor.h - a dense tensor in host memory -----------------------===//
//
// The class is public (include/fusec/Tensor.h); the helpers below are not.
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
#include "fusec/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fusec {

/// A tensor of reproducible pseudo-random values (splitmix64, the same on every
/// platform): floats uniform in [-2, 2) on a grid the dtype represents exactly,
/// integers uniform in [-8, 8), bool true or false with probability 1/2.
HostTensor randomTensor(DType dtype, std::vector<int64_t> shape, uint64_t seed);

/// Multiplies every element of a float tensor by `scale` (rounding to its dtype);
/// integer and bool tensors are left alone. Used to scale random weights.
void scaleFloatValues(HostTensor &t, double scale);

/// Input `i` of `specs` drawn with randomTensor from seed
/// `seed * 0x9E3779B97F4A7C15 + i + 1` (each input its own stream, so adding
/// an input leaves the others unchanged) and scaled by `scales[i]` (1 where
/// missing): the random inputs of `fusec run` and of the API.
HostTensor randomInput(const TensorSpec &spec, double scale, uint64_t seed, size_t i);
std::vector<HostTensor> drawRandomInputs(const std::vector<TensorSpec> &specs,
                                         const std::vector<double> &scales, uint64_t seed);

/// The product of `shape`'s dims before `axis`: how many runs a block
/// along `axis` is made of in row-major order.
int64_t elementsBefore(const std::vector<int64_t> &shape, int64_t axis);
/// Rank `rank`'s block of `t` along `axis` when the dim is split evenly over
/// `ranks` (the caller checks that it divides): a sharded argument's part, or
/// reduce_scatter's.
HostTensor rankBlock(const HostTensor &t, int64_t axis, int rank, int ranks);
/// The blocks joined along `axis` in rank order (all_gather, a split
/// output made whole); every block has the same dtype and shape.
HostTensor joinBlocks(const std::vector<HostTensor> &blocks, int64_t axis);

/// Rank `rank`'s inputs of a program split over `ranks` from the whole
/// graph's: input i's block along shards[i], or the whole input where
/// shards[i] < 0 (or `shards` ends before it).
std::vector<HostTensor> rankInputs(const std::vector<int64_t> &shards,
                                   const std::vector<HostTensor> &whole, int rank, int ranks);
/// The whole outputs of a program split over ranks from each rank's
/// (perRank[r]): output i joined from the ranks' blocks along shards[i], or
/// where shards[i] < 0 (or `shards` is empty) rank 0's, which every rank
/// must have returned alike. Returns the index of an output the ranks
/// disagree on, or -1.
int64_t joinRankOutputs(const std::vector<int64_t> &shards,
                        const std::vector<std::vector<HostTensor>> &perRank,
                        std::vector<HostTensor> &whole);

/// "[3, 4]".
std::string formatShape(const std::vector<int64_t> &shape);
/// "f32 [3, 4]".
std::string describeTensor(DType dtype, const std::vector<int64_t> &shape);

/// One line: dtype, shape, min, max and mean of the finite elements, the count
/// of NaN and Inf elements, and the first 4 values.
std::string summary(const HostTensor &t);

} // namespace fusec
