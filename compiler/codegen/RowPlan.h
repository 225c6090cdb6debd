//===- RowPlan.h - phases, register caching and stores of a row kernel ----===//
#pragma once

#include "compiler/codegen/ElementEmitter.h"
#include "compiler/codegen/ReductionPhases.h"

#include <map>
#include <string>
#include <vector>

namespace fusec::codegen::detail {

/// Generates the inside of a row kernel's row loop: the register cache of the
/// row's inputs, one loop over the row per reduction phase, the outputs.
/// Domain index variables: kept dim d is "k<d>", reduced dim d is "c<d>".
class RowPlan {
public:
  RowPlan(FusionOp fusion, std::vector<int64_t> domain, std::vector<int64_t> reduced,
          std::vector<int64_t> kept, int lane, int64_t vec, int64_t tpr, int64_t slots,
          bool cached);

  /// __shared__ scratch for block-wide reductions (when a row has > 32 threads).
  std::string sharedDeclarations() const;
  /// Device functions the body calls beyond the prelude's (the online sums').
  std::string helpers() const;
  /// How many sums the streamed row keeps beside their max in one pass.
  size_t onlineCount() const { return online.size(); }
  /// "const fz_idx k0 = ...;" for every kept dim, from the row number `rowVar`.
  std::string keptIndices(const std::string &rowVar, const std::string &indent) const;
  /// Cache preload, phases and stores.
  std::string body();

  /// Splits every row over `splits` blocks (blockIdx.y), each reducing `slots`
  /// slots of it: for few long rows, which one block per row would leave most
  /// SMs idle. Each block writes its partials to the scratch, and the row's
  /// last block to finish combines them in split order (the same result
  /// whichever block is last) and stores the outputs. Only for one phase and
  /// per-row outputs, with one row per block (tpr = threads per block).
  void splitRows(int64_t splits) { this->splits = splits; }
  /// Scratch the split form needs: a counter per row (zeroed once; the last
  /// block zeroes it again), then 8-byte partials. Valid after body().
  int64_t counterBytes() const;
  int64_t scratchBytes() const;

private:
  struct Cached {
    std::string name, type, storage, ptr, offset;
  };
  /// One pass over the row's slots; `deep`: 4 slots' loads in flight.
  std::string slotLoop(const std::string &pre, const std::string &lanes,
                       const std::string &post, const std::string &indent,
                       bool deep = false) const;
  std::string reducedIndices(const std::string &indent) const;
  ElementEmitter makeEmitter(std::string *slotPre);
  std::string phase(const std::vector<mlir::Operation *> &reductions);
  std::string acrossThreads(mlir::Operation *reduction, const std::string &acc,
                            const std::string &indent) const;
  std::string combineSplits(const std::vector<mlir::Operation *> &reductions,
                            const std::vector<std::string> &accs);
  std::string rowVaryingOutputs();
  std::string perRowOutputs();

  FusionOp fusion;
  std::vector<int64_t> domain, reduced, kept;
  int lane;
  int64_t vec, tpr, slots, cols = 1, rows = 1, splits = 1, partials = 0;
  bool cached;
  /// Where the row is streamed (not cached), sums kept beside their max in
  /// one pass rather than a pass of their own (ReductionPhases.h).
  OnlineSums online;
  std::vector<Cached> cache;
  std::map<std::string, std::string> cacheByKey;
  std::map<mlir::Operation *, std::string> reductionVars;
  int counter = 0;
};

} // namespace fusec::codegen::detail
