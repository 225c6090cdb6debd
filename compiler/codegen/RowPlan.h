//===- RowPlan.h - phases, register caching and stores of a row kernel ----===//
#pragma once

#include "compiler/codegen/ElementEmitter.h"

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
  /// "const fz_idx k0 = ...;" for every kept dim, from the row number `rowVar`.
  std::string keptIndices(const std::string &rowVar, const std::string &indent) const;
  /// Cache preload, phases and stores.
  std::string body();

private:
  struct Cached {
    std::string name, type, storage, ptr, offset;
  };
  std::string slotLoop(const std::string &pre, const std::string &lanes,
                       const std::string &post, const std::string &indent) const;
  std::string reducedIndices(const std::string &indent) const;
  ElementEmitter makeEmitter(std::string *slotPre);
  std::string phase(const std::vector<mlir::Operation *> &reductions);
  std::string rowVaryingOutputs();
  std::string perRowOutputs();

  FusionOp fusion;
  std::vector<int64_t> domain, reduced, kept;
  int lane;
  int64_t vec, tpr, slots, cols = 1;
  bool cached;
  std::vector<Cached> cache;
  std::map<std::string, std::string> cacheByKey;
  std::map<mlir::Operation *, std::string> reductionVars;
  int counter = 0;
};

} // namespace fusec::codegen::detail
