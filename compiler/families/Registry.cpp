//===- Registry.cpp - the kernel families, in the order they are asked ----===//
#include "compiler/families/Families.h"

#include "llvm/ADT/StringRef.h"

namespace fusec {

bool FamilyTarget::clusters() const {
  llvm::StringRef a(arch);
  return a.starts_with("sm_9") || a.starts_with("sm_10");
}

namespace families {

std::string reasonOf(llvm::Error e) {
  std::string why = llvm::toString(std::move(e));
  return why.empty() ? "declined" : why;
}

std::string rejectUnlessEmitted(const KernelFamilyDef &family, FusionOp fusion,
                                const FamilyTarget &target) {
  llvm::Expected<KernelSpec> spec = family.emit(fusion, target);
  return spec ? "" : reasonOf(spec.takeError());
}

} // namespace families

std::vector<const KernelFamilyDef *> familiesFor(GroupKind kind) {
  using namespace families;
  switch (kind) {
  case GroupKind::Pointwise:
    return {&pointwiseTranspose(), &pointwise()};
  case GroupKind::RowReduction:
    return {&rowReduction()};
  case GroupKind::ColumnReduction:
    // Read once where a team's chunk fits on chip: a cluster's tile in one
    // pass, else streamed with few splits, else a cooperative team; else
    // tiles re-read per phase. Past 32 splits a stream is slower than the
    // cooperative kernel (docs/reductions.md).
    return {&columnOnlineSoftmax(), &columnStreamed(), &columnCooperative(), &columnTiled()};
  case GroupKind::Matmul:
    return {};  // the planner's choice (MatmulPaths.cpp), stored at outlining
  case GroupKind::Attention:
    return {&attention()};
  case GroupKind::StreamedRows:
    return {&streamedRows()};
  case GroupKind::Collective:
    return {&collective()};
  }
  return {};
}

const KernelFamilyDef &kernelFamily(KernelFamily id) {
  using namespace families;
  switch (id) {
  case KernelFamily::Pointwise: return pointwise();
  case KernelFamily::PointwiseTranspose: return pointwiseTranspose();
  case KernelFamily::RowReduction: return rowReduction();
  case KernelFamily::ColumnOnlineSoftmax: return columnOnlineSoftmax();
  case KernelFamily::ColumnStreamed: return columnStreamed();
  case KernelFamily::ColumnCooperative: return columnCooperative();
  case KernelFamily::ColumnTiled: return columnTiled();
  case KernelFamily::Attention: return attention();
  case KernelFamily::StreamedRows: return streamedRows();
  case KernelFamily::Collective: return collective();
  case KernelFamily::Library:
  case KernelFamily::LibraryEpilogue:
  case KernelFamily::LibraryBatchedRows: return cublaslt(id);
  default: return fusecGemm(id);
  }
}

double predictSeconds(const Cost &c, const DeviceProfile &p, KernelFamily family) {
  return kernelFamily(family).seconds(c, p);
}

llvm::Expected<KernelFamily> selectFamily(FusionOp fusion, const FamilyTarget &target,
                                          std::vector<FamilyRejection> &rejected) {
  std::optional<GroupKind> kind = parseGroupKind(fusion.getKind());
  if (!kind)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: unknown fusion kind '%s'",
                                   fusion.getKind().str().c_str());
  for (const KernelFamilyDef *f : familiesFor(*kind)) {
    std::string reason = f->reject(fusion, target);
    if (reason.empty())
      return f->id();
    rejected.push_back({f->id(), std::move(reason)});
  }
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "internal error: no kernel family takes %s group %s",
                                 fusion.getKind().str().c_str(),
                                 fusion->getAttrOfType<mlir::StringAttr>("name").str().c_str());
}

llvm::Expected<KernelFamily> familyOf(FusionOp fusion) {
  if (std::optional<KernelFamily> f = fusion.getFamily())
    return *f;
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "internal error: fused group %s has no kernel family "
                                 "(-fusec-select-kernels did not run)",
                                 fusion->getAttrOfType<mlir::StringAttr>("name").str().c_str());
}

llvm::Expected<KernelSpec> emitKernel(FusionOp fusion, const FamilyTarget &target) {
  llvm::Expected<KernelFamily> id = familyOf(fusion);
  if (!id)
    return id.takeError();
  llvm::Expected<KernelSpec> spec = kernelFamily(*id).emit(fusion, target);
  if (!spec)
    return spec.takeError();
  if (llvm::Error e = codegen::finishKernel(fusion, *spec))
    return std::move(e);
  return spec;
}

} // namespace fusec
