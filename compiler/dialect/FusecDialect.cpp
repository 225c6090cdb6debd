//===- FusecDialect.cpp - dialect registration and dtype mapping ----------===//
#include "compiler/dialect/FusecDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

#include "compiler/dialect/FusecDialect.cpp.inc"
#include "compiler/dialect/FusecEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "compiler/dialect/FusecAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "compiler/dialect/FusecOps.cpp.inc"

namespace fusec {

void FusecDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "compiler/dialect/FusecOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "compiler/dialect/FusecAttrs.cpp.inc"
      >();
}

Type toMlirType(DType t, MLIRContext *ctx) {
  Builder b(ctx);
  switch (t) {
  case DType::F32: return b.getF32Type();
  case DType::F16: return b.getF16Type();
  case DType::BF16: return b.getBF16Type();
  case DType::I32: return b.getI32Type();
  case DType::I64: return b.getI64Type();
  case DType::Bool: return b.getI1Type();
  }
  return {};
}

std::optional<DType> toDType(Type t) {
  if (t.isF32()) return DType::F32;
  if (t.isF16()) return DType::F16;
  if (t.isBF16()) return DType::BF16;
  if (t.isSignlessInteger(32)) return DType::I32;
  if (t.isSignlessInteger(64)) return DType::I64;
  if (t.isSignlessInteger(1)) return DType::Bool;
  return std::nullopt;
}

ArrayRef<int64_t> shapeOf(Value v) { return cast<RankedTensorType>(v.getType()).getShape(); }

DType dtypeOf(Value v) {
  return *toDType(cast<RankedTensorType>(v.getType()).getElementType());
}

} // namespace fusec
