//===- Sharding.cpp - --ranks and --shard ---------------------------------===//
#include "tools/fusec/Sharding.h"

#include "compiler/dialect/FusecDialect.h"
#include "compiler/shape/ShapeRules.h"
#include "compiler/support/Printable.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/GlobPattern.h"

namespace fusec::cli {

void addSplitOptions(CLI::App *cmd, int &ranks, std::vector<std::string> &shard) {
  cmd->add_option("--ranks", ranks,
                  "split the graph over this many GPUs (tensor parallel) by its sharded "
                  "arguments: the graph's `shard` fields and --shard")
      ->check(CLI::Range(1, int(kMaxRanks)));
  cmd->add_option("--shard", shard,
                  "NAME=DIM: split input or parameter NAME (a glob: *.q_proj.weight=0) along "
                  "DIM over the ranks; for an output, leave it split so where the program "
                  "computes it so (repeat it or separate with commas)")
      ->delimiter(',');
}

llvm::Error applyShards(mlir::func::FuncOp func, const std::vector<std::string> &shard) {
  auto fail = [](const std::string &entry, const std::string &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "--shard '%s': %s",
                                   printable(entry).c_str(), why.c_str());
  };
  mlir::Builder b(func.getContext());
  for (const std::string &entry : shard) {
    size_t eq = entry.rfind('=');
    int64_t dim = 0;
    if (eq == std::string::npos || eq == 0 ||
        llvm::StringRef(entry).substr(eq + 1).getAsInteger(10, dim))
      return fail(entry, "expected NAME=DIM, e.g. w_q=0");
    llvm::Expected<llvm::GlobPattern> pattern = llvm::GlobPattern::create(entry.substr(0, eq));
    if (!pattern)
      return fail(entry, llvm::toString(pattern.takeError()));
    bool named = false;
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      auto name = func.getResultAttrOfType<mlir::StringAttr>(i, "fusec.name");
      if (!name || !pattern->match(name.getValue()))
        continue;
      named = true;
      llvm::ArrayRef<int64_t> s =
          mlir::cast<mlir::RankedTensorType>(func.getFunctionType().getResult(i)).getShape();
      int64_t axis = 0;
      std::string err = shape::normalizeAxis(dim, s.size(), axis);
      if (!err.empty())
        return fail(entry, "output '" + printable(name.getValue()) + "' " + shape::str(s) +
                               ": " + err);
      func.setResultAttr(i, kShardAttr, b.getI64IntegerAttr(axis));
    }
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto name = func.getArgAttrOfType<mlir::StringAttr>(i, "fusec.name");
      if (!name || !pattern->match(name.getValue()))
        continue;
      named = true;
      llvm::ArrayRef<int64_t> s = shapeOf(func.getArgument(i));
      int64_t axis = 0;
      std::string err = shape::normalizeAxis(dim, s.size(), axis);
      if (!err.empty())
        return fail(entry, "argument '" + printable(name.getValue()) + "' " + shape::str(s) +
                               ": " + err);
      func.setArgAttr(i, kShardAttr, b.getI64IntegerAttr(axis));
    }
    if (!named)
      return fail(entry, "names no input, parameter or output of the graph");
  }
  return llvm::Error::success();
}

} // namespace fusec::cli
