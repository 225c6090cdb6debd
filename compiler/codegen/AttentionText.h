//===- AttentionText.h - the kernel text both attention forms share -------===//
//
// The attention family's kernel (AttentionKernel.cpp) has a portable form
// and a Hopper form (AttentionHopper.cpp), chosen by attentionTiles
// (schedule/AttentionForm.h). Both keep the accumulators in the mma.sync
// layout (per warp 16 rows; per 8 columns two rows x two columns a lane), so
// the logits, the online softmax, the packing of P and the output's store
// are one text, here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/cost/DeviceProfile.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/plan/TensorMapParam.h"
#include "compiler/schedule/AttentionForm.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fusec::codegen::detail {

/// One operand as the kernel reads it: a block argument's rows, the head
/// dim contiguous (or for K, with `keysContiguous`, rows of keys per head
/// dim element).
struct AttentionRows {
  std::string ptr;
  int64_t offset = 0, ld = 0, batchStride = 0;
  bool keysContiguous = false;
  unsigned arg = 0;  ///< the kernel argument
  /// Batch entry b reads the operand's entry b / repeat (grouped-query K/V).
  int64_t repeat = 1;
  /// The keys this piece holds: [key0, key0 + keys) (a join read in pieces).
  int64_t key0 = 0, keys = 0;
};

/// A matched attention group, its form's tiles and shared-memory layout, and
/// the text both forms are made of: statements at the kernel body's indent,
/// naming the kernel's variables (fz_acc, fz_o, fz_m, fz_l, fz_q0, fz_b, ...).
class AttentionText {
public:
  /// The group's match and operands; an error where the kernel does not
  /// take it.
  static llvm::Expected<AttentionText> of(FusionOp fusion, const DeviceProfile &profile);

  AttentionMatch m;
  AttentionTiles tiles;
  std::vector<int64_t> batch;  ///< the batch dims of the products
  AttentionRows q, k, v;
  /// Every piece of K and of V (k and v are the first).
  std::vector<AttentionRows> ks, vs;
  int64_t L = 0, S = 0, D = 0, B = 0;  ///< queries, keys, head dim, batch entries
  int64_t R = 0, N = 0;                ///< query rows a block, keys a tile
  bool wg = false;                     ///< the Hopper form
  /// Shared-memory row length of the portable form's tiles (padded), and of
  /// its keys-contiguous K tile; elements of a Q, K and V tile.
  int64_t ld = 0, kld = 0, qTile = 0, kTile = 0, vTile = 0;
  std::string T, To, mma;  ///< operand and output storage types, mma.sync call

  /// The shared-memory buffers fz_sq, fz_sk, fz_sv, lane and warp, -inf.
  std::string buffers(int threadsBeforeWarp0) const;
  /// fz_q0, fz_b and the batch entry's indices fz_bi<d> (at `indent`).
  std::string item(const std::string &q0, const std::string &b, const std::string &indent) const;
  /// Where an operand's batch entry `b` (of the products) starts.
  std::string base(const AttentionRows &r, const std::string &b = "fz_b") const;
  /// The indices fz_bi<d> of the batch entry fz_b (at `indent`).
  std::string batchIndices(const std::string &indent) const;
  /// f at score fz_s of query row fz_i and key fz_j: the lambda fz_logit,
  /// or with `perRow` one that takes the row's batch entry fz_b first.
  std::string logitFunction(bool perRow) const;
  /// O += P V for this warp's keys from the V tile `vt`.
  std::string outputProduct(const std::string &vt) const;
  /// The logits' function fz_logit, the output accumulators fz_o (zero),
  /// the rows' max and sum, and fz_tiles (the key tiles this block streams).
  std::string declarations() const;
  /// S = Q K^T into fz_acc for this warp's 16 rows and the N keys of tile
  /// `kt` (Hopper: issued, not waited for; Q from `qt`).
  std::string scores(const std::string &kt, const std::string &qt = "fz_sq") const;
  /// The logits and the online softmax of the two rows a thread holds: the
  /// exponentials in fz_acc, the max and sum updated; the output rescaled
  /// here, or (`later`) the factors kept in fz_sc.
  std::string softmax(bool later) const;
  /// fz_acc's two key blocks 2kk and 2kk + 1 as the A fragment `dst` of P V.
  std::string pack(const std::string &dst, const std::string &kk) const;
  /// O / l into the output, each row's sum gathered from its four threads.
  std::string store() const;
  /// The output row of batch entry `b` (over the products' batch dims) and
  /// query `i`: rows in [batch..., L] order, or in the order of the
  /// transpose the kernel writes through (AttentionMatch::outTranspose).
  std::string outRow(const std::string &b, const std::string &i) const;
  /// Buffer `t % 2` of K and of V.
  std::string kBuf(const std::string &t) const;
  std::string vBuf(const std::string &t) const;
  /// fz_ex2 and fz_pack2.
  std::string helpers() const;
  std::string schedule() const;

  /// Where a warp's rows start in the Q tile; the statement that defines a
  /// thread's row fz_i (half `h`); the first key of a warp's tile fz_t; the
  /// arguments fz_logit takes after the score. The decode form's differ.
  std::string warpRow = "warp * 16", rowOf, keyOf, logitArgs = "fz_i, fz_j";

private:
  std::string logitCode, logit;
};

/// The forms' bodies after `buffers`, and the Hopper form's own helpers and
/// tensor maps (AttentionKernel.cpp, AttentionHopper.cpp).
std::string portableAttentionBody(const AttentionText &a);
std::string decodeAttentionBody(const AttentionText &a);
/// The decode form's scratch (none with one split): a counter per row tile
/// (zeroed once; the last block resets its own), then per row tile and split
/// 16 rows of max and sum, then 16 rows of output.
struct DecodeScratch {
  int64_t items = 0;         ///< row tiles: K/V entries x row tiles of each
  int64_t counterBytes = 0;  ///< where the partials start
  int64_t outputFloats = 0;  ///< where, past those, the output rows start
  int64_t bytes = 0;
};
DecodeScratch decodeAttentionScratch(const AttentionText &a);
std::string hopperAttentionBody(const AttentionText &a);
std::string hopperAttentionHelpers(const AttentionText &a);
std::vector<TensorMapParam> hopperAttentionMaps(const AttentionText &a);

} // namespace fusec::codegen::detail
