//===- AttentionForm.h - a softmax that rescales a contraction: streamed ---===//
//
// The streaming-reduction rule: a row softmax over the last axis of a
// product's scores S = A B (after elementwise ops: a scale, a mask added or
// chosen with `where`), whose probabilities P feed a second product P V that
// contracts that same axis, never needs S or P in memory. Its row max and sum
// are kept per row while tiles of B and V stream past once: each tile's
// exponentials are taken against the running max, and the partial output
// and sum are rescaled when the max grows (the online softmax). The rule is
// what the ops compute, not a composite's name: attention written from
// matmul, softmax's primitives and matmul, and the decomposed
// scaled_dot_product_attention, match alike.
//
// matchAttention finds the group and whether the attention family's kernel
// (families/Attention.cpp, codegen/AttentionKernel.cpp) takes it; the
// planner (transforms/FormAttention.cpp) forms it, classifyGroup names it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/dialect/FusecDialect.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fusec {

struct DeviceProfile;

/// The attention kernel's tiles: query rows a block, keys a step (the
/// portable form's; the Hopper form streams twice the keys a step).
constexpr int64_t kAttentionRows = 128, kAttentionKeys = 64;

/// How the attention kernel runs a match on a target: its tiles, and whether
/// both products are wgmma (Hopper: a warpgroup per 64 query rows, operands
/// from 128-byte swizzled shared memory) or mma.sync (the portable form).
struct AttentionTiles {
  int64_t rows = kAttentionRows, keys = kAttentionKeys;
  bool wgmma = false;
  /// Blocks an SM holds (registers and shared memory).
  int64_t blocksPerSm = 2;
  /// Shared memory a block takes: a tile of queries, two of keys and two of
  /// values (padded rows, or swizzled and 1024-byte aligned).
  int64_t sharedBytes = 0;
};

struct AttentionMatch {
  MatmulOp scores;  ///< S = Q K^T: [batch..., L, S]
  MatmulOp output;  ///< O = P V: [batch..., L, D]
  /// The softmax's input: S after the elementwise ops between them.
  mlir::Value logits;
  /// Every compute op of the group, in program order: the two products, the
  /// ops from S to the logits and what they read that is index math (a
  /// causal mask from iotas), and max, sub, exp, sum, div (and the cast of
  /// the probabilities where the softmax is computed in f32).
  std::vector<mlir::Operation *> ops;
  int64_t queries = 0, keys = 0, headDim = 0, batch = 1;
  /// The logits are where(i >= j, y, -inf) over (query i, key j): keys past
  /// a query's own position never count, and their tiles can be skipped.
  bool causal = false;
  /// K is read with the keys contiguous (K^T row-major: a copy outlining
  /// makes, or a transposed input), else with the head dim contiguous.
  bool keysContiguous = false;
  /// The key tiles each block of one batch entry streams, by query tile:
  /// all of them, or under a causal mask those up to its last query.
  std::vector<int64_t> keyTilesPerBlock(const AttentionTiles &tiles) const;
  /// The share of the products the kernel computes: 1, or under a causal
  /// mask the key tiles up to each block's last query.
  double computedShare(const AttentionTiles &tiles) const;
};

/// The streamed softmax whose output product is `op`, where the attention
/// kernel takes it; otherwise nullopt, with the reason in `why` when `op` is
/// such a product the kernel declines (empty when it is no such product).
std::optional<AttentionMatch> matchAttention(mlir::Operation *op, std::string &why);

/// The kernel's form for `m` on the profile's device and target (its
/// `arch`): the Hopper form on sm_90a for head dims 64 and 128 read head-dim
/// contiguous, else the portable one.
AttentionTiles attentionTiles(const AttentionMatch &m, const DeviceProfile &profile);

/// Whether `ops` (program order) are exactly one streamed softmax's group.
bool isAttentionGroup(llvm::ArrayRef<mlir::Operation *> ops);

} // namespace fusec
