//===- LayoutOps.td - reshape, transpose, broadcast_to, slice, concat, matmul
#ifndef FUSEC_LAYOUT_OPS_TD
#define FUSEC_LAYOUT_OPS_TD

include "compiler/dialect/FusecBase.td"

def Fusec_ReshapeOp : Fusec_Op<"reshape", [Pure, SameOperandsAndResultElementType]> {
  let summary = "same elements, new shape (row-major order)";
  let description = [{
    ```mlir
    %y = fusec.reshape %x : (tensor<4x8xf32>) -> tensor<32xf32>
    ```
  }];
  let arguments = (ins Fusec_Tensor:$input);
  let results = (outs Fusec_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Fusec_TransposeOp : Fusec_Op<"transpose", [Pure, SameOperandsAndResultElementType]> {
  let summary = "permute dimensions";
  let description = [{
    Result dimension i is input dimension perm[i].

    ```mlir
    %y = fusec.transpose %x {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Fusec_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Fusec_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Fusec_BroadcastToOp : Fusec_Op<"broadcast_to", [Pure, SameOperandsAndResultElementType]> {
  let summary = "NumPy broadcast to the result shape";
  let description = [{
    ```mlir
    %y = fusec.broadcast_to %b : (tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Fusec_Tensor:$input);
  let results = (outs Fusec_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Fusec_SliceOp : Fusec_Op<"slice", [Pure, SameOperandsAndResultElementType]> {
  let summary = "strided window";
  let description = [{
    One (start, limit, step) per dimension, 0 <= start <= limit <= dim,
    step > 0; the frontend normalizes graph-format slices into this form.

    ```mlir
    %y = fusec.slice %x {starts = array<i64: 0, 2>, limits = array<i64: 4, 8>, steps = array<i64: 1, 2>} : (tensor<4x8xf32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Fusec_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$limits, DenseI64ArrayAttr:$steps);
  let results = (outs Fusec_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Fusec_ConcatOp : Fusec_Op<"concat", [Pure, SameOperandsAndResultElementType]> {
  let summary = "join tensors along an axis";
  let description = [{
    ```mlir
    %y = fusec.concat %a, %b {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Variadic<Fusec_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Fusec_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Fusec_GatherOp : Fusec_Op<"gather", [Pure]> {
  let summary = "rows of a tensor chosen by an index tensor (an embedding lookup)";
  let description = [{
    ONNX Gather: the result is `data` with its dim `axis` replaced by the
    dims of `indices`, element (i..., k..., j...) = data[i..., idx, j...]
    with idx = indices[k...]. A negative index counts from the end; an index
    still outside the dim is clamped to it (defined, never a wild read).

    ```mlir
    %e = fusec.gather %table, %ids {axis = 0 : i64} : (tensor<1000x256xbf16>, tensor<2x7xi64>) -> tensor<2x7x256xbf16>
    ```
  }];
  let arguments = (ins Fusec_Tensor:$data, Fusec_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Fusec_Tensor:$result);
  let assemblyFormat = "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Fusec_MatmulOp : Fusec_Op<"matmul", [Pure, SameOperandsAndResultElementType]> {
  let summary = "NumPy batched matrix product";
  let description = [{
    NumPy `matmul`: batch dims broadcast; a 1-D operand is treated as a row
    (lhs) or column (rhs) vector and that dim is dropped from the result.
    Accumulates in fp32.

    ```mlir
    %y = fusec.matmul %a, %b : (tensor<2x4x8xbf16>, tensor<8x16xbf16>) -> tensor<2x4x16xbf16>
    ```
  }];
  let arguments = (ins Fusec_FloatTensor:$lhs, Fusec_FloatTensor:$rhs);
  let results = (outs Fusec_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // FUSEC_LAYOUT_OPS_TD
