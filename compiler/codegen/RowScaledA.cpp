//===- RowScaledA.cpp - a normalized A in the dot-product kernels ---------===//
//
// The dot-product kernels (GemvKernel.cpp, SiblingGemv.cpp) read all of
// A's row in every warp's K loop. Where A is row-scaled (an RMS norm:
// schedule/RowScaledOperand.h), each warp computes P = A with the row
// factor as 1 (x * g), adds the row's reductions (sum of x * x) into
// accumulators beside its products, combines them over the row's lanes
// after the loop as it does the sums, and multiplies each sum by the
// factor of its row. Nothing waits for the statistic: it is complete when
// the sums are.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/GemmGen.h"
#include "compiler/codegen/ScalarOps.h"
#include "compiler/cost/CostModel.h"

using namespace mlir;

namespace fusec::codegen::detail {
namespace {
std::string str(int64_t v) { return std::to_string(v); }
std::string acc(size_t j) { return "fz_st" + str(static_cast<int64_t>(j)); }
} // namespace

std::optional<RowScaleCode> RowScaleCode::of(FusionOp fusion, MatmulOp mm, std::string &why) {
  SmallVector<Operation *> members;
  for (Operation &op : fusion.getBodyBlock())
    members.push_back(&op);
  std::optional<RowScaledOperand> form =
      rowScaledOperand(mm, matmulPrologue(mm, members), why);
  if (!form)
    return std::nullopt;
  RowScaleCode code;
  code.form = *form;
  ArrayRef<int64_t> a = shapeOf(mm.getLhs());
  code.rows = a[0];
  code.k = a[1];
  return code;
}

std::string RowScaleCode::decls(const std::string &indent) const {
  std::string s;
  for (size_t j = 0; j < form.reductions.size(); ++j) {
    ReductionRule rule = reductionRule(form.reductions[j]);
    s += indent + "float " + acc(j) + "[" + str(rows) + "];  // " +
         form.reductions[j]->getName().stripDialect().str() + " of A's row m\n";
    s += indent + "#pragma unroll\n" + indent + "for (int m = 0; m < " + str(rows) + "; ++m) " +
         acc(j) + "[m] = " + rule.identity + ";\n";
  }
  return s;
}

std::string RowScaleCode::accumulate(ElementEmitter &e, ArrayRef<int64_t> domain,
                                     const std::string &r, const std::string &indent) const {
  Value scale = form.scale;
  e.known = [scale](ElementEmitter &, Value v, const Index &) -> std::optional<std::string> {
    if (v == scale)
      return std::string("1.f");
    return std::nullopt;
  };
  std::string s;
  for (size_t j = 0; j < form.reductions.size(); ++j) {
    Value x = form.reductions[j]->getOperand(0);
    std::string v = e.emit(x, ElementEmitter::project(ElementEmitter::identity(domain.size()),
                                                      domain, shapeOf(x)));
    ReductionRule rule = reductionRule(form.reductions[j]);
    s += indent + acc(j) + "[" + r + "] = " + rule.functor + "(" + acc(j) + "[" + r + "], (float)" +
         v + ");\n";
  }
  return s;
}

std::string RowScaleCode::finish(int lanes, const std::string &indent) const {
  std::string s = indent + "#pragma unroll\n" + indent + "for (int m = 0; m < " + str(rows) +
                  "; ++m) {\n";
  for (size_t j = 0; j < form.reductions.size(); ++j) {
    ReductionRule rule = reductionRule(form.reductions[j]);
    s += indent + "  " + acc(j) + "[m] = fz_warp_reduce<" + str(lanes) + ">(" + acc(j) + "[m], " +
         rule.functor + ")" + (rule.isMean ? " / " + str(k) + ".f" : "") + ";\n";
  }
  return s + indent + "}\n";
}

std::string RowScaleCode::scale(FusionOp fusion, const std::string &m, const std::string &indent,
                                std::string &value) const {
  // Row m's statistics picked by constant indices (an array indexed by a
  // variable would go to local memory).
  std::string s;
  for (size_t j = 0; j < form.reductions.size(); ++j) {
    s += indent + "float " + acc(j) + "_row = " + acc(j) + "[0];\n";
    s += indent + "#pragma unroll\n" + indent + "for (int m = 1; m < " + str(rows) +
         "; ++m)\n" + indent + "  if (m == " + m + ") " + acc(j) + "_row = " + acc(j) + "[m];\n";
  }
  ElementEmitter e(fusion, {m, "0"}, indent);
  e.reduced = [this](Operation *op) {
    auto it = llvm::find(form.reductions, op);
    return acc(static_cast<size_t>(it - form.reductions.begin())) + "_row";
  };
  value = e.emit(form.scale, ElementEmitter::project(ElementEmitter::identity(2), {rows, k},
                                                     shapeOf(form.scale)));
  return s + e.takeCode();
}

} // namespace fusec::codegen::detail
