//===- PeerRegion.h - the memory a one-shot all-reduce meets its peers in -===//
//
// A small all-reduce costs NCCL ~15 us even inside a CUDA graph, most of it
// latency; a one-shot kernel over peer memory (each rank reads every other
// rank's tensor over NVLink and sums in the same order) takes a launch and a
// flag round trip. Each rank of a split executable owns one region, mapped
// into every other rank (runtime/PeerMemory.h); the generated kernel
// (codegen/PeerAllReduce.cpp) and the runtime agree on its layout here.
//
// Block b of a call owns chunk b of the tensor, at a fixed place in the
// region whatever the tensor's size, so calls of different sizes never
// overlap. Its flags carry a per-block call count (the epoch): block b
// writes its chunk into the half of the data the epoch's parity picks,
// raises its flag at every peer, waits for theirs, and reads their chunks.
// A rank reaches the same half again two calls later only after every peer
// has raised its flag for the call between, which it does once it has
// finished reading: two halves make reuse safe without a second barrier.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace fusec::peer {

inline constexpr int kMaxRanks = 8;
inline constexpr int kMaxBlocks = 32;
inline constexpr int64_t kChunkBytes = 16 << 10;  ///< one block's share of a call
/// The largest tensor the one-shot kernel all-reduces.
inline constexpr int64_t kMaxBytes = kMaxBlocks * kChunkBytes;

/// Flags: [block][rank] uint32 epochs, raised by the peers.
inline constexpr int64_t kFlagsOffset = 0;
/// Epochs: [block] uint32, this rank's count of calls of each block.
inline constexpr int64_t kEpochsOffset = kFlagsOffset + kMaxBlocks * kMaxRanks * 4;
/// Data: [parity 2][block][kChunkBytes].
inline constexpr int64_t kDataOffset = 4096;
inline constexpr int64_t kParityBytes = kMaxBlocks * kChunkBytes;
inline constexpr int64_t kRegionBytes = kDataOffset + 2 * kParityBytes;
static_assert(kEpochsOffset + kMaxBlocks * 4 <= kDataOffset, "flags and epochs fit");

/// How long a block waits for its peers' flags before it traps (the launch
/// fails) rather than hang, should a peer never come.
inline constexpr int kPeerWaitSeconds = 100;

/// Blocks of a one-shot all-reduce of `bytes`.
inline int blocksFor(int64_t bytes) { return int((bytes + kChunkBytes - 1) / kChunkBytes); }

/// The kernel's last parameter, by value: every rank's region as this
/// process addresses it (its own at [rank]).
struct Args {
  uint64_t base[kMaxRanks] = {};
  int32_t rank = 0, ranks = 0;
};

} // namespace fusec::peer
