//===- FusecTraits.h - native op traits of the fusec dialect --------------===//
#pragma once

#include "mlir/IR/OpDefinition.h"

namespace fusec::OpTrait {

mlir::LogicalResult verifyBroadcasting(mlir::Operation *op);

/// Operands broadcast (NumPy rules) to exactly the result shape.
template <typename ConcreteType>
class Broadcasting : public mlir::OpTrait::TraitBase<ConcreteType, Broadcasting> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyBroadcasting(op);
  }
};

/// Result element i depends only on operand elements at the broadcast index i;
/// fusion and codegen treat such ops as scalar expressions.
template <typename ConcreteType>
class ElementwiseMap : public mlir::OpTrait::TraitBase<ConcreteType, ElementwiseMap> {};

/// A composite op that -fusec-decompose rewrites into primitives.
template <typename ConcreteType>
class Composite : public mlir::OpTrait::TraitBase<ConcreteType, Composite> {};

} // namespace fusec::OpTrait
