//===- Families.h - every kernel family, for the registry (private) -------===//
#pragma once

#include "compiler/families/KernelFamily.h"

namespace fusec::families {

// One function a family, each defined in the family's own file.
const KernelFamilyDef &pointwiseTranspose();
const KernelFamilyDef &pointwise();
const KernelFamilyDef &rowReduction();
const KernelFamilyDef &columnOnlineSoftmax();
const KernelFamilyDef &columnStreamed();
const KernelFamilyDef &columnCooperative();
const KernelFamilyDef &columnTiled();
/// A softmax streamed between two products (Attention.cpp).
const KernelFamilyDef &attention();
/// A product's row max and sum of exponentials, streamed in its epilogue
/// (StreamedRows.cpp).
const KernelFamilyDef &streamedRows();
/// fusec's GEMM and GEMV kernels, one family per GemmPath (FusecGemm.cpp).
const KernelFamilyDef &fusecGemm(KernelFamily path);
/// cuBLASLt, one family per library path (Cublaslt.cpp).
const KernelFamilyDef &cublaslt(KernelFamily path);

/// all_reduce, all_gather and reduce_scatter, run by NCCL (Collective.cpp).
const KernelFamilyDef &collective();

/// The error text of a failed emitter, consumed: a family's reason.
std::string reasonOf(llvm::Error e);

/// For families whose legality is decided while their kernel is laid out
/// (whether a column tile fits on chip): the emitter's reason, or empty.
std::string rejectUnlessEmitted(const KernelFamilyDef &family, FusionOp fusion,
                                const FamilyTarget &target);

} // namespace fusec::families
