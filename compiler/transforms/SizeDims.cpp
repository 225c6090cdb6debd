//===- SizeDims.cpp - which dims of a graph's values are a named size -----===//
#include "compiler/transforms/SizeDims.h"

#include "compiler/support/Printable.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace fusec {

namespace {

llvm::Error fail(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", message.c_str());
}

ArrayAttr dimsAttr(MLIRContext *ctx, ArrayRef<std::string> dims) {
  SmallVector<Attribute> out;
  for (const std::string &d : dims)
    out.push_back(StringAttr::get(ctx, d));
  return ArrayAttr::get(ctx, out);
}

std::vector<std::string> toStrings(ArrayRef<StringRef> dims) {
  return std::vector<std::string>(dims.begin(), dims.end());
}

/// The marks of a value of `graph` with the dims that differ from `probe`'s
/// set to `name`; an error where a dim differs otherwise.
llvm::Expected<std::vector<std::string>> compareTypes(Type a, Type b, std::vector<std::string> dims,
                                                      StringRef name, int64_t size,
                                                      int64_t probeSize, const std::string &at) {
  auto ta = dyn_cast<RankedTensorType>(a), tb = dyn_cast<RankedTensorType>(b);
  if (!ta || !tb || ta.getRank() != tb.getRank() || ta.getElementType() != tb.getElementType())
    return fail(at + ": its type changes with " + name.str());
  for (int64_t d = 0; d < ta.getRank(); ++d) {
    int64_t x = ta.getDimSize(d), y = tb.getDimSize(d);
    if (x == y)
      continue;
    // A dim that merges the size with fixed ones (batch * S after a
    // reshape that flattens them) is c * size in one and c * probeSize in
    // the other; the padding pass finds where in it the size lies. A dim
    // that follows the size by k positions (a cache of S rows joined with
    // k new ones) is size + k and probeSize + k: marked "S+k".
    bool merged = x % size == 0 && y % probeSize == 0 && x / size == y / probeSize;
    std::string mark = name.str();
    if (!merged && x - size == y - probeSize && x > size)
      mark += "+" + std::to_string(x - size);
    else if (!merged)
      return fail(at + ": dim " + std::to_string(d) + " is " + std::to_string(x) + " at " +
                  name.str() + "=" + std::to_string(size) + " and " + std::to_string(y) + " at " +
                  name.str() + "=" + std::to_string(probeSize) + ", a size computed from " +
                  name.str() + " rather than " + name.str() + " itself");
    if (!dims[d].empty() && dims[d] != mark)
      return fail(at + ": dim " + std::to_string(d) + " is both " + dims[d] + " and " + mark);
    dims[d] = mark;
  }
  return dims;
}

} // namespace

std::pair<StringRef, int64_t> splitMark(StringRef mark) {
  auto [name, tail] = mark.split('+');
  int64_t k = 0;
  if (tail.empty() || tail.getAsInteger(10, k))
    k = 0;
  return {name, k};
}

std::string paddingNodeLabel(Operation *op) {
  std::string name = op->getName().stripDialect().str();
  if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
    return "node '" + printable(loc.getName().str()) + "' (" + name + ")";
  return name;
}

SmallVector<StringRef> sizeDimsOf(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<StringRef> out(type.getRank(), "");
  ArrayAttr dims;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (auto f = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()))
      dims = f.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), kSizeDimsAttr);
  } else if (auto all = v.getDefiningOp()->getAttrOfType<ArrayAttr>(kSizeDimsAttr)) {
    unsigned r = cast<OpResult>(v).getResultNumber();
    if (r < all.size())
      dims = dyn_cast<ArrayAttr>(all[r]);
  }
  if (dims && int64_t(dims.size()) == type.getRank())
    for (auto [i, d] : llvm::enumerate(dims))
      out[i] = cast<StringAttr>(d).getValue();
  return out;
}

llvm::Error markSizeDims(func::FuncOp graph, func::FuncOp probe, StringRef name, int64_t size,
                         int64_t probeSize) {
  MLIRContext *ctx = graph.getContext();
  NamedAttrList padded(graph->getAttrOfType<DictionaryAttr>(kPaddedSizesAttr));
  padded.set(name, IntegerAttr::get(IntegerType::get(ctx, 64), size));
  graph->setAttr(kPaddedSizesAttr, padded.getDictionary(ctx));
  if (graph.getNumArguments() != probe.getNumArguments())
    return fail("the graph's inputs change with " + name.str());
  llvm::DenseMap<Value, unsigned> ids, probeIds;
  for (unsigned i = 0; i < graph.getNumArguments(); ++i) {
    ids[graph.getArgument(i)] = i;
    probeIds[probe.getArgument(i)] = i;
    std::string at = "input " + std::to_string(i);
    if (auto n = graph.getArgAttrOfType<StringAttr>(i, "fusec.name"))
      at = "input '" + printable(n.getValue().str()) + "'";
    auto dims = compareTypes(graph.getArgument(i).getType(), probe.getArgument(i).getType(),
                             toStrings(sizeDimsOf(graph.getArgument(i))), name, size, probeSize,
                             at);
    if (!dims)
      return dims.takeError();
    graph.setArgAttr(i, kSizeDimsAttr, dimsAttr(ctx, *dims));
  }
  Block &body = graph.getBody().front(), &other = probe.getBody().front();
  if (body.getOperations().size() != other.getOperations().size())
    return fail("the graph's ops change with " + name.str());
  for (auto [op, po] : llvm::zip(body.getOperations(), other.getOperations())) {
    const std::string at = paddingNodeLabel(&op);
    if (op.getName() != po.getName() || op.getNumOperands() != po.getNumOperands() ||
        op.getNumResults() != po.getNumResults())
      return fail(at + ": the graph's ops change with " + name.str());
    for (auto [a, b] : llvm::zip(op.getOperands(), po.getOperands()))
      if (ids.lookup(a) != probeIds.lookup(b) || !ids.count(a) || !probeIds.count(b))
        return fail(at + ": its inputs change with " + name.str());
    SmallVector<Attribute> marks;
    for (auto [r, pr] : llvm::zip(op.getResults(), po.getResults())) {
      auto dims = compareTypes(r.getType(), pr.getType(), toStrings(sizeDimsOf(r)), name, size,
                               probeSize, at);
      if (!dims)
        return dims.takeError();
      marks.push_back(dimsAttr(ctx, *dims));
      unsigned id = ids.size();
      ids[r] = id;
      probeIds[pr] = id;
    }
    // Attributes other than a slice's limits (checked against the marked
    // dims by the padding pass) must not depend on the size.
    for (auto [self, other] : {std::pair<Operation *, Operation *>{&op, &po}, {&po, &op}})
      for (NamedAttribute a : self->getAttrs()) {
        if (a.getName() == kSizeDimsAttr || a.getName() == "limits")
          continue;
        if (other->getAttr(a.getName()) != a.getValue())
          return fail(at + ": attribute '" + a.getName().str() + "' changes with " +
                      name.str() + " (a value computed from the size cannot be padded)");
      }
    if (op.getNumResults())
      op.setAttr(kSizeDimsAttr, ArrayAttr::get(ctx, marks));
  }
  return llvm::Error::success();
}

} // namespace fusec
