//===- ReadsInPlace.h - whether a group reads its anchors at their place --===//
//
// A reduction kernel holds each reduction's result for its own row only, and
// a GEMM kernel holds the product for the element at hand only: the code
// generator emits a read of either as that value whatever the index it is
// read at (codegen/ElementEmitter.cpp). A group may therefore read them only
// at their own row or element. Views fold into the index, so a transpose, a
// slice, a reshape or the broadcast of a keepdims=false result between the
// value and its reader can move the read elsewhere, directly or through a
// value computed from it. This follows every read as the code generator
// forms its index and says whether each one lands in place.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/dialect/FusecDialect.h"

#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace fusec {

/// Whether the group `ops` over `domain` reads each of its reductions (with
/// `reducedAxes`) at its own row, and its matmul (where `reducedAxes` is
/// empty) at its own element: from each output, at the index the kernels
/// store it at, and from each reduction's operand, at the domain's. With
/// `only`, that anchor alone is checked (one of sibling matmuls, `domain`
/// its shape). `why` names the first read that does not.
bool readsAnchorsInPlace(llvm::ArrayRef<mlir::Operation *> ops, llvm::ArrayRef<int64_t> domain,
                         llvm::ArrayRef<int64_t> reducedAxes, std::string &why,
                         mlir::Operation *only = nullptr);

} // namespace fusec
