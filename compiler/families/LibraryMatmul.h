//===- LibraryMatmul.h - a matmul group as a cuBLASLt call, as plan data --===//
#pragma once

#include "compiler/dialect/FusecDialect.h"
#include "compiler/plan/PlanDesc.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

namespace fusec {

/// The epilogue cuBLASLt applies to a group of the cublaslt_epilogue family
/// (the scale, residual, bias and gelu its body computes after the product),
/// as -fusec-select-kernels records it on the group.
llvm::Expected<LibraryEpilogueAttr> libraryEpilogueOf(FusionOp fusion);

/// The cuBLASLt call of a matmul group of a library family (Cublaslt.cpp):
/// its operands are views of the group's inputs, bound to `inputBuffers`;
/// the result goes to buffer `out`. With the cuBLASLt epilogue family, the
/// epilogue recorded on the group (`library_epilogue`).
llvm::Expected<PlanMatmul> libraryMatmul(FusionOp fusion, llvm::ArrayRef<int> inputBuffers,
                                         int out);

} // namespace fusec
