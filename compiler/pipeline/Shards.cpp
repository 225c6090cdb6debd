//===- Shards.cpp - NAME=DIM entries that split a graph's arguments -------===//
#include "compiler/pipeline/Shards.h"

#include "compiler/dialect/FusecDialect.h"
#include "compiler/shape/ShapeRules.h"
#include "compiler/support/Printable.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/GlobPattern.h"

namespace fusec {

llvm::Error applyShards(mlir::func::FuncOp func, const std::vector<std::string> &shard,
                        llvm::StringRef what) {
  auto fail = [&](const std::string &entry, const std::string &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s '%s': %s",
                                   what.str().c_str(), printable(entry).c_str(), why.c_str());
  };
  mlir::Builder b(func.getContext());
  for (const std::string &entry : shard) {
    size_t eq = entry.rfind('=');
    int64_t dim = 0;
    if (eq == std::string::npos || eq == 0 ||
        llvm::StringRef(entry).substr(eq + 1).getAsInteger(10, dim))
      return fail(entry, "expected NAME=DIM, e.g. w_q=0");
    // The pattern refers to its text: the text lives as long as it.
    const std::string glob = entry.substr(0, eq);
    llvm::Expected<llvm::GlobPattern> pattern = llvm::GlobPattern::create(glob);
    if (!pattern)
      return fail(entry, llvm::toString(pattern.takeError()));
    // Arguments and outputs alike: the name, the shape, where the mark goes.
    bool named = false;
    auto mark = [&](mlir::StringAttr name, llvm::ArrayRef<int64_t> s, const char *what,
                    llvm::function_ref<void(mlir::Attribute)> set) -> llvm::Error {
      if (!name || !pattern->match(name.getValue()))
        return llvm::Error::success();
      named = true;
      int64_t axis = 0;
      std::string err = shape::normalizeAxis(dim, s.size(), axis);
      if (!err.empty())
        return fail(entry, std::string(what) + " '" + printable(name.getValue()) + "' " +
                               shape::str(s) + ": " + err);
      set(b.getI64IntegerAttr(axis));
      return llvm::Error::success();
    };
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (llvm::Error err =
              mark(func.getArgAttrOfType<mlir::StringAttr>(i, "fusec.name"),
                   shapeOf(func.getArgument(i)), "argument",
                   [&](mlir::Attribute a) { func.setArgAttr(i, kShardAttr, a); }))
        return err;
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      if (llvm::Error err = mark(
              func.getResultAttrOfType<mlir::StringAttr>(i, "fusec.name"),
              mlir::cast<mlir::RankedTensorType>(func.getFunctionType().getResult(i)).getShape(),
              "output", [&](mlir::Attribute a) { func.setResultAttr(i, kShardAttr, a); }))
        return err;
    if (!named)
      return fail(entry, "names no input, parameter or output of the graph");
  }
  return llvm::Error::success();
}

} // namespace fusec
