//===- MatmulTuning.h - tuning keys of the products cuBLASLt runs -----------===//
//
// `fusec bench --autotune` times the first usable results of cuBLASLt's
// heuristic for each product a plan gives cuBLASLt and keeps the fastest in
// the tuning cache (runtime/TuningCache.h) under a key of the architecture
// and the whole descriptor, as "rank N". Header-only: the compiler reads the
// cache without the runtime's cuBLASLt code.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/plan/MatmulDesc.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace fusec {

/// Every field of the descriptor, e.g. (decode Q/K/V at 32 rows)
/// "cublaslt sm_90a bf16 a 32x4096 ld 4096 b 4096x6144 ld 4096 col c 32x6144 ld 6144".
inline std::string matmulTuningKey(const MatmulDesc &d, const std::string &arch) {
  std::string key = "cublaslt " + arch + " " + std::string(dtypeName(d.dtype));
  auto layout = [&](const char *name, const MatrixLayout &l, bool trans) {
    key += std::string(" ") + name + " " + std::to_string(l.rows) + "x" + std::to_string(l.cols) +
           " ld " + std::to_string(l.ld) + (l.rowMajor ? "" : " col") + (trans ? " T" : "");
    if (l.batch > 1)
      key += " batch " + std::to_string(l.batch) + " stride " + std::to_string(l.batchStride);
  };
  layout("a", d.a, d.transA);
  layout("b", d.b, d.transB);
  layout("c", d.c, false);
  if (d.alpha != 1)
    key += " alpha " + std::to_string(d.alpha);
  if (d.beta != 0)
    key += " beta " + std::to_string(d.beta);
  if (d.biasEpilogue)
    key += " bias";
  if (d.geluEpilogue)
    key += " gelu";
  return key;
}

/// The tuning cache's configuration for heuristic rank `rank` ("rank 4").
inline std::string matmulRankConfig(int rank) { return "rank " + std::to_string(rank); }

/// The rank in such a configuration; nullopt for anything else.
inline std::optional<int> parseMatmulRankConfig(llvm::StringRef config) {
  int rank = 0;
  if (!config.consume_front("rank ") || config.getAsInteger(10, rank) || rank < 0)
    return std::nullopt;
  return rank;
}

} // namespace fusec
