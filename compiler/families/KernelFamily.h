//===- KernelFamily.h - kernel families: legality, time and emitter -------===//
//
// A kernel family is one way of running a fused group: a kernel fusec
// generates (pointwise, row reduction, the column forms, its GEMM and GEMV
// kernels) or a library call (cuBLASLt). Each family says, in one file of
// this folder, whether it takes a group (and if not, why), what the group
// then costs, and how it is emitted. The registry (Registry.cpp) holds them
// in the order the planner asks them; -fusec-select-kernels stores the
// answer on the fusion op (`family`, FusionAttrs.td) and code generation
// emits with that family alone. docs/architecture.md has the picture.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/codegen/KernelSpec.h"
#include "compiler/cost/CostModel.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/schedule/GroupSchedule.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace fusec {

using codegen::KernelSpec;

/// What a family is asked to run on: the device the cost model prices for,
/// the NVRTC target, and for fusec's GEMM kernels how the tile configuration
/// is chosen.
struct FamilyTarget {
  const DeviceProfile &profile;
  std::string arch;
  codegen::GemmChoice gemm = {};
  /// Thread block clusters exist on the target (sm_90 and newer).
  bool clusters() const;
};

/// Why a family does not take a group, as explain shows it.
struct FamilyRejection {
  KernelFamily family;
  std::string reason;
};

class KernelFamilyDef {
public:
  virtual ~KernelFamilyDef() = default;
  virtual KernelFamily id() const = 0;
  /// The groups it can run: those GroupSchedule.h classifies as this kind.
  virtual GroupKind kind() const = 0;
  /// A library call (a plan step of its own), not a generated kernel.
  virtual bool isLibrary() const { return false; }
  /// Whether it takes `fusion` on `target`: empty, or the reason it does not.
  virtual std::string reject(FusionOp fusion, const FamilyTarget &target) const = 0;
  /// The kernel for a group it takes, laid out (KernelText); emitKernel
  /// completes it (codegen::finishKernel: header, entry, source).
  virtual llvm::Expected<KernelSpec> emit(FusionOp fusion, const FamilyTarget &target) const = 0;
  /// Predicted seconds of a group of cost `c` run by this family; the
  /// default streams at the copy rate (cuBLASLt's rates for a product).
  virtual double seconds(const Cost &c, const DeviceProfile &p) const {
    return predictSeconds(c, p);
  }
};

struct AttentionMatch;
struct RowStatsMatch;
namespace families {
/// The attention family's time for a group it runs: its blocks' key tiles
/// spread over the SMs (Attention.cpp).
double attentionSeconds(const AttentionMatch &m, const DeviceProfile &p);
/// The streamed row statistics' time for a group of cost `c` on the
/// profile's device and target (its `arch`: which GEMM kernel runs it;
/// StreamedRows.cpp).
double rowStatsSeconds(const RowStatsMatch &m, const Cost &c, const DeviceProfile &p);
} // namespace families

/// Predicted seconds of a group of cost `c` run by `family`.
double predictSeconds(const Cost &c, const DeviceProfile &p, KernelFamily family);

/// The family with this id.
const KernelFamilyDef &kernelFamily(KernelFamily id);

/// The families that run groups of `kind`, in the order they are asked: the
/// first that takes a group runs it.
std::vector<const KernelFamilyDef *> familiesFor(GroupKind kind);

/// Asks the families of the group's kind in order. The first that takes it
/// is returned; `rejected` gets each one asked before it, with its reason.
/// Fails when none takes it.
llvm::Expected<KernelFamily> selectFamily(FusionOp fusion, const FamilyTarget &target,
                                          std::vector<FamilyRejection> &rejected);

/// The kernel of a fused group, emitted by the family stored on it
/// (selectFamily's choice, or the planner's for a matmul) and completed.
llvm::Expected<KernelSpec> emitKernel(FusionOp fusion, const FamilyTarget &target);

/// The family stored on a fused group (internal error when it has none).
llvm::Expected<KernelFamily> familyOf(FusionOp fusion);

/// fusec's own GEMM kernels (GemmPath Fusec*), as the planner chose them.
bool isFusecGemm(KernelFamily f);

} // namespace fusec
