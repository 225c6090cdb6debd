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
#include "compiler/schedule/StridedView.h"

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
/// Fewer query rows than this a head (decode) take the decode form: the keys
/// split over blocks, so that every SM streams.
constexpr int64_t kDecodeQueries = 64;
/// Head dims the kernel takes: multiples of 16 up to this.
constexpr int64_t kAttentionMaxHeadDim = 256;

/// Keys or values that the kernel reads in place although no strided view
/// reads them: grouped-query heads written as a repeat (reshape or
/// broadcast_to of [.., G, 1, S, D] to [.., G*R, S, D]), batch entry b
/// reading the source's entry b / repeat, and (decode form) a cache joined
/// along the keys with this step's rows by a concat that only the repeat
/// reads: its pieces in turn, the joined cache never written.
struct AttentionOperand {
  struct Piece {
    mlir::Value value;        ///< [.., G, keys, D]
    MatrixLayoutView layout;  ///< rows of keys, the head dim contiguous, per source entry
    int64_t keys = 0;
  };
  std::vector<Piece> pieces;
  int64_t repeat = 1;
  ConcatOp concat;  ///< the join read in pieces, a member of the group
};

/// How the attention kernel runs a match on a target: its tiles, and whether
/// both products are wgmma (Hopper: a warpgroup per 64 query rows, operands
/// from 128-byte swizzled shared memory) or mma.sync (the portable form).
struct AttentionTiles {
  int64_t rows = kAttentionRows, keys = kAttentionKeys;
  bool wgmma = false;
  /// The decode form: a block of 4 warps holds 16 rows (query rows of the
  /// heads that share K and V) and streams one split of the keys, 16 keys a
  /// warp a step; the splits' partial max, sum and output are combined by
  /// the last block.
  bool decode = false;
  int64_t splits = 1;     ///< blocks over the keys of one row tile
  int64_t splitTiles = 0; ///< key tiles each split streams (the last one fewer)
  int64_t stages = 2;     ///< shared-memory buffers of keys and values
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
  /// K and V read in place through a repeat or in pieces (else each is one
  /// strided view, or the copy outlining makes).
  std::optional<AttentionOperand> kIn, vIn;
  /// Query heads that share one K/V entry (1 without grouped-query heads).
  int64_t repeat = 1;
  /// The output's only reader where it is a transpose that keeps the head
  /// dim last ([B, H, L, D] to [B, L, H, D]): the kernel writes its rows in
  /// that order, and outlining makes the transpose the group's result, so
  /// the next product reads heads side by side without a copy.
  TransposeOp outTranspose;
  bool decode() const { return queries < kDecodeQueries; }
  /// Blocks of rows over one batch entry (decode: over the query rows of
  /// the `repeat` heads that share one K/V entry).
  int64_t rowTiles(const AttentionTiles &tiles) const;
  /// The key tiles each block of one batch entry streams, by query tile:
  /// all of them, or under a causal mask those up to its last query.
  std::vector<int64_t> keyTilesPerBlock(const AttentionTiles &tiles) const;
  /// The share of the products the kernel computes: 1, or under a causal
  /// mask the key tiles up to each block's last query.
  double computedShare(const AttentionTiles &tiles) const;
};

/// A batched operand [.., G*R, rows, cols] (or its last two dims swapped)
/// that repeats a [.., G, 1, rows, cols] value R times along the merged head
/// dim: reshape(broadcast_to(source)).
struct HeadRepeat {
  mlir::Value source;  ///< [.., G, 1, rows, cols]
  int64_t groups = 0, repeats = 0;
  bool transposed = false;  ///< read with the last two dims swapped
};
std::optional<HeadRepeat> headRepeat(mlir::Value v);

/// K (the scores' B, `keys`: a transpose of [.., S, D]) or V (the output's
/// B, [.., S, D]) of products over `batch`, where the kernel reads it
/// through a repeat or (with `pieces`) in the pieces of a join; nullopt
/// where it is neither (a strided view or a copy reads it).
std::optional<AttentionOperand> attentionOperand(mlir::Value v, const std::vector<int64_t> &batch,
                                                 bool keys, bool pieces);

/// Shared by the streamed forms (this one and RowStatsForm.h).
/// Whether `op` reduces the last axis of its input, keeping it as 1.
bool reducesLastAxis(mlir::Operation *op);

/// The product a softmax's logits come from, through elementwise ops of the
/// product's shape: the product and those ops that depend on it, in program
/// order (other ops of the chain read only inputs or index math).
struct ScoresChain {
  MatmulOp scores;
  std::vector<mlir::Operation *> onScores;
};
std::optional<ScoresChain> scoresChain(mlir::Value logits);

/// Adds to `group` the elementwise ops on iotas and inputs that the ops
/// `onScores` read and that the group alone reads (a causal mask's
/// comparison), and theirs in turn.
void addSideOps(std::vector<mlir::Operation *> &group, llvm::ArrayRef<mlir::Operation *> onScores);

/// The streamed softmax whose output product is `op`, where the attention
/// kernel takes it; otherwise nullopt, with the reason in `why` when `op` is
/// such a product the kernel declines (empty when it is no such product).
std::optional<AttentionMatch> matchAttention(mlir::Operation *op, std::string &why);

/// The kernel's form for `m` on the profile's device and target (its
/// `arch`): the Hopper form on sm_90a for head dims 64 and 128 read head-dim
/// contiguous, else the portable one.
AttentionTiles attentionTiles(const AttentionMatch &m, const DeviceProfile &profile);

/// The decode form's time with `t`'s splits of the keys: its bytes at the
/// dot-product kernels' share of the copy rate, or, where fewer blocks than
/// that takes stream, the busiest SM's tiles at the rate its buffers keep in
/// flight; the products on tensor cores where longer; and what the splits
/// cost (the partials, the last block's merge). attentionTiles picks the
/// split count by it and the planner prices the group with it: one price for
/// both.
double decodeAttentionSeconds(const AttentionMatch &m, const AttentionTiles &t,
                              const DeviceProfile &p);

/// The attention kernels' products run at this share of the portable GEMM's
/// rate (families/Attention.cpp says where the number comes from).
inline constexpr double kAttentionMmaShare = 1.16;

/// Whether `ops` (program order) are exactly one streamed softmax's group.
bool isAttentionGroup(llvm::ArrayRef<mlir::Operation *> ops);

} // namespace fusec
