//===- CompositeOps.td - ops that -fusec-decompose rewrites ---------------===//
#ifndef FUSEC_COMPOSITE_OPS_TD
#define FUSEC_COMPOSITE_OPS_TD

include "compiler/dialect/FusecBase.td"

class Fusec_SoftmaxLikeOp<string mnemonic, string formula>
    : Fusec_Op<mnemonic, [Pure, SameOperandsAndResultType, Fusec_Composite]> {
  let summary = mnemonic # " along one axis";
  let description = formula # [{

    ```mlir
    %y = fusec.}] # mnemonic # [{ %x {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Fusec_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Fusec_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::verify() { return ::fusec::verifyAxisOp(*this, getAxis()); }
  }];
}

def Fusec_SoftmaxOp : Fusec_SoftmaxLikeOp<"softmax",
    "exp(x - max(x)) / sum(exp(x - max(x))); decomposes to max, sub, exp, sum, div.">;
def Fusec_LogSoftmaxOp : Fusec_SoftmaxLikeOp<"log_softmax",
    "x - max(x) - log(sum(exp(x - max(x)))); decomposes to max, sub, exp, sum, log, sub.">;

def Fusec_LayerNormOp : Fusec_Op<"layer_norm",
    [Pure, AttrSizedOperandSegments, Fusec_Composite]> {
  let summary = "layer normalization over dims axis..rank-1";
  let description = [{
    (x - mean) * rsqrt(var + eps) * weight + bias, with mean and the biased
    variance over dims `axis` to the last; `weight` and `bias` are optional
    and have the normalized shape.

    ```mlir
    %y = fusec.layer_norm %x weight(%w) bias(%b) {axis = 1 : i64, eps = 1.0e-05 : f64}
        : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Fusec_FloatTensor:$input, Optional<Fusec_FloatTensor>:$weight,
                       Optional<Fusec_FloatTensor>:$bias, I64Attr:$axis, F64Attr:$eps);
  let results = (outs Fusec_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`weight` `(` $weight^ `)`)? (`bias` `(` $bias^ `)`)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Fusec_RmsNormOp : Fusec_Op<"rms_norm", [Pure, Fusec_Composite]> {
  let summary = "root-mean-square normalization over the last dim";
  let description = [{
    x * rsqrt(mean(x * x) + eps) * weight; decomposes to mul, mean, add, rsqrt,
    mul, mul. `weight` has the shape of the last dim and may be left out.

    ```mlir
    %y = fusec.rms_norm %x weight(%w) {eps = 1.0e-06 : f64} : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
    ```
  }];
  let arguments = (ins Fusec_FloatTensor:$input, Optional<Fusec_FloatTensor>:$weight,
                       F64Attr:$eps);
  let results = (outs Fusec_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`weight` `(` $weight^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Fusec_ArgMaxOp : Fusec_Op<"argmax", [Pure, Fusec_Composite]> {
  let summary = "the index of each row's largest element (greedy decoding)";
  let description = [{
    Along `axis`: the first index holding the maximum, or where the values
    hold NaN the first NaN's (as PyTorch); i64. Decomposes to max, a
    comparison, an iota and a min over the same axis.

    ```mlir
    %t = fusec.argmax %logits {axis = 1 : i64, keepdims = false} : (tensor<4x32000xbf16>) -> tensor<4xi64>
    ```
  }];
  let arguments = (ins Fusec_NumericTensor:$input, I64Attr:$axis, BoolAttr:$keepdims);
  let results = (outs StaticShapeTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Fusec_TopKOp : Fusec_Op<"topk", [Pure, Fusec_Composite]> {
  let summary = "the k largest elements along an axis, or their indices (top-k sampling)";
  let description = [{
    Along `axis`: the `k` largest elements in descending order, or with
    `indices` their positions (i64). NaN counts as larger than any number
    (as PyTorch's topk); equal elements come in index order. One op per
    face: the values and the indices of one selection are two ops with the
    same input and attributes, whose decompositions CSE merges. Decomposes
    into k rounds of a max over the elements not yet taken and the first
    index holding it (argmax's form), the rounds concatenated.

    ```mlir
    %v = fusec.topk %logits {axis = 1 : i64, k = 4 : i64, indices = false} : (tensor<2x32000xf32>) -> tensor<2x4xf32>
    %i = fusec.topk %logits {axis = 1 : i64, k = 4 : i64, indices = true} : (tensor<2x32000xf32>) -> tensor<2x4xi64>
    ```
  }];
  let arguments = (ins Fusec_NumericTensor:$input, I64Attr:$k, I64Attr:$axis, BoolAttr:$indices);
  let results = (outs Fusec_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Fusec_LinearOp : Fusec_Op<"linear", [Pure, Fusec_Composite]> {
  let summary = "x @ weight^T + bias, weight laid out [out, in]";
  let description = [{
    ```mlir
    %y = fusec.linear %x, %w bias(%b) : (tensor<4x8xbf16>, tensor<16x8xbf16>, tensor<16xbf16>) -> tensor<4x16xbf16>
    ```
  }];
  let arguments = (ins Fusec_FloatTensor:$input, Fusec_FloatTensor:$weight,
                       Optional<Fusec_FloatTensor>:$bias);
  let results = (outs Fusec_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` `(` $bias^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Fusec_AttentionOp : Fusec_Op<"scaled_dot_product_attention",
    [Pure, Fusec_Composite]> {
  let summary = "softmax(q k^T * scale + mask) v";
  let description = [{
    q [..., L, E], k [..., S, E], v [..., S, Ev] -> [..., L, Ev]. Batch dims
    broadcast (so grouped-query attention can pass k/v with fewer heads after
    a reshape). `mask` is boolean (true = attend) or additive in the q dtype,
    broadcast to [..., L, S]. `causal` masks key j > query i (top-left aligned,
    as PyTorch). `scale` defaults to 1/sqrt(E).

    ```mlir
    %o = fusec.scaled_dot_product_attention %q, %k, %v {causal = true}
        : (tensor<1x8x16x64xbf16>, tensor<1x8x16x64xbf16>, tensor<1x8x16x64xbf16>) -> tensor<1x8x16x64xbf16>
    ```
  }];
  let arguments = (ins Fusec_FloatTensor:$query, Fusec_FloatTensor:$key,
                       Fusec_FloatTensor:$value, Optional<Fusec_Tensor>:$mask,
                       DefaultValuedAttr<BoolAttr, "false">:$causal,
                       OptionalAttr<F64Attr>:$scale);
  let results = (outs Fusec_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` `(` $mask^ `)`)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // FUSEC_COMPOSITE_OPS_TD
