//===- Partition.cpp - one program for every rank, from sharded arguments -===//
//
// Tensor parallelism as Megatron-LM lays it out falls out of a few local
// rules: a column-parallel linear is a matmul whose weight is split on N, a
// row-parallel one a matmul whose operands are both split on K (a partial
// sum, all-reduced where a whole value is needed), attention heads a split
// batch dim that reshapes and transposes carry along. Each op keeps its
// operands' splits where its rule allows and otherwise takes them whole,
// so the result is always correct and as split as the rules can keep it.
// See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "compiler/dialect/FusecDialect.h"
#include "compiler/shape/ShapeRules.h"
#include "compiler/support/Printable.h"
#include "compiler/transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#define DEBUG_TYPE "fusec-partition"

namespace fusec {
#define GEN_PASS_DEF_FUSECPARTITION
#include "compiler/transforms/Passes.h.inc"

using namespace mlir;

namespace {

/// Where a value's elements live across the ranks.
struct Layout {
  enum Kind : uint8_t { Whole, Split, Partial };
  Kind kind = Whole;
  int64_t axis = -1;  ///< the split dim, for Split
  static Layout whole() { return {}; }
  static Layout split(int64_t a) { return {Split, a}; }
  static Layout partial() { return {Partial, -1}; }
  bool operator==(const Layout &o) const { return kind == o.kind && axis == o.axis; }
};

/// An op's rule: which operands it needs whole, and the layout of its
/// result computed from the operands left as they are.
struct Decision {
  SmallVector<bool> whole;
  Layout result;
  /// "max" or "min": the op's local result is all-reduced with this kind
  /// (a max or min over the split dim).
  StringRef reduceAfter;
};

int64_t extentAt(ArrayRef<int64_t> s, int64_t axis) {
  return axis >= 0 && axis < int64_t(s.size()) ? s[size_t(axis)] : 1;
}

class Partitioner {
public:
  Partitioner(func::FuncOp func, int64_t ranks) : func(func), n(ranks), b(func.getContext()) {}

  LogicalResult run() {
    Block &body = func.front();
    for (BlockArgument arg : body.getArguments()) {
      std::optional<int64_t> axis = shardAxis(func, arg.getArgNumber());
      if (!axis)
        continue;
      ArrayRef<int64_t> s = shapeOf(arg);
      if (*axis < 0 || *axis >= int64_t(s.size()))
        return func.emitError() << argName(arg) << ": shard dim " << *axis
                                << " is out of range for shape " << shape::str(s);
      if (s[size_t(*axis)] % n != 0)
        return func.emitError() << argName(arg) << ": dim " << *axis << " ("
                                << s[size_t(*axis)] << ") is not a multiple of the ranks (" << n
                                << ")";
      arg.setType(localType(arg.getType(), Layout::split(*axis)));
      layouts[arg] = Layout::split(*axis);
    }
    SmallVector<Operation *> ops;
    for (Operation &op : body)
      ops.push_back(&op);
    for (Operation *op : ops) {
      if (op->hasTrait<mlir::OpTrait::ReturnLike>()) {
        // An output stays split where it is asked to and is split so (a
        // rank's heads of a KV cache); otherwise it is made whole, and no
        // longer says it is split.
        for (OpOperand &use : op->getOpOperands()) {
          unsigned i = use.getOperandNumber();
          std::optional<int64_t> asked = resultShardAxis(func, i);
          if (asked && layoutOf(use.get()) == Layout::split(*asked))
            continue;
          if (asked)
            func.removeResultAttr(i, StringAttr::get(func.getContext(), kShardAttr));
          use.set(makeWhole(use.get()));
        }
        continue;
      }
      apply(op, decide(op));
    }
    SmallVector<Type> args(body.getArgumentTypes());
    func.setType(FunctionType::get(func.getContext(), args,
                                   body.getTerminator()->getOperandTypes()));
    func->setAttr(kRanksAttr, b.getI64IntegerAttr(n));
    return success();
  }

private:
  std::string argName(BlockArgument arg) {
    if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "fusec.name"))
      return "argument '" + printable(name.getValue()) + "'";
    return "argument " + std::to_string(arg.getArgNumber());
  }

  Layout layoutOf(Value v) const {
    auto it = layouts.find(v);
    return it == layouts.end() ? Layout::whole() : it->second;
  }

  /// The value's shape on one rank when it has layout `l`.
  Type localType(Type full, Layout l) const {
    auto t = cast<RankedTensorType>(full);
    if (l.kind != Layout::Split)
      return t;
    SmallVector<int64_t> s(t.getShape());
    s[size_t(l.axis)] /= n;
    return RankedTensorType::get(s, t.getElementType());
  }

  /// The whole shape of `v`, whose type is already local.
  SmallVector<int64_t> fullShape(Value v) const {
    SmallVector<int64_t> s(shapeOf(v));
    if (Layout l = layoutOf(v); l.kind == Layout::Split)
      s[size_t(l.axis)] *= n;
    return s;
  }

  int64_t bytes(Value v) const {
    return shape::numElements(fullShape(v)) *
           int64_t(dtypeBytes(dtypeOf(v)));
  }

  /// `v` whole on every rank: gathered if split, summed if partial; once per value.
  Value makeWhole(Value v) {
    Layout l = layoutOf(v);
    if (l.kind == Layout::Whole)
      return v;
    if (Value done = wholeOf.lookup(v))
      return done;
    OpBuilder::InsertionGuard guard(b);
    if (Operation *def = v.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(&func.front());
    auto full = RankedTensorType::get(fullShape(v), cast<RankedTensorType>(v.getType()).getElementType());
    Value whole;
    if (l.kind == Layout::Split)
      whole = b.create<AllGatherOp>(v.getLoc(), full, v, b.getI64IntegerAttr(l.axis),
                                    b.getI64IntegerAttr(n));
    else
      whole = b.create<AllReduceOp>(v.getLoc(), full, v, b.getStringAttr("sum"),
                                    b.getI64IntegerAttr(n));
    wholeOf[v] = whole;
    return whole;
  }

  Decision allWhole(Operation *op) const {
    Decision d;
    d.whole.assign(op->getNumOperands(), true);
    return d;
  }

  Decision decide(Operation *op) {
    if (op->getNumResults() != 1 || op->getNumRegions() != 0)
      return allWhole(op);
    Decision d = allWhole(op);
    // A partial sum is summed before any op reads it, except a sum over it.
    bool anySplit = false;
    for (Value v : op->getOperands())
      anySplit |= layoutOf(v).kind == Layout::Split;
    if (!anySplit && !isa<SumOp>(op))
      return d;
    if (isElementwise(op))
      return decideElementwise(op);
    if (isa<SumOp, MeanOp, MaxOp, MinOp>(op))
      return decideReduction(op);
    if (auto mm = dyn_cast<MatmulOp>(op))
      return decideMatmul(mm);
    Layout in = layoutOf(op->getOperand(0));
    if (in.kind != Layout::Split)
      return d;
    auto keep = [&](Layout result) {
      d.whole.assign(op->getNumOperands(), false);
      d.result = result;
      return d;
    };
    ArrayRef<int64_t> out = shapeOf(op->getResult(0));
    if (isa<ReshapeOp>(op)) {
      SmallVector<int64_t> s = fullShape(op->getOperand(0));
      int64_t outer = shape::numElements(ArrayRef<int64_t>(s).take_front(in.axis));
      int64_t prefix = 1;
      for (int64_t i = 0; i < int64_t(out.size()); prefix *= out[size_t(i)], ++i)
        if (prefix == outer && out[size_t(i)] % n == 0)
          return keep(Layout::split(i));
      return d;
    }
    if (auto t = dyn_cast<TransposeOp>(op)) {
      for (auto [i, p] : llvm::enumerate(t.getPerm()))
        if (p == in.axis)
          return keep(Layout::split(int64_t(i)));
      return d;
    }
    if (isa<BroadcastToOp>(op))
      return keep(Layout::split(in.axis + int64_t(out.size()) -
                                int64_t(shapeOf(op->getOperand(0)).size())));
    if (auto s = dyn_cast<SliceOp>(op)) {
      size_t a = size_t(in.axis);
      if (s.getStarts()[a] == 0 && s.getSteps()[a] == 1 &&
          s.getLimits()[a] == fullShape(s.getInput())[a])
        return keep(Layout::split(in.axis));
      return d;
    }
    if (auto c = dyn_cast<ConcatOp>(op)) {
      for (Value v : c.getInputs())
        if (!(layoutOf(v) == in))
          return d;
      return in.axis == c.getAxis() ? d : keep(in);
    }
    if (auto g = dyn_cast<GatherOp>(op)) {
      if (layoutOf(g.getIndices()).kind != Layout::Whole || in.axis == g.getAxis())
        return d;
      Decision k = keep(in.axis < g.getAxis()
                            ? in
                            : Layout::split(in.axis - 1 + int64_t(shapeOf(g.getIndices()).size())));
      return k;
    }
    return d;  // composites and anything else: whole
  }

  /// Operands split on one result dim stay split; every other operand must
  /// have extent 1 there (or lack the dim). Of the dims some operand is
  /// split on, the one that gathers the fewest bytes wins.
  Decision decideElementwise(Operation *op) {
    const int64_t rank = int64_t(shapeOf(op->getResult(0)).size());
    auto offset = [&](Value v) { return rank - int64_t(shapeOf(v).size()); };
    Decision best = allWhole(op);
    int64_t bestCost = -1;
    for (Value cand : op->getOperands()) {
      Layout l = layoutOf(cand);
      if (l.kind != Layout::Split)
        continue;
      const int64_t dim = l.axis + offset(cand);
      Decision d;
      int64_t cost = 0;
      bool ok = true;
      for (Value v : op->getOperands()) {
        Layout lv = layoutOf(v);
        bool keep = lv.kind == Layout::Split && lv.axis + offset(v) == dim;
        d.whole.push_back(!keep);
        if (keep)
          continue;
        if (extentAt(fullShape(v), dim - offset(v)) != 1)
          ok = false;
        if (lv.kind != Layout::Whole)
          cost += bytes(v);
      }
      if (ok && (bestCost < 0 || cost < bestCost)) {
        d.result = Layout::split(dim);
        best = d;
        bestCost = cost;
      }
    }
    return best;
  }

  Decision decideReduction(Operation *op) {
    Decision d = allWhole(op);
    Layout in = layoutOf(op->getOperand(0));
    auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
    auto keepdims = op->getAttrOfType<BoolAttr>("keepdims");
    const bool keep = keepdims && keepdims.getValue();
    if (in.kind == Layout::Partial) {
      // A sum of a partial sum is a partial sum.
      if (isa<SumOp>(op))
        d = {{false}, Layout::partial(), {}};
      return d;
    }
    if (in.kind != Layout::Split)
      return d;
    if (!llvm::is_contained(axes, in.axis)) {
      int64_t before = llvm::count_if(axes, [&](int64_t a) { return a < in.axis; });
      return {{false}, Layout::split(keep ? in.axis : in.axis - before), {}};
    }
    if (isa<SumOp>(op))
      return {{false}, Layout::partial(), {}};
    if (isa<MaxOp>(op))
      return {{false}, Layout::whole(), "max"};
    if (isa<MinOp>(op))
      return {{false}, Layout::whole(), "min"};
    return d;  // a mean over the split dim: over the whole value
  }

  /// A[.., M, K] x B[.., K, N] (both at least 2-D; NumPy batch broadcast).
  Decision decideMatmul(MatmulOp mm) {
    Decision d = allWhole(mm);
    Value lhs = mm.getLhs(), rhs = mm.getRhs();
    const int64_t rl = int64_t(shapeOf(lhs).size()), rr = int64_t(shapeOf(rhs).size());
    const int64_t ro = int64_t(shapeOf(mm.getResult()).size());
    if (rl < 2 || rr < 2)
      return d;
    Layout a = layoutOf(lhs), c = layoutOf(rhs);
    if (a.kind == Layout::Split && a.axis == rl - 1 && c.kind == Layout::Split &&
        c.axis == rr - 2)
      return {{false, false}, Layout::partial(), {}};
    // The result dim each operand's split maps to (-1: K, or not split).
    auto resultDim = [&](Layout l, int64_t rank, bool isLhs) -> int64_t {
      if (l.kind != Layout::Split)
        return -1;
      if (l.axis < rank - 2)
        return l.axis + ro - rank;
      if (isLhs)
        return l.axis == rank - 2 ? ro - 2 : -1;
      return l.axis == rank - 1 ? ro - 1 : -1;
    };
    // Whether the other operand (whole) has extent 1 or no dim at result dim `dim`.
    auto wholeFits = [&](Value other, int64_t rank, int64_t dim) {
      if (dim >= ro - 2)
        return true;  // M and N belong to one operand only
      return extentAt(fullShape(other), dim - (ro - rank)) == 1;
    };
    const int64_t da = resultDim(a, rl, true), dc = resultDim(c, rr, false);
    if (da >= 0 && da == dc)
      return {{false, false}, Layout::split(da), {}};
    // Keep the larger operand's split and gather the other, where that fits.
    struct Try { int64_t dim; bool keepLhs; };
    SmallVector<Try> tries;
    if (bytes(lhs) >= bytes(rhs))
      tries = {{da, true}, {dc, false}};
    else
      tries = {{dc, false}, {da, true}};
    for (Try t : tries) {
      if (t.dim < 0)
        continue;
      if (t.keepLhs ? wholeFits(rhs, rr, t.dim) : wholeFits(lhs, rl, t.dim))
        return {{!t.keepLhs, t.keepLhs}, Layout::split(t.dim), {}};
    }
    return d;
  }

  void apply(Operation *op, const Decision &d) {
    for (auto [i, whole] : llvm::enumerate(d.whole))
      if (whole)
        op->setOperand(unsigned(i), makeWhole(op->getOperand(unsigned(i))));
    if (op->getNumResults() != 1)
      return;
    Value result = op->getResult(0);
    if (d.result.kind == Layout::Split &&
        shapeOf(result)[size_t(d.result.axis)] % n != 0) {
      // The result cannot be split evenly: compute it whole instead.
      apply(op, allWhole(op));
      return;
    }
    if (auto s = dyn_cast<SliceOp>(op); s && d.result.kind == Layout::Split) {
      SmallVector<int64_t> limits(s.getLimits());
      limits[size_t(d.result.axis)] /= n;
      s.setLimits(limits);
    }
    result.setType(localType(result.getType(), d.result));
    layouts[result] = d.result;
    if (d.reduceAfter.empty())
      return;
    b.setInsertionPointAfter(op);
    auto reduced = b.create<AllReduceOp>(op->getLoc(), result.getType(), result,
                                         b.getStringAttr(d.reduceAfter), b.getI64IntegerAttr(n));
    result.replaceAllUsesExcept(reduced, reduced);
    layouts[result] = Layout::whole();
  }

  func::FuncOp func;
  int64_t n;
  OpBuilder b;
  llvm::DenseMap<Value, Layout> layouts;
  llvm::DenseMap<Value, Value> wholeOf;
};

struct PartitionPass : impl::FusecPartitionBase<PartitionPass> {
  using FusecPartitionBase::FusecPartitionBase;
  void runOnOperation() override {
    if (ranks <= 1)
      return;
    if (ranks > kMaxRanks) {
      getOperation().emitError() << "ranks must be at most " << kMaxRanks << ", got " << ranks;
      return signalPassFailure();
    }
    if (failed(Partitioner(getOperation(), ranks).run()))
      signalPassFailure();
  }
};

} // namespace
} // namespace fusec
