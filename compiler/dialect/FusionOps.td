//===- FusionOps.td - fused groups as region ops ---------------------------===//
#ifndef FUSEC_FUSION_OPS_TD
#define FUSEC_FUSION_OPS_TD

include "compiler/dialect/FusecBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Fusec_FusionOp : Fusec_Op<"fusion", [IsolatedFromAbove,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "a group of ops that becomes one kernel (or one library call)";
  let description = [{
    The body computes the results from the block arguments (one per input);
    nothing inside crosses HBM. `kind` names the code-generation family:
    `pointwise`, `row_reduction`, `column_reduction`, `matmul`, `attention`. The cost
    attributes are what `fusec explain` prints: HBM bytes if each op ran on
    its own (`bytes_unfused`) and as one group (`bytes_fused`), the kernel
    launches saved, flops, the predicted time in microseconds, and the graph
    nodes covered.

    ```mlir
    %y = fusec.fusion "pointwise" (%x, %b) {name = "fused_gelu_add", bytes_fused = 4 : i64}
        : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<8x8xf32> {
    ^bb0(%a: tensor<8x8xf32>, %c: tensor<8xf32>):
      %h = fusec.add %a, %c : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
      %g = fusec.gelu %h : (tensor<8x8xf32>) -> tensor<8x8xf32>
      fusec.yield %g : tensor<8x8xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Fusec_Tensor>:$inputs, StrAttr:$kind,
                       OptionalAttr<Fusec_KernelFamilyAttr>:$family);
  let results = (outs Variadic<Fusec_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kind `(` $inputs `)` attr-dict `:` functional-type($inputs, results) $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    /// The yield that returns the results.
    YieldOp getYield();
  }];
}

def Fusec_YieldOp : Fusec_Op<"yield", [Pure, Terminator, ReturnLike,
                                       HasParent<"FusionOp">]> {
  let summary = "the results of a fusion body";
  let arguments = (ins Variadic<Fusec_Tensor>:$values);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ::mlir::ValueRange()); }]>];
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // FUSEC_FUSION_OPS_TD
