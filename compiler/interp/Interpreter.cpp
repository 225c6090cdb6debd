//===- Interpreter.cpp - binding values and dispatching ops to families ---===//
//
// A block is evaluated in order. Each value is bound to a tensor; a tensor
// produced inside the block is freed after the last op that reads it, so a
// long chain does not hold every intermediate at once (arguments are the
// caller's and are never copied). Ops go to one evaluator per op family; a
// fusec.fusion op evaluates its body as a nested block, so fused and unfused
// modules can be compared on the same inputs.
//
//===----------------------------------------------------------------------===//
#include "compiler/interp/Interpreter.h"

#include "compiler/dialect/FusecDialect.h"
#include "compiler/interp/EvalSupport.h"
#include "compiler/shape/ShapeRules.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

#include <unistd.h>

using namespace mlir;

namespace fusec {
namespace {

llvm::Error interpError(const llvm::Twine &message) {
  return llvm::make_error<llvm::StringError>(message, llvm::inconvertibleErrorCode());
}

std::string locationOf(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  op->getLoc().print(os);
  return s;
}

llvm::Expected<HostTensor> evalOp(Operation *op, interp::Operands in,
                                  const InterpOptions &opts) {
  if (isa<SumOp, MeanOp, MaxOp, MinOp>(op))
    return interp::evalReduction(op, in, opts);
  if (isa<ReshapeOp, TransposeOp, BroadcastToOp, SliceOp, ConcatOp, GatherOp>(op))
    return interp::evalLayout(op, in, opts);
  if (isa<MatmulOp>(op))
    return interp::evalMatmul(op, in, opts);
  if (isComposite(op))
    return interp::evalComposite(op, in, opts);
  if (isCollective(op))
    return interp::evalCollective(op, in, opts);
  // Everything else, including ops the interpreter does not know (it says so).
  return interp::evalElementwise(op, in, opts);
}

/// Values of `block` that `op` or any op nested in it reads, once per read.
llvm::SmallVector<Value> blockValuesReadBy(Operation *op, Block &block) {
  llvm::SmallVector<Value> reads;
  op->walk([&](Operation *nested) {
    for (Value v : nested->getOperands())
      if (v.getParentBlock() == &block)
        reads.push_back(v);
  });
  return reads;
}

llvm::Expected<std::vector<HostTensor>> evalBlock(Block &block,
                                                  llvm::ArrayRef<const HostTensor *> args,
                                                  const InterpOptions &opts);

/// The results of one op that is not a terminator. A fusion op's body is a
/// block like any other; its errors already name the op inside at fault.
llvm::Expected<std::vector<HostTensor>> evalResults(Operation *op, interp::Operands in,
                                                    const InterpOptions &opts) {
  if (auto fusion = dyn_cast<FusionOp>(op))
    return evalBlock(fusion.getBodyBlock(), in, opts);
  if (op->getNumResults() != 1)
    return interpError(locationOf(op) + ": " + op->getName().getStringRef() +
                   ": the interpreter evaluates ops with exactly one result");
  llvm::Expected<HostTensor> result = evalOp(op, in, opts);
  if (!result)
    return interpError(locationOf(op) + ": " + llvm::toString(result.takeError()));
  std::vector<HostTensor> results;
  results.push_back(std::move(*result));
  return results;
}

/// Evaluates `block` with its arguments bound to `args`, which it only reads.
llvm::Expected<std::vector<HostTensor>> evalBlock(Block &block,
                                                  llvm::ArrayRef<const HostTensor *> args,
                                                  const InterpOptions &opts) {
  if (args.size() != block.getNumArguments())
    return interpError("block has " + llvm::Twine(block.getNumArguments()) + " arguments but " +
                   llvm::Twine(args.size()) + " tensors were given");
  llvm::DenseMap<Value, const HostTensor *> env;
  llvm::DenseMap<Value, std::unique_ptr<HostTensor>> owned;
  for (auto [arg, tensor] : llvm::zip(block.getArguments(), args))
    env[arg] = tensor;

  // How many reads of each value remain; at zero its tensor can go.
  llvm::DenseMap<Value, int64_t> pendingReads;
  for (Operation &op : block)
    for (Value v : blockValuesReadBy(&op, block))
      ++pendingReads[v];

  for (Operation &op : block) {
    std::vector<const HostTensor *> in;
    for (auto [i, v] : llvm::enumerate(op.getOperands())) {
      auto it = env.find(v);
      if (it == env.end())
        return interpError(locationOf(&op) + ": " + op.getName().getStringRef() + ": operand " +
                       llvm::Twine(i) + " has no value in this block");
      in.push_back(it->second);
    }
    if (op.hasTrait<mlir::OpTrait::ReturnLike>()) {
      std::vector<HostTensor> results;
      for (const HostTensor *t : in)
        results.push_back(*t);
      return results;
    }
    llvm::Expected<std::vector<HostTensor>> results = evalResults(&op, in, opts);
    if (!results)
      return results.takeError();
    if (results->size() != op.getNumResults())
      return interpError(locationOf(&op) + ": " + op.getName().getStringRef() + ": produced " +
                     llvm::Twine(results->size()) + " values for " +
                     llvm::Twine(op.getNumResults()) + " results");
    for (auto [value, tensor] : llvm::zip(op.getResults(), *results)) {
      auto stored = std::make_unique<HostTensor>(std::move(tensor));
      env[value] = stored.get();
      owned[value] = std::move(stored);
    }

    for (Value v : blockValuesReadBy(&op, block)) {
      if (--pendingReads[v] > 0 || !owned.count(v))
        continue;
      owned.erase(v);
      env.erase(v);
    }
  }
  return interpError("block ends without a return-like terminator");
}

} // namespace

llvm::Expected<std::vector<HostTensor>> interpretBlock(Block &block,
                                                       llvm::ArrayRef<HostTensor> args,
                                                       const InterpOptions &opts) {
  std::vector<const HostTensor *> borrowed;
  for (const HostTensor &t : args)
    borrowed.push_back(&t);
  return evalBlock(block, borrowed, opts);
}

double hostMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? double(pages) * double(page) : 0;
}

namespace {

int64_t elementsOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() ? shape::numElements(t.getShape()) : 0;
}

std::string nodeName(Operation *op) {
  auto loc = dyn_cast<NameLoc>(op->getLoc());
  return "node " + (loc ? "'" + loc.getName().str() + "' " : std::string()) + "(" +
         op->getName().stripDialect().str() + ")";
}

/// The most elements `block`'s evaluation holds at once beyond its arguments
/// (which its caller holds), as evalBlock frees them: an op's results join
/// the values still to be read, a fusion's body adds its own most while it
/// runs, the return copies the results. `where` names the op at the peak.
int64_t peakElements(Block &block, std::string &where) {
  llvm::DenseMap<Value, int64_t> pendingReads;
  for (Operation &op : block)
    for (Value v : blockValuesReadBy(&op, block))
      ++pendingReads[v];
  int64_t live = 0, peak = 0;
  for (Operation &op : block) {
    if (op.hasTrait<mlir::OpTrait::ReturnLike>()) {
      int64_t copies = 0;
      for (Value v : op.getOperands())
        copies += elementsOf(v);
      if (live + copies > peak) {
        peak = live + copies;
        where = "the outputs";
      }
      break;
    }
    int64_t inner = 0;
    std::string innerWhere;
    if (auto fusion = dyn_cast<FusionOp>(op))
      inner = peakElements(fusion.getBodyBlock(), innerWhere);
    for (Value r : op.getResults())
      live += elementsOf(r);
    if (live + inner > peak) {
      peak = live + inner;
      where = innerWhere.empty() ? nodeName(&op) : innerWhere;
    }
    for (Value v : blockValuesReadBy(&op, block))
      if (--pendingReads[v] == 0 && v.getDefiningOp())
        live -= elementsOf(v);
  }
  return peak;
}

} // namespace

llvm::Error checkInterpreterFits(func::FuncOp func, int copies) {
  double machine = hostMemoryBytes();
  if (machine <= 0)
    return llvm::Error::success();
  int64_t most = 0;
  std::string what;
  auto consider = [&](Value v, const std::string &name) {
    if (int64_t n = elementsOf(v); n > most) {
      most = n;
      if (auto t = dyn_cast<RankedTensorType>(v.getType()))
        what = name + " " + shape::str(t.getShape());
    }
  };
  for (BlockArgument a : func.getArguments())
    consider(a, "argument " + std::to_string(a.getArgNumber()));
  func.walk([&](Operation *op) {
    for (Value r : op->getResults())
      consider(r, nodeName(op));
  });
  const std::string times =
      copies > 1 ? " once for each of " + std::to_string(copies) + " ranks" : "";
  double need = double(most) * 8 * copies;
  if (need > machine / 2)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the reference interpreter would hold %s%s: %.1f GiB at 8 bytes an element, more than "
        "half of this machine's %.1f GiB",
        what.c_str(), times.c_str(), need / (1 << 30), machine / (1 << 30));
  // The graph as a whole: its arguments and the most its values hold at
  // once (each value can fit while all of them together do not).
  std::string where;
  int64_t args = 0;
  for (BlockArgument a : func.getArguments())
    args += elementsOf(a);
  need = (double(args) + double(peakElements(func.front(), where))) * 8 * copies;
  if (need > machine / 2)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the reference interpreter would hold %.1f GiB at once (its inputs and, at %s, the "
        "values still to be read%s), at 8 bytes an element: more than half of this machine's "
        "%.1f GiB",
        need / (1 << 30), where.c_str(), times.c_str(), machine / (1 << 30));
  return llvm::Error::success();
}

llvm::Expected<std::vector<HostTensor>> interpret(func::FuncOp func,
                                                  llvm::ArrayRef<HostTensor> args,
                                                  const InterpOptions &opts) {
  std::string where = "interpret @" + func.getSymName().str() + ": ";
  if (func.isExternal())
    return interpError(where + "function has no body");
  if (llvm::Error err = checkInterpreterFits(func))
    return std::move(err);
  FunctionType type = func.getFunctionType();
  if (args.size() != type.getNumInputs())
    return interpError(where + "expected " + llvm::Twine(type.getNumInputs()) +
                   " arguments, got " + llvm::Twine(args.size()));
  for (auto [i, argType] : llvm::enumerate(type.getInputs())) {
    auto tensorType = dyn_cast<RankedTensorType>(argType);
    std::optional<DType> dtype = tensorType ? toDType(tensorType.getElementType()) : std::nullopt;
    if (!dtype)
      return interpError(where + "argument " + llvm::Twine(i) + " is not a tensor of a fusec dtype");
    const HostTensor &t = args[i];
    if (t.dtype() == *dtype && llvm::ArrayRef<int64_t>(t.shape()) == tensorType.getShape())
      continue;
    std::string name;
    if (auto loc = dyn_cast<NameLoc>(func.getArgument(i).getLoc()))
      name = " ('" + loc.getName().str() + "')";
    return interpError(where + "argument " + llvm::Twine(i) + name + " has dtype " +
                   dtypeName(t.dtype()) + " and shape " + shape::str(t.shape()) +
                   ", expected " + dtypeName(*dtype) + " and shape " +
                   shape::str(tensorType.getShape()));
  }
  return interpretBlock(func.front(), args, opts);
}

} // namespace fusec
