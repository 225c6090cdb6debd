//===- FusionAttrs.td - what the planner decided for a fused group --------===//
#ifndef FUSEC_FUSION_ATTRS_TD
#define FUSEC_FUSION_ATTRS_TD

include "compiler/dialect/FusecBase.td"
include "mlir/IR/EnumAttr.td"

// The kernel families: who runs a fused group, and so at what rate the cost
// model prices it. Each family's legality, parameters, time and emitter live
// in one file of compiler/families/ (docs/architecture.md). The matmul
// families are the planner's choice among fusec's GEMM kernels and cuBLASLt
// (compiler/transforms/MatmulPaths.cpp); the others are picked by
// -fusec-select-kernels, the first family in the registry's order that takes
// the group.
def Fusec_KernelFamily : I32EnumAttr<"KernelFamily", "the kernel family that runs a fused group", [
  I32EnumAttrCase<"Library", 0, "cublaslt">,
  I32EnumAttrCase<"LibraryEpilogue", 1, "cublaslt_epilogue">,
  I32EnumAttrCase<"LibraryBatchedRows", 2, "cublaslt_batched_rows">,
  I32EnumAttrCase<"Fusec", 3, "gemm_mma_sync">,
  I32EnumAttrCase<"FusecWgmma", 4, "gemm_wgmma">,
  I32EnumAttrCase<"FusecGemv", 5, "gemv">,
  I32EnumAttrCase<"FusecTensorGemv", 6, "gemv_tensor_cores">,
  I32EnumAttrCase<"FusecWgmmaGemv", 7, "gemv_wgmma">,
  I32EnumAttrCase<"FusecBatchedRows", 8, "gemm_batched_rows">,
  I32EnumAttrCase<"FusecBatchedStream", 9, "gemm_batched_stream">,
  I32EnumAttrCase<"Pointwise", 10, "pointwise">,
  I32EnumAttrCase<"PointwiseTranspose", 11, "pointwise_transpose">,
  I32EnumAttrCase<"RowReduction", 12, "row_reduction">,
  I32EnumAttrCase<"ColumnOnlineSoftmax", 13, "column_online_softmax">,
  I32EnumAttrCase<"ColumnStreamed", 14, "column_streamed">,
  I32EnumAttrCase<"ColumnCooperative", 15, "column_cooperative">,
  I32EnumAttrCase<"ColumnTiled", 16, "column_tiled">
]> {
  let cppNamespace = "::fusec";
  let genSpecializedAttr = 0;
}

def Fusec_KernelFamilyAttr : EnumAttr<Fusec_Dialect, Fusec_KernelFamily, "family"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // FUSEC_FUSION_ATTRS_TD
