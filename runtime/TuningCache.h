//===- TuningCache.h - GEMM tile configurations measured on a GPU ---------===//
//
// `fusec bench --autotune` times every candidate tile configuration of each
// fusec GEMM kernel and keeps the fastest here, by tuning key (architecture,
// dtype, shape, operand layouts), e.g.
//
//   "sm_90a bf16 m4096 n11008 k4096 b1 aK bK" -> "128x256x32 w64x64 s3 k1"
//
// and, for a product the plan gives cuBLASLt, which of the heuristic's
// usable algorithms runs it (compiler/plan/MatmulTuning.h, matmulTuningKey):
//
//   "cublaslt sm_90a bf16 a 32x4096 ld 4096 b 4096x6144 ld 4096 col c 32x6144
//    ld 6144" -> "rank 4"
//
// in <cache dir>/gemm-tuning.json (the kernel cache's directory). Every later
// compile reads it: a tuned shape gets its winner, others the heuristic's.
// Writes are atomic; two tuners at once lose one's entries, never the file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>

namespace fusec {

struct TunedGemm {
  std::string config;  ///< GemmConfig::str()
  double us = 0;       ///< its median time when tuned
};

class TuningCache {
public:
  /// <cache dir>/gemm-tuning.json, or nullopt when the disk cache is off.
  static std::optional<std::string> defaultPath();
  /// Reads `path`. A missing file is an empty cache; an unreadable or damaged
  /// one is empty too, with `warning` saying why.
  static TuningCache load(const std::string &path, std::string *warning = nullptr);
  /// The default cache's entries as key -> config (what compiling needs).
  static std::map<std::string, std::string> defaultEntries();

  const std::map<std::string, TunedGemm> &entries() const { return map; }
  void set(const std::string &key, TunedGemm value) { map[key] = std::move(value); }
  /// Writes the file atomically (creating its directory).
  llvm::Error save() const;

private:
  std::string path;
  std::map<std::string, TunedGemm> map;
};

} // namespace fusec
