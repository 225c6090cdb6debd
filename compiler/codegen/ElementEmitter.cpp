//===- ElementEmitter.cpp - C++ statements computing one element ----------===//
#include "compiler/codegen/ElementEmitter.h"

#include "compiler/codegen/ScalarOps.h"
#include "compiler/cost/CostModel.h"
#include "compiler/shape/ShapeRules.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

using namespace mlir;

namespace fusec::codegen {

namespace {
std::vector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = (int)shape.size() - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// Whether a reshape only inserts or removes size-1 dims.
bool onlyUnitDims(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  SmallVector<int64_t> x, y;
  for (int64_t d : a)
    if (d != 1)
      x.push_back(d);
  for (int64_t d : b)
    if (d != 1)
      y.push_back(d);
  return x == y;
}
} // namespace

ElementEmitter::ElementEmitter(FusionOp fusion, std::vector<std::string> domVars,
                               std::string indent)
    : domVars(std::move(domVars)), indentStr(std::move(indent)) {
  int id = 0;
  for (BlockArgument a : fusion.getBodyBlock().getArguments())
    valueIds[a] = id++;
  for (Operation &op : fusion.getBodyBlock())
    for (Value r : op.getResults())
      valueIds[r] = id++;
  load = [](ElementEmitter &e, BlockArgument arg, const Index &idx) {
    return "fz_load1(" + argName(arg.getArgNumber()) + ", " + e.offset(shapeOf(arg), idx) +
           ")";
  };
}

std::string ElementEmitter::takeCode() {
  std::string c = std::move(code);
  code.clear();
  return c;
}

Index ElementEmitter::identity(size_t rank) {
  Index idx;
  for (size_t d = 0; d < rank; ++d)
    idx.push_back(IndexExpr::domain(d));
  return idx;
}

Index ElementEmitter::project(const Index &idx, ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  Index out;
  size_t off = from.size() - to.size();
  for (size_t j = 0; j < to.size(); ++j)
    out.push_back(to[j] == 1 && from[off + j] != 1 ? IndexExpr::constant(0) : idx[off + j]);
  return out;
}

std::string ElementEmitter::render(const IndexExpr &e) const {
  if (!e.text.empty())
    return e.text;
  if (e.dom < 0)
    return std::to_string(e.add);
  std::string s = domVars[e.dom];
  if (e.mul != 1)
    s = "(" + s + " * " + std::to_string(e.mul) + ")";
  if (e.add != 0)
    s = "(" + s + " + " + std::to_string(e.add) + ")";
  return s;
}

std::string ElementEmitter::offset(ArrayRef<int64_t> shape, const Index &idx) const {
  std::vector<int64_t> strides = stridesOf(shape);
  std::string s;
  int64_t constant = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1)
      continue;
    const IndexExpr &e = idx[d];
    if (e.text.empty() && e.dom < 0) {
      constant += e.add * strides[d];
      continue;
    }
    std::string term = render(e);
    if (strides[d] != 1)
      term += " * " + std::to_string(strides[d]);
    s += (s.empty() ? "" : " + ") + term;
  }
  if (constant != 0 || s.empty())
    s += (s.empty() ? "" : " + ") + std::to_string(constant);
  return "(" + s + ")";
}

std::optional<int64_t> ElementEmitter::coefficient(ArrayRef<int64_t> shape, const Index &idx,
                                                   int d) const {
  std::vector<int64_t> strides = stridesOf(shape);
  int64_t c = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1)
      continue;
    if (!idx[i].text.empty())
      return std::nullopt;
    if (idx[i].dom == d)
      c += idx[i].mul * strides[i];
  }
  return c;
}

bool ElementEmitter::vectorizable(ArrayRef<int64_t> shape, const Index &idx, int d,
                                  int64_t vec) const {
  std::vector<int64_t> strides = stridesOf(shape);
  int64_t along = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1)
      continue;
    const IndexExpr &e = idx[i];
    if (!e.text.empty())
      return false;
    int64_t coef = e.mul * strides[i];
    // A vector starts at a multiple of `vec` along d: where the tensor's
    // extent there is not one, the last vector would read past its end.
    if (e.dom == d && shape[i] % vec != 0)
      return false;
    if (e.dom == d)
      along += coef;
    else if (e.dom >= 0 && coef % vec != 0)
      return false;
    if ((e.add * strides[i]) % vec != 0)
      return false;
  }
  return along == 1;
}

std::string ElementEmitter::offsetAt(ArrayRef<int64_t> shape, const Index &idx, int d,
                                     const std::string &base) const {
  ElementEmitter &self = const_cast<ElementEmitter &>(*this);
  std::string saved = self.domVars[d];
  self.domVars[d] = base;
  std::string s = offset(shape, idx);
  self.domVars[d] = saved;
  return s;
}

std::string ElementEmitter::key(Value v, const Index &idx) {
  std::string k = "v" + std::to_string(valueIds.lookup(v)) + "@";
  for (const IndexExpr &e : idx)
    k += render(e) + ",";
  return k;
}

std::string ElementEmitter::emit(Value v, const Index &idx) {
  std::string k = key(v, idx);
  if (auto it = memo.find(k); it != memo.end())
    return it->second;
  if (known)
    if (std::optional<std::string> held = known(*this, v, idx))
      return memo[k] = *held;
  std::string expr;
  if (auto arg = dyn_cast<BlockArgument>(v))
    expr = load(*this, arg, idx);
  else
    expr = emitOp(v.getDefiningOp(), v, idx);
  // Name every value so later uses (and readers) see one variable per element.
  std::string name = fresh("v");
  line("const " + std::string(computeType(dtypeOf(v))) + " " + name + " = " + expr + ";");
  memo[k] = name;
  return name;
}

std::string ElementEmitter::emitOp(Operation *op, Value v, const Index &idx) {
  if (isView(op))
    return emitView(op, idx);
  if (auto c = dyn_cast<ConstantOp>(op))
    return literal(c.getValue().convertToDouble(), dtypeOf(v));
  if (auto io = dyn_cast<IotaOp>(op))
    return "((" + std::string(computeType(dtypeOf(v))) + ")(" + render(idx[io.getDim()]) + "))";
  if (auto cat = dyn_cast<ConcatOp>(op))
    return emitConcat(cat, idx);
  if (auto g = dyn_cast<GatherOp>(op))
    return emitGather(g, idx);
  if (isa<SumOp, MeanOp, MaxOp, MinOp, MatmulOp>(op))
    return reduced(op);
  // The all-reduce a row kernel begins with: by the rows, its operand's
  // name points at the reduced tensor (RowReductionKernel.cpp).
  if (isa<AllReduceOp>(op))
    return emit(op->getOperand(0), idx);
  // Same precision as the fast division 16-bit results take (ScalarOps.cpp):
  // both are a multiplication by an approximate reciprocal.
  DType t = dtypeOf(v);
  if (isa<DivOp>(op) && reciprocal && (t == DType::BF16 || t == DType::F16))
    if (std::optional<std::string> r = reciprocal(op->getOperand(1)))
      return "(" + emit(op->getOperand(0), project(idx, shapeOf(v), shapeOf(op->getOperand(0)))) +
             " * " + *r + ")";
  std::vector<std::string> operands;
  for (Value o : op->getOperands())
    operands.push_back(emit(o, project(idx, shapeOf(v), shapeOf(o))));
  return scalarExpr(op, operands);
}

std::string ElementEmitter::emitView(Operation *op, const Index &idx) {
  Value in = op->getOperand(0);
  ArrayRef<int64_t> from = shapeOf(op->getResult(0)), to = shapeOf(in);
  Index sub;
  if (auto t = dyn_cast<TransposeOp>(op)) {
    sub.resize(to.size());
    for (size_t i = 0; i < t.getPerm().size(); ++i)
      sub[t.getPerm()[i]] = idx[i];
  } else if (isa<BroadcastToOp>(op)) {
    sub = project(idx, from, to);
  } else if (auto s = dyn_cast<SliceOp>(op)) {
    for (size_t d = 0; d < to.size(); ++d) {
      IndexExpr e = idx[d];
      int64_t step = s.getSteps()[d], start = s.getStarts()[d];
      if (!e.text.empty())
        e.text = "(" + e.text + " * " + std::to_string(step) + " + " + std::to_string(start) + ")";
      else
        e = {e.dom, e.mul * step, e.add * step + start, {}};
      sub.push_back(e);
    }
  } else if (onlyUnitDims(from, to)) {
    // Keep the non-unit dims in order; unit dims index 0.
    size_t j = 0;
    for (int64_t d : to) {
      while (j < from.size() && from[j] == 1)
        ++j;
      sub.push_back(d == 1 ? IndexExpr::constant(0) : idx[j++]);
    }
  } else {
    // General reshape. Row-major, so the dims of both shapes fall into groups
    // of equal element counts (shape::reshapeGroups). A dim alone on both
    // sides keeps its index (and its affine form, which vector access needs);
    // otherwise the group's indices are linearized and split again, in 32
    // bits when the tensor allows (a 64-bit division by a constant is several
    // times the instructions, and these run per element). No element (a
    // zero-size dim): no group, no index is ever evaluated.
    sub.resize(to.size(), IndexExpr::constant(0));
    const char *type = narrowIndex(from) ? "const int " : "const long long ";
    for (const shape::ReshapeGroup &g : shape::reshapeGroups(from, to)) {
      const size_t i0 = g.aBegin, i = g.aEnd, j0 = g.bBegin, j = g.bEnd;
      std::vector<size_t> fd, td;
      for (size_t d = i0; d < i; ++d)
        if (from[d] != 1)
          fd.push_back(d);
      for (size_t d = j0; d < j; ++d)
        td.push_back(d);
      if (fd.size() == 1 && std::count_if(td.begin(), td.end(), [&](size_t d) { return to[d] != 1; }) == 1) {
        for (size_t d : td)
          if (to[d] != 1)  // unit dims keep index 0
            sub[d] = idx[fd[0]];
        continue;
      }
      std::string lin;
      if (fd.size() == 1 && idx[fd[0]].text.empty() && idx[fd[0]].dom >= 0 &&
          idx[fd[0]].mul == 1 && idx[fd[0]].add == 0) {
        lin = render(idx[fd[0]]);
      } else if (!fd.empty()) {
        std::vector<int64_t> shape;
        Index part;
        for (size_t d : fd) {
          shape.push_back(from[d]);
          part.push_back(idx[d]);
        }
        lin = fresh("t");
        line(type + lin + " = " + offset(shape, part) + ";");
      }
      int64_t pt = 1;  // the group's element count
      for (size_t d : td)
        pt *= to[d];
      int64_t stride = pt;
      for (size_t d : td) {
        stride /= to[d];
        if (to[d] == 1 || lin.empty())
          continue;  // index 0
        IndexExpr e;
        std::string q = stride == 1 ? lin : "(" + lin + " / " + std::to_string(stride) + ")";
        e.text = stride * to[d] == pt ? q : "(" + q + " % " + std::to_string(to[d]) + ")";
        sub[d] = e;
      }
    }
  }
  return emit(in, sub);
}

bool ElementEmitter::isIdentity(const Index &idx) {
  for (size_t d = 0; d < idx.size(); ++d)
    if (!idx[d].text.empty() || idx[d].dom != (int)d || idx[d].mul != 1 || idx[d].add != 0)
      return false;
  return true;
}

bool ElementEmitter::narrowIndex(llvm::ArrayRef<int64_t> shape) {
  // Headroom as the kernels' fz_idx (indexType): offsets a little past the end.
  return shape::numElements(shape) < (int64_t(1) << 30);
}

std::string ElementEmitter::emitGather(GatherOp op, const Index &idx) {
  // The index tensor at the result's index dims, made non-negative and
  // clamped into the gathered dim, replaces those dims in the data's index.
  const int64_t axis = op.getAxis();
  const size_t rank = shapeOf(op.getIndices()).size();
  Index at(idx.begin() + axis, idx.begin() + axis + rank);
  std::string i = emit(op.getIndices(), at);
  const int64_t n = shapeOf(op.getData())[size_t(axis)];
  std::string k = fresh("fz_g");
  line("const long long " + k + " = min(max((long long)(" + i + ") < 0 ? (long long)(" + i +
       ") + " + std::to_string(n) + "LL : (long long)(" + i + "), 0LL), " + std::to_string(n - 1) +
       "LL);");
  Index d(idx.begin(), idx.begin() + axis);
  IndexExpr row;
  row.text = k;
  d.push_back(row);
  d.insert(d.end(), idx.begin() + axis + rank, idx.end());
  return emit(op.getData(), d);
}

std::string ElementEmitter::emitConcat(ConcatOp op, const Index &idx) {
  // Every input is read at a clamped (always valid) index, then one is selected.
  int64_t axis = op.getAxis();
  std::string c = render(idx[axis]);
  std::vector<std::pair<int64_t, std::string>> parts;
  int64_t start = 0;
  for (Value in : op.getInputs()) {
    int64_t n = shapeOf(in)[axis];
    Index sub = idx;
    if (narrowIndex(shapeOf(op.getResult())))
      sub[axis].text = "min(max((int)(" + c + ") - " + std::to_string(start) + ", 0), " +
                       std::to_string(n - 1) + ")";
    else
      sub[axis].text = "min(max((long long)(" + c + ") - " + std::to_string(start) + ", 0LL), " +
                       std::to_string(n - 1) + "LL)";
    parts.push_back({start + n, emit(in, sub)});
    start += n;
  }
  std::string expr = parts.back().second;
  for (int i = (int)parts.size() - 2; i >= 0; --i)
    expr = "((" + c + ") < " + std::to_string(parts[i].first) + " ? " + parts[i].second + " : " +
           expr + ")";
  return expr;
}

std::string HoistedLoads::vectorLoad(ElementEmitter &em, BlockArgument arg,
                                     const std::string &off) {
  std::string ptr = ElementEmitter::argName(arg.getArgNumber());
  std::string &name = names["v:" + ptr + off];
  if (name.empty()) {
    name = em.fresh("h");
    std::string v = std::to_string(vec);
    pre += indent + computeType(dtypeOf(arg)) + " " + name + "[" + v + "];\n" + indent +
           "fz_load<" + storageType(dtypeOf(arg)) + ", " + v + ">(" + ptr + ", " + off + ", " +
           name + ");\n";
  }
  return name + "[l]";
}

std::string HoistedLoads::load(ElementEmitter &em, BlockArgument arg, const Index &idx) {
  ArrayRef<int64_t> shape = shapeOf(arg);
  std::string ptr = ElementEmitter::argName(arg.getArgNumber());
  std::optional<int64_t> c = vec > 1 ? em.coefficient(shape, idx, dim) : std::nullopt;
  if (c && *c == 0) {
    std::string off = em.offsetAt(shape, idx, dim, base);
    std::string &name = names["s:" + ptr + off];
    if (name.empty()) {
      name = em.fresh("h");
      pre += indent + "const " + computeType(dtypeOf(arg)) + " " + name + " = fz_load1(" + ptr +
             ", " + off + ");\n";
    }
    return name;
  }
  if (c && *c == 1 && em.vectorizable(shape, idx, dim, vec))
    return vectorLoad(em, arg, em.offsetAt(shape, idx, dim, base));
  return "fz_load1(" + ptr + ", " + em.offset(shape, idx) + ")";
}

} // namespace fusec::codegen
