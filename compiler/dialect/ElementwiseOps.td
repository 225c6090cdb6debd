//===- ElementwiseOps.td - unary, binary, compare, where, cast, constant --===//
#ifndef FUSEC_ELEMENTWISE_OPS_TD
#define FUSEC_ELEMENTWISE_OPS_TD

include "compiler/dialect/FusecBase.td"

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

class Fusec_UnaryOp<string mnemonic, TypeConstraint tensor, string what>
    : Fusec_Op<mnemonic, [Pure, SameOperandsAndResultType, Fusec_Elementwise]> {
  let summary = what;
  let description = "Elementwise " # what # [{. Computed in fp32 for 16-bit
    floats and rounded once to the result dtype.

    ```mlir
    %y = fusec.}] # mnemonic # [{ %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins tensor:$input);
  let results = (outs tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Fusec_NegOp : Fusec_UnaryOp<"neg", Fusec_NumericTensor, "negation">;
def Fusec_AbsOp : Fusec_UnaryOp<"abs", Fusec_NumericTensor, "absolute value">;
def Fusec_ExpOp : Fusec_UnaryOp<"exp", Fusec_FloatTensor, "e raised to x">;
def Fusec_LogOp : Fusec_UnaryOp<"log", Fusec_FloatTensor, "natural logarithm">;
def Fusec_SqrtOp : Fusec_UnaryOp<"sqrt", Fusec_FloatTensor, "square root">;
def Fusec_RsqrtOp : Fusec_UnaryOp<"rsqrt", Fusec_FloatTensor, "reciprocal square root">;
def Fusec_ReciprocalOp : Fusec_UnaryOp<"reciprocal", Fusec_FloatTensor, "1 / x">;
def Fusec_TanhOp : Fusec_UnaryOp<"tanh", Fusec_FloatTensor, "hyperbolic tangent">;
def Fusec_SigmoidOp : Fusec_UnaryOp<"sigmoid", Fusec_FloatTensor, "logistic sigmoid 1 / (1 + exp(-x))">;
def Fusec_ReluOp : Fusec_UnaryOp<"relu", Fusec_NumericTensor, "max(x, 0)">;
def Fusec_SiluOp : Fusec_UnaryOp<"silu", Fusec_FloatTensor, "x * sigmoid(x)">;
def Fusec_SinOp : Fusec_UnaryOp<"sin", Fusec_FloatTensor, "sine">;
def Fusec_CosOp : Fusec_UnaryOp<"cos", Fusec_FloatTensor, "cosine">;
def Fusec_ErfOp : Fusec_UnaryOp<"erf", Fusec_FloatTensor, "error function">;

def Fusec_GeluOp : Fusec_Op<"gelu", [Pure, SameOperandsAndResultType, Fusec_Elementwise]> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `approximate = "none"`: x * 0.5 * (1 + erf(x / sqrt(2))).
    `approximate = "tanh"`: x * 0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))).

    ```mlir
    %y = fusec.gelu %x {approximate = "tanh"} : (tensor<8xbf16>) -> tensor<8xbf16>
    ```
  }];
  let arguments = (ins Fusec_FloatTensor:$input,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs Fusec_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Fusec_CastOp : Fusec_Op<"cast", [Pure, SameOperandsAndResultShape, Fusec_Elementwise]> {
  let summary = "dtype conversion";
  let description = [{
    Converts each element to the result dtype: floats round to nearest even,
    float to int truncates toward zero, anything to bool is `x != 0`.

    ```mlir
    %y = fusec.cast %x : (tensor<8xf32>) -> tensor<8xbf16>
    ```
  }];
  let arguments = (ins Fusec_Tensor:$input);
  let results = (outs Fusec_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Binary with NumPy broadcasting
//===----------------------------------------------------------------------===//

class Fusec_BinaryOp<string mnemonic, TypeConstraint tensor, string what>
    : Fusec_Op<mnemonic, [Pure, SameOperandsAndResultElementType,
                          Fusec_Broadcasting, Fusec_Elementwise]> {
  let summary = what;
  let description = "Elementwise " # what # [{ with NumPy broadcasting; both
    operands have the result dtype.

    ```mlir
    %z = fusec.}] # mnemonic # [{ %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins tensor:$lhs, tensor:$rhs);
  let results = (outs tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Fusec_AddOp : Fusec_BinaryOp<"add", Fusec_NumericTensor, "addition">;
def Fusec_SubOp : Fusec_BinaryOp<"sub", Fusec_NumericTensor, "subtraction">;
def Fusec_MulOp : Fusec_BinaryOp<"mul", Fusec_NumericTensor, "multiplication">;
def Fusec_DivOp : Fusec_BinaryOp<"div", Fusec_NumericTensor,
                                 "division (integers truncate toward zero)">;
def Fusec_PowOp : Fusec_BinaryOp<"pow", Fusec_FloatTensor, "lhs raised to rhs">;
def Fusec_MaximumOp : Fusec_BinaryOp<"maximum", Fusec_NumericTensor, "maximum (NaN wins)">;
def Fusec_MinimumOp : Fusec_BinaryOp<"minimum", Fusec_NumericTensor, "minimum (NaN wins)">;

class Fusec_CompareOp<string mnemonic, string what>
    : Fusec_Op<mnemonic, [Pure, SameOperandsElementType, Fusec_Broadcasting, Fusec_Elementwise]> {
  let summary = what;
  let description = "Elementwise comparison `" # what # [{` with NumPy
    broadcasting; the result is i1.

    ```mlir
    %m = fusec.}] # mnemonic # [{ %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    ```
  }];
  let arguments = (ins Fusec_Tensor:$lhs, Fusec_Tensor:$rhs);
  let results = (outs Fusec_BoolTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Fusec_EqOp : Fusec_CompareOp<"eq", "lhs == rhs">;
def Fusec_NeOp : Fusec_CompareOp<"ne", "lhs != rhs">;
def Fusec_LtOp : Fusec_CompareOp<"lt", "lhs < rhs">;
def Fusec_LeOp : Fusec_CompareOp<"le", "lhs <= rhs">;
def Fusec_GtOp : Fusec_CompareOp<"gt", "lhs > rhs">;
def Fusec_GeOp : Fusec_CompareOp<"ge", "lhs >= rhs">;

def Fusec_WhereOp : Fusec_Op<"where", [Pure, Fusec_Broadcasting, Fusec_Elementwise]> {
  let summary = "select by condition";
  let description = [{
    `cond ? lhs : rhs` elementwise, the three operands broadcast together.

    ```mlir
    %r = fusec.where %c, %a, %b : (tensor<4x4xi1>, tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Fusec_BoolTensor:$condition, Fusec_Tensor:$lhs, Fusec_Tensor:$rhs);
  let results = (outs Fusec_Tensor:$result);
  let assemblyFormat =
      "$condition `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Nullary
//===----------------------------------------------------------------------===//

def Fusec_ConstantOp : Fusec_Op<"constant", [Pure, Fusec_Elementwise]> {
  let summary = "a tensor filled with one value";
  let description = [{
    Every element holds `value`, converted to the result dtype as by `cast`.

    ```mlir
    %eps = fusec.constant {value = 1.0e-05 : f64} : tensor<f32>
    ```
  }];
  let arguments = (ins F64Attr:$value);
  let results = (outs Fusec_Tensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Fusec_IotaOp : Fusec_Op<"iota", [Pure, Fusec_Elementwise]> {
  let summary = "the index along one dimension";
  let description = [{
    Element (i0, ..., in) holds i_dim. Internal: decomposition uses it to build
    causal masks without materializing them.

    ```mlir
    %rows = fusec.iota {dim = 0 : i64} : tensor<128x128xi32>
    ```
  }];
  let arguments = (ins I64Attr:$dim);
  let results = (outs Fusec_NumericTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

#endif // FUSEC_ELEMENTWISE_OPS_TD
