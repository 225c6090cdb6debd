//===- GemmForms.h - which of fusec's GEMM kernels runs a matmul group ----===//
//
// The fusec GEMM family's legality and form, decided here alone: which of
// its kernels (the portable mma.sync GEMM, the Hopper TMA + wgmma GEMM alone,
// as a dual product or with sibling products side by side, the dot-product
// kernel and its tensor-core and Hopper forms) takes a matmul or a group of
// sibling matmuls. The planner records the answer as the matmul's family
// (transforms/MatmulPaths.cpp, FuseSiblings.cpp); classifyGroup asks which
// sibling groups any of them takes; code generation runs the recorded
// family's kernel (codegen/GemmLaunch.cpp) and asks here only for its
// parameters. The family's rates and its emitter entry are in
// families/FusecGemm.cpp (docs/architecture.md, "Where each decision is
// made").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/cost/CostModel.h"
#include "compiler/cost/DeviceProfile.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>

namespace fusec {

/// Whether sm_90a's TMA + wgmma GEMM (codegen/WgmmaGemm.cpp) takes this
/// matmul on `arch`: one matrix of more than 64 rows, 16-bit operands, both
/// K-contiguous with 16-byte aligned rows (x @ w^T, a linear layer).
bool wgmmaApplies(mlir::Operation *matmul, const std::string &arch);

/// Whether two sibling matmuls (one A, two weights of the same shape) can
/// share sm_90a's wgmma GEMM as one dual product: each tile multiplies its A
/// tile by both B tiles (SwiGLU's gate and up), and the epilogue joins the
/// two results: two products concatWgmmaApplies takes, whose weights have
/// one shape.
bool dualWgmmaApplies(mlir::Operation *first, mlir::Operation *second, const std::string &arch);

/// Sibling matmuls of one A on sm_90a's wgmma GEMM as one kernel over their
/// tiles side by side along N (Q/K/V projections): at most kMaxConcatProducts
/// 2-D products of one M and K, each K-contiguous and taken by the wgmma
/// kernel alone, 16-bit results of one dtype with 16-byte rows. Each tile
/// belongs to one product and goes out through its own tensor map.
constexpr size_t kMaxConcatProducts = 3;
bool concatWgmmaApplies(llvm::ArrayRef<mlir::Operation *> mms, const std::string &arch);

/// Whether fusec's dot-product kernel takes this matmul: 16-bit operands,
/// both K-contiguous with 16-byte aligned rows; 1-8 rows of A batched or not
/// (decode attention scores: a batch of heads, K rows of the cache), on CUDA
/// cores; 9-64 rows of one matrix on tensor cores (TensorCoreGemv.cpp).
bool gemvApplies(mlir::Operation *matmul);
/// Whether it takes it in the tensor-core form: 9-64 rows of one matrix.
bool tensorCoreGemvApplies(mlir::Operation *matmul);
/// Weight rows per cluster of the Hopper dot-product kernel (WgmmaGemv.cpp)
/// for `matmul` on `arch` with `smCount` SMs: 9-64 rows of A, K >= 128, one
/// cluster of two blocks per SM pair; 0 where it does not apply (not sm_90a,
/// or fewer than 32 or more than 128 weight rows a cluster).
int64_t wgmmaGemvRows(mlir::Operation *matmul, const std::string &arch, int smCount);
/// The same kernel over sibling matmuls of one A side by side (decode's Q, K
/// and V as three weights): 2 to kMaxConcatProducts 2-D products that each
/// take the form (9-64 rows, K >= 128), 16-bit results of one dtype. The
/// weight rows a cluster: the fewest (a multiple of 8, 32-128) that divide
/// every product's N with at most `smCount` clusters (two blocks an SM), so
/// a cluster's rows lie in one product; 0 where none does.
int64_t wgmmaGemvPartsRows(llvm::ArrayRef<mlir::Operation *> mms, const std::string &arch,
                           int smCount);


/// The paths fusec's kernels take for the matmul group of `matmul` on
/// `arch`: `path` for the product and its epilogue, `fusedPath` with the
/// group's prologue too (computed operands go through the portable GEMM's
/// loads, or the dot-product kernel's at 1-8 rows).
struct FusecGemmPaths {
  GemmPath path, fusedPath;
};
FusecGemmPaths fusecGemmPaths(mlir::Operation *matmul, bool hasPrologue, const std::string &arch,
                              const DeviceProfile &profile);

/// The dot-product kernel's path for a matmul it takes (sibling products):
/// its tensor-core form past 8 rows (FusecTensorGemv), else FusecGemv.
GemmPath gemvPath(mlir::Operation *matmul);

/// The group's matmuls, in program order.
llvm::SmallVector<mlir::Operation *> matmulsOf(llvm::ArrayRef<mlir::Operation *> group);

/// Whether the group is nothing but its products (and views of its inputs):
/// they are its results as they are.
bool onlyProducts(llvm::ArrayRef<mlir::Operation *> group);

/// Sibling products that are not decode-sized and are the group's only ops:
/// the wgmma kernel over their tiles side by side (Q/K/V).
bool isSideBySide(llvm::ArrayRef<mlir::Operation *> group);

/// A group of two sibling products that are not decode-sized, joined in an
/// epilogue: the dual wgmma product (classifySiblings took it).
bool isDual(llvm::ArrayRef<mlir::Operation *> group);

/// How the dot-product kernel runs a group of sibling matmuls of 1-64 rows:
/// on sm_90a, products that are the group's results as they are (Q/K/V)
/// take the TMA + wgmma kernel side by side where wgmmaGemvPartsRows
/// applies, else the dot-product kernel's path.
GemmPath siblingGemvPath(llvm::ArrayRef<mlir::Operation *> group, const std::string &arch,
                         int smCount);

} // namespace fusec
