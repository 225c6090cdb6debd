//===- FusionOps.cpp - verifier of fusec.fusion ---------------------------===//
#include "compiler/dialect/FusecDialect.h"

using namespace mlir;

namespace fusec {

YieldOp FusionOp::getYield() { return cast<YieldOp>(getBodyBlock().getTerminator()); }

LogicalResult FusionOp::verify() {
  Block &body = getBodyBlock();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("body has ") << body.getNumArguments() << " arguments for "
                                    << getInputs().size() << " inputs";
  for (auto [arg, in] : llvm::zip(body.getArguments(), getInputs()))
    if (arg.getType() != in.getType())
      return emitOpError("body argument type ") << arg.getType() << " differs from input type "
                                                << in.getType();
  YieldOp yield = getYield();
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yielded types differ from the result types");
  static const llvm::StringRef kinds[] = {"pointwise", "row_reduction", "column_reduction",
                                          "matmul", "attention", "streamed_rows",
                                          "collective"};
  if (!llvm::is_contained(kinds, getKind()))
    return emitOpError("unknown kind \"") << getKind() << "\"";
  return success();
}

} // namespace fusec
