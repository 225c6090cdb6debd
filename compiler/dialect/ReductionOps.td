//===- ReductionOps.td - sum, mean, max, min ------------------------------===//
#ifndef FUSEC_REDUCTION_OPS_TD
#define FUSEC_REDUCTION_OPS_TD

include "compiler/dialect/FusecBase.td"

class Fusec_ReduceOp<string mnemonic, TypeConstraint tensor, string what>
    : Fusec_Op<mnemonic, [Pure, SameOperandsAndResultElementType]> {
  let summary = what # " over axes";
  let description = what # [{ over `axes` (sorted, unique, non-negative;
    the frontend normalizes negative axes). Accumulates in fp32 for float
    dtypes (int64 for integers). With `keepdims` the reduced dims stay as 1.

    ```mlir
    %r = fusec.}] # mnemonic # [{ %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
    ```
  }];
  let arguments = (ins tensor:$input, DenseI64ArrayAttr:$axes,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdims);
  let results = (outs tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::verify() { return ::fusec::verifyReduceOp(*this); }
  }];
}

def Fusec_SumOp : Fusec_ReduceOp<"sum", Fusec_NumericTensor, "sum">;
def Fusec_MeanOp : Fusec_ReduceOp<"mean", Fusec_FloatTensor, "arithmetic mean">;
def Fusec_MaxOp : Fusec_ReduceOp<"max", Fusec_NumericTensor, "maximum">;
def Fusec_MinOp : Fusec_ReduceOp<"min", Fusec_NumericTensor, "minimum">;

#endif // FUSEC_REDUCTION_OPS_TD
