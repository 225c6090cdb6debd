//===- KernelSpec.h - a generated kernel and how to launch it -------------===//
#pragma once

#include "compiler/cost/DeviceProfile.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/plan/KernelLaunch.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fusec::codegen {

/// One `extern "C" __global__` kernel for one fusec.fusion. Its parameters are
/// the fusion's inputs (const pointers) followed by its results (pointers), in order.
struct KernelSpec : KernelLaunch {
  std::string name;  ///< entry point, a C identifier
};

/// How a matmul group's tile configuration is chosen: the `candidate`-th of
/// gemmCandidates() when >= 0 (autotuning; the heuristic's when there are
/// fewer), else the tuned entry for the kernel's key, else the heuristic.
struct GemmChoice {
  int candidate = -1;
  const std::map<std::string, std::string> *tuned = nullptr;
  /// Where a tuned entry for the kernel's key does not apply, why (the
  /// heuristic's configuration is used instead).
  std::vector<std::string> *unused = nullptr;
};

/// Completes a family's kernel (compiler/families/): its header comment, its
/// entry point's name and the source NVRTC compiles.
/// Fails (an internal error) where the kernel's wait does not match what it
/// reads before it.
llvm::Error finishKernel(FusionOp fusion, KernelSpec &spec);

/// "k12_matmul_add" -> "k_matmul_add": a kernel's name less its plan
/// position; other names stay as they are.
std::string entryName(llvm::StringRef name);

/// The prelude and the kernel, as NVRTC compiles it (KernelLaunch::source).
std::string compiledSource(const KernelText &text, const std::string &entry);

/// The same with the kernel's header comment, for people: what `fusec
/// compile --emit cuda` writes and the API shows.
std::string annotatedSource(const KernelLaunch &kernel);

/// The CUDA C++ of a kernel named `name`: its helpers, then the entry point,
/// whose first statement waits for the kernel ahead (programmatic dependent
/// launch; fz_after_prior in Prelude.cpp), once or per role.
std::string printKernel(const KernelText &text, const std::string &name);

/// The one-shot all-reduce of `elements` of `dtype` over peer memory
/// (PeerAllReduce.cpp; the collective family picks it for small tensors):
/// parameters in0, out0 and the ranks' regions (plan/PeerRegion.h).
KernelSpec peerAllReduceKernel(const std::string &name, DType dtype, llvm::StringRef reduce,
                               int64_t elements);
/// The device code both it and a row kernel beginning with an all-reduce
/// share (KernelText::helpers): struct fz_peer_args (a kernel's last
/// parameter, plan/PeerRegion.h's peer::Args) and fz_peer_reduce(src, dst,
/// count, peers), block b's `count` elements reduced over every rank.
std::string peerReduceHelpers(DType dtype, llvm::StringRef reduce);

namespace detail {
// Family generators (one file each); `header` is the comment block to start with.
llvm::Expected<KernelSpec> generatePointwise(FusionOp fusion, const DeviceProfile &profile);
/// A pointwise group with an input contiguous along another dim than its
/// outputs (a transpose), through shared-memory tiles (PointwiseTranspose.cpp);
/// nullopt when it has none. generatePointwise is the plain form.
std::optional<KernelSpec> generateTransposedPointwise(FusionOp fusion);
llvm::Expected<KernelSpec> generateRowReduction(FusionOp fusion, const DeviceProfile &profile);
/// The column reduction kernel. A group that reads its data once (one phase,
/// per-column outputs) streams, its reduced rows split over up to `maxSplits`
/// blocks per tile (0: as many as fill the device); it fails when more would
/// be needed. Other groups re-read their tile per phase.
llvm::Expected<KernelSpec> generateColumnReduction(FusionOp fusion,
                                                   const DeviceProfile &profile,
                                                   int64_t maxSplits = 0);
/// The column reduction that reads its data once: teams of blocks split the
/// reduced rows, keep their chunk in shared memory, and exchange partial results
/// through global memory. Fails (returns an error) when the chunk cannot fit.
/// With `cluster` (sm_90+), a thread block cluster is the team: partials move
/// through distributed shared memory and the barrier is the cluster's.
llvm::Expected<KernelSpec> generateCooperativeColumnReduction(FusionOp fusion,
                                                              const DeviceProfile &profile,
                                                              bool cluster);
/// softmax over the reduced (leading) dims on sm_90+: max and sum in one
/// online pass over a cluster's 128-byte column tile kept in registers, shared
/// memory and L2 (OnlineColumnSoftmax.cpp). Fails when the group is not that
/// pattern or its tile does not fit.
llvm::Expected<KernelSpec> generateOnlineColumnSoftmax(FusionOp fusion,
                                                       const DeviceProfile &profile);
/// A softmax streamed between two products: attention (AttentionKernel.cpp).
llvm::Expected<KernelSpec> generateAttention(FusionOp fusion, const DeviceProfile &profile);
/// Several 1-64 row matmuls of the same A in one dot-product kernel (SiblingGemv.cpp;
/// past 8 rows its tensor-core form).
llvm::Expected<KernelSpec> generateSiblingGemv(FusionOp fusion, const DeviceProfile &profile);
/// The matmul group on fusec's kernel of family `path` (the planner's
/// choice, one of the fusec GEMM cases of KernelFamily), with the group's
/// epilogue and prologue: its tile configuration (heuristic, tuned or
/// candidate) among that kernel's, and the launch (GemmLaunch.cpp).
llvm::Expected<KernelSpec> generateGemm(FusionOp fusion, KernelFamily path,
                                        const DeviceProfile &profile, const std::string &arch,
                                        const GemmChoice &choice);
/// "// kernel k0_add_gelu: nodes h, y; 64 MiB read+written; predicted 22.4 us" etc.
std::string headerComment(FusionOp fusion, const KernelSpec &spec);
/// The first statement of every kernel body (printKernel writes it): waits for
/// the kernel before it in the stream, which the runtime may launch this one
/// beside (programmatic dependent launch; fz_after_prior in Prelude.cpp).
inline constexpr const char *kAfterPrior =
    "  fz_after_prior();  // the previous kernel's writes are visible from here on\n";
/// The first statement instead of kAfterPrior of a kernel that waits per role
/// (KernelLaunch::readsBeforeWait): it reads a graph input that no kernel
/// writes before the wait, and nothing else.
inline constexpr const char *kWaitPerRole =
    "  // fz_after_prior() per role: only the weights are read before it\n";
/// The parameters "const fz_bf16 *__restrict__ in0", ..., "fz_bf16 *__restrict__ out0".
std::vector<KernelParam> parameters(FusionOp fusion);
/// The scratch parameter, after those.
inline const KernelParam kScratchParam{"unsigned char *__restrict__ ", "fz_scratch"};
/// Largest element size among the fusion's inputs and outputs.
int64_t maxElementBytes(FusionOp fusion);
/// Index type to use: "int" when every offset fits in 31 bits, else "long long".
const char *indexType(FusionOp fusion);
} // namespace detail

} // namespace fusec::codegen
