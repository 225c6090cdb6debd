//===- TypedBuilders.h - build fusec ops with their result types inferred -===//
//
// The frontend and the decomposition pass both create ops from operands alone;
// these helpers infer each result type with compiler/shape's rules. Callers
// check the rules first where input may be bad (the frontend does); here a
// failing rule is an internal error.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/dialect/FusecDialect.h"
#include "compiler/shape/ShapeRules.h"

#include "mlir/IR/Builders.h"

namespace fusec {

class TypedBuilder {
public:
  TypedBuilder(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}

  mlir::RankedTensorType tensorType(llvm::ArrayRef<int64_t> shape, mlir::Type elt) {
    return mlir::RankedTensorType::get(shape, elt);
  }

  template <typename OpT> mlir::Value unary(mlir::Value x) {
    return b.create<OpT>(loc, x.getType(), x);
  }
  /// Arithmetic binary op: result has the broadcast shape and the lhs dtype.
  template <typename OpT> mlir::Value binary(mlir::Value lhs, mlir::Value rhs) {
    return b.create<OpT>(loc, broadcastType({lhs, rhs}, elementType(lhs)), lhs, rhs);
  }
  /// Comparison: broadcast shape, i1.
  template <typename OpT> mlir::Value compare(mlir::Value lhs, mlir::Value rhs) {
    return b.create<OpT>(loc, broadcastType({lhs, rhs}, b.getI1Type()), lhs, rhs);
  }
  template <typename OpT>
  mlir::Value reduce(mlir::Value x, llvm::ArrayRef<int64_t> axes, bool keepdims) {
    shape::Shape out;
    check(shape::reduce(shapeOf(x), axes, keepdims, out));
    return b.create<OpT>(loc, tensorType(out, elementType(x)), x,
                         b.getDenseI64ArrayAttr(axes), b.getBoolAttr(keepdims));
  }

  mlir::Value where(mlir::Value cond, mlir::Value lhs, mlir::Value rhs);
  mlir::Value cast(mlir::Value x, mlir::Type elementType);
  mlir::Value constant(double value, mlir::Type elementType,
                       llvm::ArrayRef<int64_t> shape = {});
  mlir::Value iota(int64_t dim, mlir::Type elementType, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value x, llvm::ArrayRef<int64_t> perm);
  /// Swaps the last two dims.
  mlir::Value transposeLast2(mlir::Value x);
  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  mlir::Value broadcastTo(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  mlir::Value slice(mlir::Value x, const shape::SliceSpec &spec);
  mlir::Value concat(mlir::ValueRange xs, int64_t axis);
  mlir::Value gather(mlir::Value data, mlir::Value indices, int64_t axis);
  mlir::Value matmul(mlir::Value lhs, mlir::Value rhs);

  mlir::OpBuilder &builder() { return b; }
  mlir::Location location() const { return loc; }

private:
  static mlir::Type elementType(mlir::Value v) {
    return mlir::cast<mlir::RankedTensorType>(v.getType()).getElementType();
  }
  mlir::RankedTensorType broadcastType(std::initializer_list<mlir::Value> vs,
                                       mlir::Type elt);
  static void check(const std::string &err);

  mlir::OpBuilder &b;
  mlir::Location loc;
};

} // namespace fusec
