//===- CostModel.h - HBM bytes, flops and predicted time of op groups -----===//
//
// The rule fusec lives by: a group of ops costs its inputs read once plus its
// outputs written once. Unfused, every op pays for its own operands and result
// ("trips" through HBM). Predicted time = max(bytes / BW, flops / peak) +
// launches x launch overhead. Views (reshape, transpose, broadcast_to, slice)
// and generators (constant, iota) are folded into index math: they cost nothing
// themselves, and a read through a view reads the tensor behind it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/cost/DeviceProfile.h"
#include "compiler/dialect/FusecDialect.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>
#include <cstdint>

namespace fusec {

/// Bytes of a tensor value in its storage dtype.
int64_t tensorBytes(mlir::Value v);
/// Whether `op` is folded into index math (views) or recomputed in place (generators).
bool isView(mlir::Operation *op);
bool isGenerator(mlir::Operation *op);
/// Follows views back to the value that is really stored.
mlir::Value viewSource(mlir::Value v);
/// HBM bytes read when a kernel reads `v` (through its views; slices read less).
int64_t readBytes(mlir::Value v);

struct Cost {
  int64_t bytes = 0;        ///< HBM bytes read + written
  int64_t flops = 0;        ///< CUDA-core flops
  int64_t tensorFlops = 0;  ///< tensor-core flops (matmuls)
  int launches = 0;
  /// Of `bytes`, what a matmul group's epilogue reads besides the operands
  /// (a residual, a bias): fusec's GEMMs read it after the products, not
  /// overlapped with them (see predictSeconds).
  int64_t epilogueBytes = 0;
  /// Of epilogueBytes, what the wgmma kernel's TMA loads while the products
  /// run: a 16-bit input of the shape of the group's one 16-bit 2-D output
  /// (a residual; WgmmaGemm.cpp, tmaStoreApplies).
  int64_t tmaEpilogueBytes = 0;
  /// Operand elements a matmul group's prologue computes (the operand is
  /// computed from the prologue's inputs as the kernel loads it), counted as
  /// often as each kernel computes them: the portable GEMM once per 64-wide
  /// tile of the other dim, the dot-product kernel A once per block of 8
  /// weight rows (shared memory) and B once (see predictSeconds).
  int64_t prologueTileElements = 0, prologueGemvElements = 0;
  /// Of tensorFlops, those of products whose output rows are not a multiple
  /// of 16 bytes (a vocabulary of 50257): of 8 bytes (`halfAligned`), or
  /// less. cuBLASLt runs them several times slower (libraryRates).
  int64_t halfAlignedTensorFlops = 0, unalignedTensorFlops = 0;
  /// Bytes each rank sends over the GPU-to-GPU link (collectives; ring
  /// algorithms: an all-reduce sends 2 (n - 1) / n of its tensor).
  int64_t linkBytes = 0;
  /// An all-reduce of floats: its tensor's bytes and its ranks (what the
  /// one-shot kernel over peer memory moves: each rank reads the tensor of
  /// every other; families/Collective.cpp).
  int64_t allReduceBytes = 0;
  int allReduceRanks = 0;
  Cost &operator+=(const Cost &o) {
    bytes += o.bytes;
    linkBytes += o.linkBytes;
    allReduceBytes += o.allReduceBytes;
    allReduceRanks = std::max(allReduceRanks, o.allReduceRanks);
    halfAlignedTensorFlops += o.halfAlignedTensorFlops;
    unalignedTensorFlops += o.unalignedTensorFlops;
    prologueTileElements += o.prologueTileElements;
    prologueGemvElements += o.prologueGemvElements;
    epilogueBytes += o.epilogueBytes;
    tmaEpilogueBytes += o.tmaEpilogueBytes;
    flops += o.flops;
    tensorFlops += o.tensorFlops;
    launches += o.launches;
    return *this;
  }
};

/// Who runs a matmul: cuBLASLt, fusec's portable GEMM, its Hopper GEMM (TMA +
/// wgmma), its dot-product kernel for 1-8 rows (and its tensor-core form for
/// 9-64 rows of one matrix), or the portable GEMM on a
/// batch of 1-8 row matrices (decode attention scores), where its 16-row
/// tiles mostly idle.
/// LibraryEpilogue: cuBLASLt applying the group's epilogue itself
/// (schedule/LibraryEpilogue.h).
/// LibraryBatchedRows: cuBLASLt on a batch of 1-8 row products (decode
/// attention), far below its rate on one matrix.
/// FusecTensorGemv: the dot-product kernel's tensor-core form, 9-64 rows of
/// one matrix; FusecWgmmaGemv: its Hopper form (TMA stages into wgmma, K
/// halves in a cluster; WgmmaGemv.cpp), the same rows on sm_90a where
/// wgmmaGemvRows applies; FusecBatchedStream: the portable GEMM on a batch
/// of 1-8 row matrices with long K (decode attention's probabilities @ V),
/// which streams the batch's B like a split-K GEMM.
/// The paths are the matmul cases of the kernel families
/// (compiler/dialect/FusionAttrs.td), the others price as memory-bound.
using GemmPath = KernelFamily;
/// What a kernel family streams and computes at (compiler/families/: each
/// family's rates and the reasons for them live with it).
struct KernelRates {
  /// Of the copy rate, for a group with a product (others reach the copy rate).
  double bandwidthFraction = 1;
  double tensorFlopsPerSec = 1;
  /// Time that overlaps neither the operands' stream nor the math: an
  /// epilogue read after the products, a prologue the loads wait for.
  double epilogueSeconds = 0;
  /// The least a launch of the family takes, however small.
  double minSeconds = 0;
};
/// max(bytes / (BW x fraction), flops / peak) + the family's unoverlapped
/// time + launches x launch overhead, in seconds.
double rooflineSeconds(const Cost &c, const DeviceProfile &p, const KernelRates &r);
/// The prediction before a matmul's family is chosen: products at cuBLASLt's
/// rates (the library's is the baseline every other path is weighed
/// against); groups without a product at the copy rate.
double predictSeconds(const Cost &c, const DeviceProfile &p);
/// cuBLASLt's rates for a group of cost `c`: its share of the copy rate, its
/// tensor-core rate, and the time it spends beyond that rate on products
/// whose output rows are not 16-byte multiples (measured on the H200, the
/// rate drops to about 40% with 8-byte rows and 14% with narrower ones:
/// docs/cost-model.md, "Unaligned outputs").
KernelRates libraryRates(const Cost &c, const DeviceProfile &p);
/// A GEMM epilogue's inputs read after the products (a residual, a bias),
/// one element pair per thread with no registers left to batch the loads: at
/// about half the copy rate, not overlapped (docs/cost-model.md, "Predicted
/// time").
double afterProductsSeconds(const Cost &c, const DeviceProfile &p);
/// Rows of A, the batch count and K of a matmul.
struct MatmulDims {
  int64_t rows, batch, k;
};
MatmulDims matmulDims(mlir::Operation *matmul);
/// The path cuBLASLt takes for `matmul` (Library or LibraryBatchedRows).
GemmPath libraryGemmPath(mlir::Operation *matmul);
/// The path the planner chose for `matmul` (its fusec.family, set by
/// MatmulPaths.cpp and FuseSiblings.cpp), cuBLASLt's when it has none yet.
GemmPath chosenGemmPath(mlir::Operation *matmul);
/// Records the planner's choice on `matmul` (chosenGemmPath reads it).
void setChosenGemmPath(mlir::Operation *matmul, GemmPath path);
/// The memory-only part of the prediction (the roofline floor of the bytes).
double floorSeconds(const Cost &c, const DeviceProfile &p);

/// Flops of one op (elementwise and reductions: one per element computed;
/// matmul: 2 M N K, counted as tensor flops).
Cost opFlops(mlir::Operation *op);
/// The cost of `op` run as its own kernel (zero for views and generators).
Cost unfusedCost(mlir::Operation *op);

/// The cost of `ops` run as one kernel: values used but not defined by `ops` are
/// read once; values defined by `ops` and used outside (or by `extraUses`, e.g.
/// the function's return) are written once.
Cost groupCost(llvm::ArrayRef<mlir::Operation *> ops);
/// The most shared memory the dot-product kernel gives a prologue's A
/// (computed once per block there; beyond it, once per warp).
constexpr int64_t kGemvStageBytes = 48 * 1024;

/// The ops among `members` that `matmul`'s operands are computed from,
/// through views and transitively: its prologue, in `members` order (views
/// and generators left out). Empty when both operands are read from memory.
llvm::SmallVector<mlir::Operation *> matmulPrologue(mlir::Operation *matmul,
                                                   llvm::ArrayRef<mlir::Operation *> members);
/// Whether `v` has a use outside `members`, looking through views.
bool usedOutside(mlir::Value v, llvm::ArrayRef<mlir::Operation *> members);
bool usedOutside(mlir::Value v, const llvm::SmallPtrSetImpl<mlir::Operation *> &members);
/// Inputs and outputs of a set of ops, in first-use / definition order.
void groupBoundary(llvm::ArrayRef<mlir::Operation *> ops,
                   llvm::SetVector<mlir::Value> &inputs, llvm::SetVector<mlir::Value> &outputs);

} // namespace fusec
