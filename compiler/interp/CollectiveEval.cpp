//===- CollectiveEval.cpp - all_reduce, all_gather, reduce_scatter --------===//
#include "compiler/interp/EvalSupport.h"
#include "compiler/interp/Ranks.h"

#include "compiler/dialect/FusecDialect.h"
#include "compiler/shape/ShapeRules.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace fusec {
namespace {

llvm::Error evalError(const llvm::Twine &message) {
  return llvm::make_error<llvm::StringError>(message, llvm::inconvertibleErrorCode());
}

/// The elementwise sum, max or min of every rank's tensor: floats in double,
/// added in rank order and rounded once; integers in int64.
HostTensor reduceAcross(const std::vector<HostTensor> &all, StringRef kind) {
  HostTensor out(all.front().dtype(), all.front().shape());
  const bool ints = !isFloat(out.dtype());
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (ints) {
      int64_t acc = all.front().getInt(i);
      for (size_t r = 1; r < all.size(); ++r) {
        int64_t v = all[r].getInt(i);
        acc = kind == "sum" ? acc + v : kind == "max" ? std::max(acc, v) : std::min(acc, v);
      }
      out.setInt(i, acc);
      continue;
    }
    double acc = all.front().get(i);
    for (size_t r = 1; r < all.size(); ++r) {
      double v = all[r].get(i);
      if (kind == "sum")
        acc += v;
      else if (std::isnan(acc) || std::isnan(v))
        acc = NAN;  // as the GPU's max and min: NaN wins
      else
        acc = kind == "max" ? std::max(acc, v) : std::min(acc, v);
    }
    out.set(i, acc);
  }
  return out;
}

} // namespace

namespace interp {

llvm::Expected<HostTensor> evalCollective(Operation *op, Operands in, const InterpOptions &opts) {
  StringRef name = op->getName().stripDialect();
  const int64_t ranks = op->getAttrOfType<IntegerAttr>("ranks").getInt();
  if (!opts.link)
    return evalError(name + ": the program is split over " + llvm::Twine(ranks) +
                     " ranks; evaluate it with --ranks " + llvm::Twine(ranks));
  if (opts.link->ranks() != ranks)
    return evalError(name + ": the op is for " + llvm::Twine(ranks) + " ranks, the run has " +
                     llvm::Twine(opts.link->ranks()));
  llvm::Expected<std::vector<HostTensor>> all = opts.link->exchange(*in[0]);
  if (!all)
    return all.takeError();
  for (const HostTensor &t : *all)
    if (t.dtype() != in[0]->dtype() || t.shape() != in[0]->shape())
      return evalError(name + ": the ranks gave tensors of different shapes (" +
                       describeTensor(t.dtype(), t.shape()) + " and " +
                       describeTensor(in[0]->dtype(), in[0]->shape()) + ")");
  if (auto reduce = dyn_cast<AllReduceOp>(op))
    return reduceAcross(*all, reduce.getKind());
  if (auto gather = dyn_cast<AllGatherOp>(op))
    return joinBlocks(*all, gather.getAxis());
  auto scatter = cast<ReduceScatterOp>(op);
  return rankBlock(reduceAcross(*all, "sum"), scatter.getAxis(), opts.link->rank(), int(ranks));
}

} // namespace interp
} // namespace fusec
