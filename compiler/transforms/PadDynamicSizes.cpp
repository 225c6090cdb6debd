//===- PadDynamicSizes.cpp - -fusec-pad-sizes -----------------------------===//
//
// A graph compiled at padded sizes runs at any size up to them: positions
// past a named size hold what the caller's padding left there (zeros for the
// inputs, which the runtime pads) and are dropped from the outputs. Ops that
// only move or map elements keep each position's value where it was, so
// they need nothing. Ops that combine positions along a padded dim must not
// see the padding: their operand is masked to the combination's identity
// where the position is past the size the call passes in.
//
// A dim may merge the size with fixed dims (batch * S after a reshape that
// flattens them). Positions keep their place through every op, and a
// reshape keeps each element's linear position, so the size's index is
// followed by its stride in memory: in a dim of a value, it steps by `w`
// elements of the dim (1 for a dim that is the size alone). Nothing combines
// along a merged dim; inputs and outputs have the size alone.
//
//===----------------------------------------------------------------------===//
#include "compiler/dialect/FusecDialect.h"
#include "compiler/dialect/TypedBuilders.h"
#include "compiler/transforms/Passes.h"
#include "compiler/transforms/SizeDims.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>
#include <map>

#define DEBUG_TYPE "fusec-pad-sizes"

namespace fusec {
#define GEN_PASS_DEF_FUSECPADSIZES
#include "compiler/transforms/Passes.h.inc"
} // namespace fusec

using namespace mlir;

namespace fusec {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The lowest (highest) value of an element type: what max (min) ignores.
double lowestOf(Type elt, bool highest) {
  if (auto it = dyn_cast<IntegerType>(elt); it && it.getWidth() > 1) {
    double bound = std::ldexp(1.0, int(it.getWidth()) - 1);
    return highest ? bound - 1 : -bound;
  }
  return highest ? kInf : -kInf;
}

class Padder {
public:
  explicit Padder(func::FuncOp f) : f(f) {}

  LogicalResult run() {
    if (auto padded = f->getAttrOfType<DictionaryAttr>(kPaddedSizesAttr))
      for (NamedAttribute a : padded)
        if (auto i = dyn_cast<IntegerAttr>(a.getValue()))
          paddedSize[a.getName().str()] = i.getInt();
    for (unsigned i = 0; i < f.getNumArguments(); ++i) {
      if (marked(f.getArgument(i)) && f.getArgAttr(i, "fusec.parameter"))
        return f.emitError() << "parameter " << i << " has a padded size among its dims; "
                             << "weights are bound at one shape for every size";
      if (marked(f.getArgument(i)))
        zero.insert(f.getArgument(i));  // the runtime pads inputs with zeros
      for (int64_t d : markedAxes(f.getArgument(i)))
        if (merged(f.getArgument(i), d) || tail(f.getArgument(i), d))
          return f.emitError() << "input " << i << " merges a padded size with other dims in dim "
                               << d << "; an input has the padded size as a dim of its own";
    }
    SmallVector<Operation *> ops;
    for (Operation &op : f.getBody().front().without_terminator())
      ops.push_back(&op);
    for (Operation *op : ops)
      if (failed(visit(op)))
        return failure();
    Operation *ret = f.getBody().front().getTerminator();
    for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
      for (int64_t d : markedAxes(v))
        if (merged(v, d) || tail(v, d))
          return f.emitError() << "output " << i << " merges a padded size with other dims in dim "
                               << d << "; return the padded size as a dim of its own";
      f.setResultAttr(i, kSizeDimsAttr, dimsAttr(sizeDimsOf(v)));
    }
    f.walk([](Operation *op) { op->removeAttr(kSizeDimsAttr); });
    return success();
  }

private:
  ArrayAttr dimsAttr(ArrayRef<StringRef> dims) {
    SmallVector<Attribute> out;
    for (StringRef d : dims)
      out.push_back(StringAttr::get(f.getContext(), d));
    return ArrayAttr::get(f.getContext(), out);
  }
  void mark(Value v, ArrayRef<StringRef> dims) {
    v.getDefiningOp()->setAttr(kSizeDimsAttr,
                               ArrayAttr::get(f.getContext(), {dimsAttr(dims)}));
  }
  static bool marked(Value v) {
    return llvm::any_of(sizeDimsOf(v), [](StringRef d) { return !d.empty(); });
  }
  static SmallVector<int64_t> markedAxes(Value v) {
    SmallVector<int64_t> out;
    for (auto [i, d] : llvm::enumerate(sizeDimsOf(v)))
      if (!d.empty())
        out.push_back(i);
    return out;
  }

  /// The fixed positions that follow the size in dim `d` of `v` (a cache of
  /// S rows joined with this step's: "S+1"), 0 for none.
  static int64_t tail(Value v, int64_t d) { return splitMark(sizeDimsOf(v)[d]).second; }

  /// Whether dim `d` of `v` merges its size with fixed dims.
  bool merged(Value v, int64_t d) {
    StringRef name = sizeDimsOf(v)[d];
    auto it = paddedSize.find(name.str());
    return !name.empty() && it != paddedSize.end() && shapeOf(v)[d] != it->second;
  }

  /// How many elements of dim `d` of `v` one step of its size's index
  /// spans (1 where the dim is the size alone); 0 where unknown. Positions
  /// keep their place through every op but reshape: a dim of the same size
  /// and mark in an operand spans the same. Operands are visited first
  /// (visit() asks for every result as it comes), so one level suffices.
  int64_t step(Value v, int64_t d) {
    if (!merged(v, d))
      return 1;
    if (auto it = steps.find({v, d}); it != steps.end())
      return it->second;
    Operation *def = v.getDefiningOp();
    int64_t found = 0;
    bool conflict = false;
    if (def && !isa<ReshapeOp>(def))
      for (Value o : def->getOperands()) {
        SmallVector<StringRef> dims = sizeDimsOf(o);
        for (size_t e = 0; e < dims.size(); ++e) {
          if (dims[e] != sizeDimsOf(v)[d] || shapeOf(o)[e] != shapeOf(v)[d])
            continue;
          auto known = steps.find({o, int64_t(e)});
          int64_t w = !merged(o, e) ? 1 : known == steps.end() ? 0 : known->second;
          conflict |= w == 0 || (found && found != w);
          found = w;
        }
      }
    if (conflict)
      found = 0;
    steps[{v, d}] = found;
    return found;
  }

  /// Refuses an op that combines positions along a merged dim of `v`.
  LogicalResult pureAlong(Operation *op, Value v, ArrayRef<int64_t> axes) {
    for (int64_t a : axes)
      if (merged(v, a))
        return refuse(op, "it combines along a dim that merges a padded size with others");
    return success();
  }

  LogicalResult refuse(Operation *op, const std::string &why) {
    return op->emitError() << paddingNodeLabel(op) << ": " << why
                           << "; a size it depends on so cannot be padded: bind it to one size";
  }

  /// The size argument of `name` (an i32 scalar the call passes).
  Value sizeArg(StringRef name) {
    auto it = sizes.find(name.str());
    if (it != sizes.end())
      return it->second;
    unsigned n = f.getNumArguments();
    MLIRContext *ctx = f.getContext();
    NamedAttribute attrs[] = {
        NamedAttribute(StringAttr::get(ctx, "fusec.name"),
                       StringAttr::get(ctx, "fusec.size." + name.str())),
        NamedAttribute(StringAttr::get(ctx, kSizeArgAttr), StringAttr::get(ctx, name))};
    f.insertArgument(n, RankedTensorType::get({}, IntegerType::get(ctx, 32)),
                     DictionaryAttr::get(ctx, attrs), f.getLoc());
    Value v = f.getArgument(n);
    sizes[name.str()] = v;
    return v;
  }

  /// Whether position i along `axis` of a value of `rank` dims is within
  /// the size of mark `m`, [1, .., dim, .., 1]: lt(iota, size); for a dim of
  /// the size followed by k fixed positions, or i >= dim - k as well.
  Value within(OpBuilder &b, Location loc, StringRef m, int64_t rank, int64_t axis,
               int64_t dim) {
    TypedBuilder tb(b, loc);
    SmallVector<int64_t> shape(rank, 1);
    shape[axis] = dim;
    SmallVector<StringRef> dims(rank, "");
    dims[axis] = m;
    auto [name, k] = splitMark(m);
    Value iota = tb.iota(axis, b.getI32Type(), shape);
    mark(iota, dims);
    Value in = tb.compare<LtOp>(iota, sizeArg(name));
    mark(in, dims);
    if (k > 0) {
      Value after = tb.compare<GeOp>(iota, tb.constant(double(dim - k), b.getI32Type()));
      mark(after, dims);
      in = tb.where(in, in, after);  // in or after
      mark(in, dims);
    }
    return in;
  }

  /// `x` with the positions past the size along `axes` (those of them that
  /// are padded) set to `identity`.
  Value mask(Operation *at, Value x, ArrayRef<int64_t> axes, double identity) {
    OpBuilder b(at);
    TypedBuilder tb(b, at->getLoc());
    SmallVector<StringRef> dims = sizeDimsOf(x);
    SmallVector<int64_t> done;
    for (int64_t a : axes) {
      if (dims[a].empty())
        continue;
      Value in = within(b, at->getLoc(), dims[a], dims.size(), a, shapeOf(x)[a]);
      Type elt = cast<RankedTensorType>(x.getType()).getElementType();
      x = tb.where(in, x, tb.constant(identity, elt));
      mark(x, dims);
      done.push_back(a);
    }
    if (identity == 0 && llvm::all_of(markedAxes(x), [&](int64_t a) {
          return llvm::is_contained(done, a);
        }))
      zero.insert(x);
    return x;
  }

  /// The padded axes of `axes`, those that `v` has marked.
  static SmallVector<int64_t> paddedOf(Value v, ArrayRef<int64_t> axes) {
    SmallVector<StringRef> dims = sizeDimsOf(v);
    SmallVector<int64_t> out;
    for (int64_t a : axes)
      if (!dims[a].empty())
        out.push_back(a);
    return out;
  }

  LogicalResult visit(Operation *op) {
    bool touched = llvm::any_of(op->getOperands(), marked) ||
                   llvm::any_of(op->getResults(), marked);
    if (!touched)
      return success();
    if (!isa<ReshapeOp>(op))  // a reshape finds its own (reshape())
      for (Value r : op->getResults())
        for (int64_t d : markedAxes(r))
          (void)step(r, d);
    return llvm::TypeSwitch<Operation *, LogicalResult>(op)
        .Case<SumOp, MaxOp, MinOp>([&](auto r) { return reduction(r, r.getAxes()); })
        .Case<MeanOp>([&](MeanOp r) { return mean(r); })
        .Case<ArgMaxOp>([&](ArgMaxOp r) {
          Value x = r.getInput();
          if (failed(pureAlong(r, x, {int64_t(r.getAxis())})))
            return failure();
          if (tail(x, r.getAxis()))
            return refuse(r, "its index along a padded dim with fixed positions after it moves "
                             "with the padding");
          r->setOperand(0, mask(r, x, {int64_t(r.getAxis())}, lowestOf(elementOf(x), false)));
          return success();
        })
        .Case<SoftmaxOp, LogSoftmaxOp>([&](auto s) {
          Value x = s.getInput();
          if (failed(pureAlong(s, x, {int64_t(s.getAxis())})))
            return failure();
          bool only = markedAxes(x) == SmallVector<int64_t>{int64_t(s.getAxis())};
          s->setOperand(0, mask(s, x, {int64_t(s.getAxis())}, -kInf));
          if (only && isa<SoftmaxOp>(s.getOperation()))
            zero.insert(s.getResult());
          return success();
        })
        .Case<LayerNormOp>([&](LayerNormOp n) {
          for (int64_t a : markedAxes(n.getInput()))
            if (a >= int64_t(n.getAxis()))
              return refuse(n, "it normalizes over a padded dim");
          // A row of zeros stays zeros: (0 - 0) * rsqrt(0 + eps) * w, with no bias.
          if (zero.contains(n.getInput()) && !n.getBias() && n.getEps().convertToDouble() > 0)
            zero.insert(n.getResult());
          return success();
        })
        .Case<RmsNormOp>([&](RmsNormOp n) {
          if (!sizeDimsOf(n.getInput()).back().empty())
            return refuse(n, "it normalizes over a padded dim");
          if (zero.contains(n.getInput()) && n.getEps().convertToDouble() > 0)  // 0 * rsqrt(0 + eps) * w
            zero.insert(n.getResult());
          return success();
        })
        .Case<MatmulOp>([&](MatmulOp m) { return matmul(m); })
        .Case<LinearOp>([&](LinearOp l) {
          if (!sizeDimsOf(l.getWeight()).back().empty() ||
              !sizeDimsOf(l.getInput()).back().empty())
            return refuse(l, "its contraction dim is padded");
          // Rows of zeros times the weight are zeros, with no bias.
          if (zero.contains(l.getInput()) && !l.getBias() && !marked(l.getWeight()))
            zero.insert(l.getResult());
          return success();
        })
        .Case<AttentionOp>([&](AttentionOp a) { return attention(a); })
        .Case<ReshapeOp>([&](ReshapeOp r) { return reshape(r); })
        .Case<SliceOp>([&](SliceOp s) { return slice(s); })
        .Case<ConcatOp>([&](ConcatOp c) { return concat(c); })
        .Case<GatherOp>([&](GatherOp g) {
          if (!sizeDimsOf(g.getData())[g.getAxis()].empty())
            return refuse(g, "it picks along a padded dim");
          return success();
        })
        .Case<TopKOp>([&](TopKOp t) {
          if (!sizeDimsOf(t.getInput())[t.getAxis()].empty())
            return refuse(t, "it ranks along a padded dim");
          return success();
        })
        .Case<AllGatherOp, ReduceScatterOp>([&](auto c) {
          if (!sizeDimsOf(c.getInput())[c.getAxis()].empty())
            return refuse(c, "its ranks' blocks join along a padded dim");
          return success();
        })
        .Case<TransposeOp>([&](TransposeOp t) {
          if (zero.contains(t.getInput()))
            zero.insert(t.getResult());
          return success();
        })
        .Case<BroadcastToOp>([&](BroadcastToOp t) {
          if (zero.contains(t.getInput()) &&
              markedAxes(t.getResult()).size() == markedAxes(t.getInput()).size())
            zero.insert(t.getResult());
          return success();
        })
        .Case<MulOp>([&](MulOp m) {
          // 0 times a padded value that is not a number is not 0: every
          // operand zero there, or without padded dims. A factor without
          // padded dims that is not finite (an inf weight, an f16
          // overflow) makes the padding NaN, where the reference's result
          // along that column is already not finite (inf or NaN: its real
          // rows meet the same factor); docs/graph-format.md says so.
          bool one = false, rest = true;
          for (Value v : m->getOperands()) {
            one |= zero.contains(v) && markedAxes(v) == markedAxes(m.getResult());
            rest &= zero.contains(v) || !marked(v);
          }
          if (one && rest)
            zero.insert(m.getResult());
          return success();
        })
        .Case<NegOp, ReluOp, CastOp, TanhOp, SinOp, SiluOp, GeluOp, ErfOp, AbsOp, SqrtOp>(
            [&](Operation *u) {
              if (zero.contains(u->getOperand(0)))
                zero.insert(u->getResult(0));
              return success();
            })
        .Case<AllReduceOp>([&](auto) { return success(); })
        .Default([&](Operation *o) {
          if (isElementwise(o))
            return success();
          return refuse(o, "fusec does not know how it treats a padded dim");
        });
  }

  static Type elementOf(Value v) { return cast<RankedTensorType>(v.getType()).getElementType(); }

  template <class R> LogicalResult reduction(R r, ArrayRef<int64_t> axes) {
    Value x = r.getInput();
    if (failed(pureAlong(r, x, axes)))
      return failure();
    double identity = 0;
    if (isa<MaxOp>(r.getOperation()))
      identity = lowestOf(elementOf(x), false);
    else if (isa<MinOp>(r.getOperation()))
      identity = lowestOf(elementOf(x), true);
    if (paddedOf(x, axes).empty() || (identity == 0 && zero.contains(x)))
      return success();
    r->setOperand(0, mask(r, x, axes, identity));
    return success();
  }

  /// Along a padded dim, the first operand's padded rows followed by the
  /// others' fixed ones ("S+k": a cache joined with this step's rows); the
  /// padding stays where the first operand had it.
  LogicalResult concat(ConcatOp c) {
    const int64_t a = c.getAxis();
    StringRef first = sizeDimsOf(c.getInputs().front())[a];
    bool rest = llvm::all_of(c.getInputs().drop_front(),
                             [&](Value v) { return sizeDimsOf(v)[a].empty(); });
    if (first.empty() && rest && sizeDimsOf(c.getResult())[a].empty())
      return success();
    if (first.empty() || merged(c.getInputs().front(), a) || tail(c.getInputs().front(), a) ||
        !rest || splitMark(sizeDimsOf(c.getResult())[a]).first != first)
      return refuse(c, "it joins along a padded dim other than after its first operand's");
    if (llvm::all_of(c.getInputs(), [&](Value v) { return zero.contains(v) || !marked(v); }) &&
        zero.contains(c.getInputs().front()))
      zero.insert(c.getResult());
    return success();
  }

  /// mean = sum / count, the count of the positions within the sizes.
  LogicalResult mean(MeanOp r) {
    Value x = r.getInput();
    if (failed(pureAlong(r, x, r.getAxes())))
      return failure();
    for (int64_t ax : r.getAxes())
      if (tail(x, ax))
        return refuse(r, "it averages a dim of a padded size and fixed positions");
    SmallVector<int64_t> padded = paddedOf(x, r.getAxes());
    if (padded.empty())
      return success();
    if (!isa<FloatType>(elementOf(x)))
      return refuse(r, "it averages integers over a padded dim");
    OpBuilder b(r);
    TypedBuilder tb(b, r.getLoc());
    Value masked = zero.contains(x) ? x : mask(r, x, r.getAxes(), 0);
    // Summed and divided in fp32 (16-bit inputs cast up first), so within
    // an ulp of the reference's mean (one sum in double, rounded once).
    Type elt = elementOf(x);
    if (!elt.isF32() && !elt.isF64()) {
      masked = tb.cast(masked, b.getF32Type());
      mark(masked, sizeDimsOf(x));
    }
    Value sum = tb.reduce<SumOp>(masked, r.getAxes(), r.getKeepdims());
    mark(sum, sizeDimsOf(r.getResult()));
    double fixed = 1;
    SmallVector<StringRef> dims = sizeDimsOf(x);
    for (int64_t a : r.getAxes())
      if (dims[a].empty())
        fixed *= shapeOf(x)[a];
    Value count = tb.constant(fixed, b.getF32Type());
    for (int64_t a : padded)
      count = tb.binary<MulOp>(count, tb.cast(sizeArg(dims[a]), b.getF32Type()));
    Value avg = tb.binary<DivOp>(sum, tb.cast(count, elementOf(sum)));
    mark(avg, sizeDimsOf(r.getResult()));
    if (elementOf(avg) != elt) {
      avg = tb.cast(avg, elt);
      mark(avg, sizeDimsOf(r.getResult()));
    }
    r.getResult().replaceAllUsesWith(avg);
    r.erase();
    return success();
  }

  LogicalResult matmul(MatmulOp m) {
    Value lhs = m.getLhs(), rhs = m.getRhs();
    int64_t lk = shapeOf(lhs).size() - 1, rk = int64_t(shapeOf(rhs).size()) - 2;
    if (rk < 0) {
      // A vector on the right: the contraction is A's last dim and the
      // vector's only one. Rows of A padded with zeros give zeros.
      if (!sizeDimsOf(lhs)[lk].empty() || marked(rhs))
        return refuse(m, "it contracts a padded dim with a vector");
      if (zero.contains(lhs))
        zero.insert(m.getResult());
      return success();
    }
    bool padded = !sizeDimsOf(lhs)[lk].empty() || !sizeDimsOf(rhs)[rk].empty();
    if (!padded) {
      // Padded rows (or batch entries) of zeros give zeros, where every
      // padded dim of the product is one of the left operand's.
      Value r = m.getResult();
      int64_t rank = shapeOf(r).size(), lrank = shapeOf(lhs).size();
      bool fromLhs = zero.contains(lhs) && (zero.contains(rhs) || !marked(rhs));
      for (int64_t a : markedAxes(r)) {
        int64_t la = a - (rank - lrank);
        fromLhs &= a != rank - 1 && la >= 0 && sizeDimsOf(lhs)[la] == sizeDimsOf(r)[a];
      }
      if (fromLhs)
        zero.insert(r);
      return success();
    }
    if (failed(pureAlong(m, lhs, {lk})) || failed(pureAlong(m, rhs, {rk})))
      return failure();
    if (!zero.contains(lhs))
      m->setOperand(0, mask(m, lhs, {lk}, 0));
    if (!zero.contains(rhs))
      m->setOperand(1, mask(m, rhs, {rk}, 0));
    return success();
  }

  LogicalResult attention(AttentionOp a) {
    Value q = a.getQuery(), k = a.getKey(), v = a.getValue();
    int64_t rank = shapeOf(q).size(), kr = shapeOf(k).size(), vr = shapeOf(v).size();
    StringRef keys = sizeDimsOf(k)[kr - 2];
    if (!sizeDimsOf(q).back().empty() || !sizeDimsOf(k).back().empty())
      return refuse(a, "its head dim is padded");
    if (sizeDimsOf(v)[vr - 2] != keys)
      return refuse(a, "its keys and values are padded differently");
    if (keys.empty())
      return success();
    if (failed(pureAlong(a, k, {kr - 2})) || failed(pureAlong(a, v, {vr - 2})))
      return failure();
    // Causal attention over its own padded queries never reaches a key past
    // the size from a query within it; otherwise the keys are masked.
    if (a.getCausal() && tail(k, kr - 2))
      return refuse(a, "it is causal over keys with fixed positions after the padded ones");
    Value maskArg = a.getMask();
    bool selfCausal = a.getCausal() && sizeDimsOf(q)[rank - 2] == keys &&
                      shapeOf(q)[rank - 2] == shapeOf(k)[kr - 2] && !tail(k, kr - 2);
    OpBuilder b(a);
    TypedBuilder tb(b, a.getLoc());
    if (!selfCausal) {
      Value in = within(b, a.getLoc(), keys, rank, rank - 1, shapeOf(k)[kr - 2]);
      if (!maskArg) {
        maskArg = in;
      } else {
        Type elt = elementOf(maskArg);
        bool boolean = elt.isSignlessInteger(1);
        maskArg = tb.where(in, maskArg, tb.constant(boolean ? 0.0 : -kInf, elt));
        mark(maskArg, sizeDimsOf(maskArg));
        // An added mask does not replace a score that is not a number
        // (NaN + -inf): the keys are zeroed past the size too.
        if (!boolean && !zero.contains(k))
          k = mask(a, k, {kr - 2}, 0);
      }
    }
    // A masked key's weight is 0, and 0 times a padded value that is not a
    // number would still spoil the sum: the values are zeroed there.
    Value vz = zero.contains(v) ? v : mask(a, v, {vr - 2}, 0);
    auto fresh = b.create<AttentionOp>(a.getLoc(), a.getType(), q, k, vz, maskArg,
                                       a.getCausalAttr(), a.getScaleAttr());
    fresh->setAttrs(a->getAttrDictionary());
    a.getResult().replaceAllUsesWith(fresh.getResult());
    a.erase();
    return success();
  }

  /// A reshape keeps each element's linear position: the size's index
  /// steps by the same count of elements in memory on both sides, and lies
  /// whole within one dim of the result.
  LogicalResult reshape(ReshapeOp r) {
    Value in = r.getInput(), out = r.getResult();
    ArrayRef<int64_t> si = shapeOf(in), so = shapeOf(out);
    if (llvm::is_contained(si, 0) || llvm::is_contained(so, 0))
      return success();  // no elements: no positions to keep
    SmallVector<StringRef> din = sizeDimsOf(in), dout = sizeDimsOf(out);
    auto inner = [](ArrayRef<int64_t> s, size_t a) {
      int64_t n = 1;
      for (size_t i = a + 1; i < s.size(); ++i)
        n *= s[i];
      return n;
    };
    SmallVector<bool> matched(so.size(), false);
    for (size_t a = 0; a < si.size(); ++a) {
      if (din[a].empty())
        continue;
      int64_t w = step(in, a);
      if (w == 0)
        return refuse(r, "where the padded size lies in its dim " + std::to_string(a) +
                             " is not known");
      auto it = paddedSize.find(din[a].str());
      const int64_t padded = it == paddedSize.end() ? si[a] : it->second;
      const int64_t stride = w * inner(si, a);
      bool kept = false;
      for (size_t o = 0; o < so.size() && !kept; ++o) {
        if (dout[o] != din[a] || matched[o] || stride % inner(so, o) != 0)
          continue;
        int64_t wo = stride / inner(so, o);
        if (so[o] % (wo * padded) != 0 || (!merged(out, o) && wo != 1))
          continue;
        matched[o] = kept = true;
        steps[{out, int64_t(o)}] = wo;
      }
      if (!kept)
        return refuse(r, "it splits padded dim " + std::to_string(a) + " across dims");
    }
    for (size_t o = 0; o < so.size(); ++o)
      if (!dout[o].empty() && !matched[o])
        return refuse(r, "it makes a padded dim of fixed ones");
    if (zero.contains(in))
      zero.insert(out);
    return success();
  }

  LogicalResult slice(SliceOp s) {
    SmallVector<StringRef> din = sizeDimsOf(s.getInput()), dout = sizeDimsOf(s.getResult());
    ArrayRef<int64_t> starts = s.getStarts(), limits = s.getLimits(), steps = s.getSteps();
    for (size_t a = 0; a < din.size(); ++a) {
      if (din[a].empty())
        continue;  // a fixed dim read up to the size: real data throughout
      if (merged(s.getInput(), a) && shapeOf(s.getInput())[a] != shapeOf(s.getResult())[a])
        return refuse(s, "it cuts a dim that merges a padded size with others");
      if (!dout[a].empty() && (starts[a] != 0 || steps[a] != 1))
        return refuse(s, "it starts past 0 along a padded dim");
      if (dout[a].empty() && limits[a] > 1)
        return refuse(s, "it reads fixed positions of a padded dim past the first");
    }
    // Zeros carry only where every padded dim of the result was padded in
    // the input (a fixed table cut to S rows holds real rows past S).
    bool kept = true;
    for (int64_t a : markedAxes(s.getResult()))
      kept &= !din[a].empty();
    if (zero.contains(s.getInput()) && kept)
      zero.insert(s.getResult());
    return success();
  }

  func::FuncOp f;
  std::map<std::string, int64_t> paddedSize;  ///< kPaddedSizesAttr
  llvm::DenseMap<std::pair<Value, int64_t>, int64_t> steps;  ///< step()'s, and reshapes'
  llvm::DenseSet<Value> zero;  ///< values that are 0 at every padded position
  std::map<std::string, Value> sizes;
};

struct PadSizesPass : impl::FusecPadSizesBase<PadSizesPass> {
  void runOnOperation() override {
    if (failed(Padder(getOperation()).run()))
      signalPassFailure();
  }
};

} // namespace
} // namespace fusec
