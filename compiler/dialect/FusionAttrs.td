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
  I32EnumAttrCase<"ColumnTiled", 16, "column_tiled">,
  I32EnumAttrCase<"Attention", 17, "attention">,
  I32EnumAttrCase<"StreamedRows", 18, "streamed_rows">,
  I32EnumAttrCase<"Collective", 19, "collective">
]> {
  let cppNamespace = "::fusec";
  let genSpecializedAttr = 0;
}

def Fusec_KernelFamilyAttr : EnumAttr<Fusec_Dialect, Fusec_KernelFamily, "family"> {
  let assemblyFormat = "`<` $value `>`";
}

// The call of a group of the cublaslt_epilogue family: cuBLASLt computes
// alpha * A @ B (+ the residual as C) (+ the bias along the rows), then
// gelu(tanh) where `gelu` is set. The residual and the bias are the group's
// inputs `residual` and `bias` (-1: none), read from their buffers at
// `residual_offset` and `bias_offset` elements. Recorded by
// -fusec-select-kernels from the group's body; plan building reads it.
def Fusec_LibraryEpilogueAttr : AttrDef<Fusec_Dialect, "LibraryEpilogue"> {
  let mnemonic = "library_epilogue";
  let summary = "the epilogue cuBLASLt applies to a matmul group";
  let parameters = (ins "::mlir::FloatAttr":$alpha, "int64_t":$residual,
                        "int64_t":$residual_offset, "int64_t":$bias,
                        "int64_t":$bias_offset, "bool":$gelu);
  let assemblyFormat = "`<` struct(params) `>`";
}

// Why the planner decided as it did about a producer and a consumer: the
// code of each record in a function's fusec.rejected and fusec.recomputed
// (beside the sentence `fusec explain` shows), for tools to filter on.
def Fusec_DecisionReason : I32EnumAttr<"DecisionReason", "why a merge was taken or not", [
  I32EnumAttrCase<"NoKernelFamily", 0, "no_kernel_family">,
  I32EnumAttrCase<"Cycle", 1, "cycle">,
  I32EnumAttrCase<"SiblingsNeedFusecGemm", 2, "siblings_need_fusec_gemm">,
  I32EnumAttrCase<"NeedsHopper", 3, "needs_hopper">,
  I32EnumAttrCase<"NotFaster", 4, "not_faster">,
  I32EnumAttrCase<"NotRecomputed", 5, "not_recomputed">,
  I32EnumAttrCase<"PrologueNotFaster", 6, "prologue_not_faster">,
  I32EnumAttrCase<"LibraryReadsOperands", 7, "library_reads_operands">,
  I32EnumAttrCase<"Recomputed", 8, "recomputed">
]> {
  let cppNamespace = "::fusec";
  let genSpecializedAttr = 0;
}

def Fusec_DecisionReasonAttr : EnumAttr<Fusec_Dialect, Fusec_DecisionReason, "reason"> {
  let assemblyFormat = "`<` $value `>`";
}

// One decision of the planner about a producer and a consumer (a rejected
// merge, or a recomputation): the groups' ops as explain names them, the
// reason's code and sentence, and, where the cost model decided, the
// predicted microseconds of the two ways (fused or with a copy; apart or
// reading from memory). A function's fusec.rejected and fusec.recomputed
// are arrays of these.
def Fusec_DecisionAttr : AttrDef<Fusec_Dialect, "Decision"> {
  let mnemonic = "decision";
  let summary = "a merge the planner considered, and why it decided so";
  let parameters = (ins StringRefParameter<"the producer">:$producer,
                        StringRefParameter<"the consumer">:$consumer,
                        EnumParameter<Fusec_DecisionReason>:$code,
                        StringRefParameter<"the sentence explain shows">:$reason,
                        OptionalParameter<"::mlir::FloatAttr">:$fused_us,
                        OptionalParameter<"::mlir::FloatAttr">:$apart_us);
  let assemblyFormat = "`<` struct(params) `>`";
}

#endif // FUSEC_FUSION_ATTRS_TD
