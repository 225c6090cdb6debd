//===- LastBlock.h - the last of a split's blocks combines its partials ---===//
//
// Four kernels split one output's work over blocks (rows split over blocks,
// column tiles split over rows, GEMM split-K, the tensor-core dot product's
// K split): each block stores its partials to the kernel's scratch, counts
// itself in at a per-output counter, and the block that arrives last reads
// every partial back in a fixed order (the same result whichever block that
// is) and writes the outputs. This is the handshake they share.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace fusec::codegen::detail {

/// After this block's partials are stored: a barrier, then the leader fences
/// and counts the block in at `counter` (an `unsigned *` expression); the
/// block that brings the count to `total` sets `fz_last` (a `__shared__
/// bool` the kernel declares) and resets the counter for the next launch.
/// The leader fences again (the others' partials are then visible to the
/// block past the second barrier). The other blocks run `leave`
/// ("continue;", "return;"; empty: they go on, with fz_last false).
/// Each line starts with `in`. `sync` is the barrier of the threads taking
/// part, `leader` the condition of the one that counts (a warp-specialized
/// kernel's computing warps: a named barrier and their first thread).
std::string lastBlockHandshake(const std::string &in, const std::string &counter,
                               const std::string &total, const std::string &leave,
                               const std::string &sync = "__syncthreads();",
                               const std::string &leader = "threadIdx.x == 0");

} // namespace fusec::codegen::detail
