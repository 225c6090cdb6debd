//===- FusecBase.td - fusec dialect, base op class and type constraints --===//
#ifndef FUSEC_BASE_TD
#define FUSEC_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Fusec_Dialect : Dialect {
  let name = "fusec";
  let cppNamespace = "::fusec";
  let summary = "Graph-level tensor ops that fusec fuses into GPU kernels";
  let description = [{
    One op per op of the JSON graph format (docs/graph-format.md). Tensors are
    builtin statically shaped ranked tensors of f32, f16, bf16, i32, i64 or i1.
    Composite ops (softmax, layer_norm, ...) are decomposed into the primitive
    ops by `-fusec-decompose`; fusion rediscovers the fused kernels from them.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let useDefaultAttributePrinterParser = 1;
}

class Fusec_Op<string mnemonic, list<Trait> traits = []>
    : Op<Fusec_Dialect, mnemonic, traits>;

// Element types a graph may use.
defvar Fusec_ElementTypes = [F32, F16, BF16, I32, I64, I1];
def Fusec_Tensor : StaticShapeTensorOf<Fusec_ElementTypes>;
def Fusec_FloatTensor : StaticShapeTensorOf<[F32, F16, BF16]>;
def Fusec_NumericTensor : StaticShapeTensorOf<[F32, F16, BF16, I32, I64]>;
def Fusec_BoolTensor : StaticShapeTensorOf<[I1]>;
def Fusec_IndexTensor : StaticShapeTensorOf<[I32, I64]>;

//===----------------------------------------------------------------------===//
// Native traits (compiler/dialect/FusecTraits.h)
//===----------------------------------------------------------------------===//

class Fusec_NativeTrait<string name> : NativeOpTrait<name> {
  let cppNamespace = "::fusec::OpTrait";
}
// Operands broadcast (NumPy rules) to exactly the result shape.
def Fusec_Broadcasting : Fusec_NativeTrait<"Broadcasting">;
// Marker: result element i depends only on operand elements at the broadcast index i.
def Fusec_Elementwise : Fusec_NativeTrait<"ElementwiseMap">;
// Marker: a composite op that -fusec-decompose rewrites into primitive ops.
def Fusec_Composite : Fusec_NativeTrait<"Composite">;

#endif // FUSEC_BASE_TD
