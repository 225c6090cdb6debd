//===- FoldRepeatedHeads.cpp - grouped-query K/V read once ----------------===//
//
// Grouped-query attention that the attention kernel does not stream (it
// reads such K/V through the repeat itself: schedule/AttentionOperands.cpp),
// an f32 model's for one, spends most of its bytes on the K/V cache in
// decode (Llama-3: 32 query heads, 8 K/V heads). Written as a repeat
// (reshape -> broadcast_to -> reshape) feeding a batched matmul, the repeat
// cannot be a strided view (the repeated dim sits inside the merged batch
// dim), so it is materialized: the cache is read once, written R times, and
// read R times by the matmul. The R query heads of a group are rows of the
// same product with the same K/V, so the matmul takes them as rows instead,
// and the cache is read once. A cache that arrives with this step's rows
// appended (a concat) is read in its pieces: the scores are joined, the
// products with V summed. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "compiler/dialect/FusecDialect.h"
#include "compiler/dialect/TypedBuilders.h"
#include "compiler/schedule/AttentionForm.h"
#include "compiler/schedule/StridedView.h"
#include "compiler/transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

#define DEBUG_TYPE "fusec-fold-repeated-heads"

namespace fusec {
#define GEN_PASS_DEF_FUSECFOLDREPEATEDHEADS
#include "compiler/transforms/Passes.h.inc"
} // namespace fusec

using namespace mlir;

namespace fusec {
namespace {

/// The K/V cache `source` ([.., G, 1, S, D], a reshape of [.., G, S, D]) when it
/// is a concat along S read by nothing else (a decode step appending its new
/// rows): the product can read the pieces instead.
ConcatOp appendedCache(Value source, ArrayRef<int64_t> kvShape) {
  auto reshape = source.getDefiningOp<ReshapeOp>();
  auto cat = reshape ? reshape->getOperand(0).getDefiningOp<ConcatOp>() : ConcatOp();
  if (!cat || !reshape->hasOneUse() || !cat->hasOneUse() ||
      shapeOf(cat.getResult()) != kvShape ||
      cat.getAxis() != static_cast<int64_t>(kvShape.size()) - 2)
    return ConcatOp();
  return cat;
}

void eraseIfDead(Operation *op) {
  while (op && op->use_empty() && !isa<func::ReturnOp>(op)) {
    Operation *next = op->getNumOperands() ? op->getOperand(0).getDefiningOp() : nullptr;
    op->erase();
    op = next && (isa<ReshapeOp, BroadcastToOp, TransposeOp, ConcatOp>(next)) ? next : nullptr;
  }
}

struct FoldRepeatedHeadsPass : impl::FusecFoldRepeatedHeadsBase<FoldRepeatedHeadsPass> {
  void runOnOperation() override {
    SmallVector<MatmulOp> matmuls;
    getOperation().walk([&](MatmulOp mm) { matmuls.push_back(mm); });
    // The products of a softmax the attention kernel streams stay as they
    // are: that kernel reads K and V once per query block either way, and
    // folded heads would put a reshape between its products.
    llvm::SmallPtrSet<Operation *, 16> streamed;
    for (MatmulOp mm : matmuls) {
      std::string why;
      if (std::optional<AttentionMatch> m = matchAttention(mm, why))
        streamed.insert(m->ops.begin(), m->ops.end());
    }
    for (MatmulOp mm : matmuls) {
      if (streamed.count(mm))
        continue;
      std::optional<HeadRepeat> rep = headRepeat(mm.getRhs());
      ArrayRef<int64_t> a = shapeOf(mm.getLhs()), result = shapeOf(mm.getResult());
      size_t n = a.size();
      if (!rep || n != shapeOf(mm.getRhs()).size() || a[n - 3] != rep->groups * rep->repeats)
        continue;
      // A's heads of one group become rows: [.., G, R*M, K], free only as a view.
      std::vector<int64_t> rowsShape(a.begin(), a.end());
      rowsShape[n - 3] = rep->groups;
      rowsShape[n - 2] = rep->repeats * a[n - 2];
      std::optional<StridedView> view = stridedView(mm.getLhs());
      if (!view || !reshapeView(*view, rowsShape))
        continue;
      OpBuilder b(mm);
      TypedBuilder tb(b, mm.getLoc());
      std::vector<int64_t> kvShape(shapeOf(rep->source).begin(), shapeOf(rep->source).end());
      kvShape.erase(kvShape.begin() + (n - 2));
      Value rows = tb.reshape(mm.getLhs(), rowsShape);
      Value product;
      if (ConcatOp cat = appendedCache(rep->source, kvShape); cat && rep->transposed) {
        // Scores over a cache with new rows appended: one product per piece,
        // joined along N, so the joined cache is never written (the join of
        // the small score pieces folds into their reader).
        SmallVector<Value> pieces;
        for (Value piece : cat.getInputs())
          pieces.push_back(tb.matmul(rows, tb.transposeLast2(piece)));
        product = tb.concat(pieces, n - 1);
      } else if (ConcatOp cat = appendedCache(rep->source, kvShape)) {
        // Probabilities @ V over a cache with new rows appended: the sum over
        // S splits where the pieces join, each part reading its piece in
        // place (the joined V is never written). A one-row piece is an outer
        // product, a broadcast multiply the big product's epilogue absorbs.
        Value sum;
        int64_t at = 0;
        for (Value piece : cat.getInputs()) {
          int64_t len = shapeOf(piece)[n - 2];
          shape::SliceSpec spec;
          spec.starts.assign(n, 0);
          spec.limits.assign(rowsShape.begin(), rowsShape.end());
          spec.steps.assign(n, 1);
          spec.starts[n - 1] = at;
          spec.limits[n - 1] = at + len;
          Value p = tb.slice(rows, spec);
          Value term = len == 1 ? tb.binary<MulOp>(p, piece) : tb.matmul(p, piece);
          sum = sum ? tb.binary<AddOp>(sum, term) : term;
          at += len;
        }
        product = sum;
      } else {
        Value kv = tb.reshape(rep->source, kvShape);
        if (rep->transposed)
          kv = tb.transposeLast2(kv);
        product = tb.matmul(rows, kv);
      }
      Value back = tb.reshape(product, result);
      Operation *rhs = mm.getRhs().getDefiningOp();
      mm.getResult().replaceAllUsesWith(back);
      mm->erase();
      eraseIfDead(rhs);
    }
  }
};

} // namespace
} // namespace fusec
