//===- ElementEmitter.h - C++ statements computing one element of a value -===//
//
// The core of code generation: emits the statements that compute value `v` of a
// fusion body at a symbolic index, recursing through its operands. Views fold
// into the index (transpose permutes it, slice scales and shifts it, broadcast
// projects it, reshape re-linearizes it), generators become literals or the
// index itself, and elementwise ops become expressions from ScalarOps. Results
// are memoized per (value, index), so shared subexpressions are computed once.
// Kernel families decide where loads come from (hooks) and what an index is.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/dialect/FusecDialect.h"

#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fusec::codegen {

/// One dimension of an index: `dom * mul + add` over a domain index, a
/// constant (`dom < 0`), or a general C++ expression (`text`).
struct IndexExpr {
  int dom = -1;
  int64_t mul = 1, add = 0;
  std::string text;
  static IndexExpr constant(int64_t c) { return {-1, 1, c, {}}; }
  static IndexExpr domain(int d) { return {d, 1, 0, {}}; }
};
using Index = std::vector<IndexExpr>;

class ElementEmitter {
public:
  using LoadHook = std::function<std::string(ElementEmitter &, mlir::BlockArgument, const Index &)>;
  using ReductionHook = std::function<std::string(mlir::Operation *)>;

  /// `domVars[d]` is the C++ expression of domain index d at the current element.
  ElementEmitter(FusionOp fusion, std::vector<std::string> domVars, std::string indent = "  ");

  /// Emits what `v` needs at `idx` and returns the expression holding it.
  std::string emit(mlir::Value v, const Index &idx);

  /// Where a block argument's elements come from (default: a scalar load).
  LoadHook load;
  /// The per-row value of a reduction op (row kernels set this), or a
  /// matmul's accumulator at the current element (the GEMM epilogue).
  ReductionHook reduced;
  /// A value the kernel already holds at an index (an earlier phase kept it
  /// in shared memory), instead of computing it again; nullopt: compute it.
  std::function<std::optional<std::string>(ElementEmitter &, mlir::Value, const Index &)> known;
  /// The reciprocal of a divisor that is fixed for the current column (a
  /// reduction's result), computed once, so that a 16-bit division becomes a
  /// multiplication; nullopt: divide.
  std::function<std::optional<std::string>(mlir::Value)> reciprocal;

  /// The statements emitted so far (taken by the caller).
  std::string takeCode();
  const std::string &indent() const { return indentStr; }
  void line(const std::string &s) { code += indentStr + s + "\n"; }
  std::string fresh(const char *prefix) { return prefix + std::to_string(counter++); }

  std::string render(const IndexExpr &e) const;
  /// Whether `idx` is the domain's own index (what identity() builds).
  static bool isIdentity(const Index &idx);
  /// Whether flat indices of a tensor of `shape` fit 32-bit arithmetic.
  static bool narrowIndex(llvm::ArrayRef<int64_t> shape);
  /// The element offset of `idx` in a contiguous row-major tensor of `shape`.
  std::string offset(llvm::ArrayRef<int64_t> shape, const Index &idx) const;
  /// The coefficient of domain dim `d` in that offset, when every part is affine.
  std::optional<int64_t> coefficient(llvm::ArrayRef<int64_t> shape, const Index &idx,
                                     int d) const;
  /// Same offset with domain dim `d` rendered as `base` instead of its variable.
  std::string offsetAt(llvm::ArrayRef<int64_t> shape, const Index &idx, int d,
                       const std::string &base) const;
  /// Whether VEC consecutive elements along domain dim `d` (starting at a
  /// multiple of `vec`) are VEC consecutive, vector-aligned elements of
  /// `shape`, the last vector inside it (its extent along d a multiple of
  /// `vec`).
  bool vectorizable(llvm::ArrayRef<int64_t> shape, const Index &idx, int d, int64_t vec) const;
  /// The name of block argument i's pointer parameter ("in0").
  static std::string argName(unsigned i) { return "in" + std::to_string(i); }

  /// [dom 0, ..., dom rank-1]
  static Index identity(size_t rank);
  /// The index of an operand of shape `to` broadcast (NumPy rules) to `from`.
  static Index project(const Index &idx, llvm::ArrayRef<int64_t> from,
                       llvm::ArrayRef<int64_t> to);

  std::vector<std::string> domVars;

private:
  std::string emitOp(mlir::Operation *op, mlir::Value v, const Index &idx);
  std::string emitView(mlir::Operation *op, const Index &idx);
  std::string emitGather(GatherOp op, const Index &idx);
  std::string emitConcat(ConcatOp op, const Index &idx);
  std::string key(mlir::Value v, const Index &idx);

  llvm::DenseMap<mlir::Value, int> valueIds;
  std::map<std::string, std::string> memo;
  std::string code, indentStr;
  int counter = 0;
};

/// Loads for kernels whose lanes are `vec` consecutive elements along domain
/// dim `dim`, the first at `base`: an operand that does not vary along it is
/// loaded once per step, one contiguous along it as one vector load; both go
/// into `pre` (at `indent`, before the lane loop), each once. Anything else is
/// gathered per element. Use `load` as the emitter's load hook.
struct HoistedLoads {
  int dim = 0;
  int64_t vec = 1;
  std::string base, indent;
  std::string pre;  ///< the hoisted loads, for the caller to place
  std::map<std::string, std::string> names;

  std::string load(ElementEmitter &em, mlir::BlockArgument arg, const Index &idx);
  /// `vec` elements of `arg` from offset `off` into an array; its element expression.
  std::string vectorLoad(ElementEmitter &em, mlir::BlockArgument arg, const std::string &off);
};

} // namespace fusec::codegen
