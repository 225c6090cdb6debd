//===- Attention.cpp - a softmax streamed between two products ------------===//
//
// Groups the planner formed by the streaming-reduction rule
// (schedule/AttentionForm.h; transforms/FormAttention.cpp): S = Q K^T, the
// elementwise ops on it, a row softmax and P V in one kernel
// (codegen/AttentionKernel.cpp), S and P never in memory. Its time: both
// products at fusec's mma.sync rate, less what the softmax between them
// costs (an exponential per score, the rows' max and sum, the rescaling),
// or its bytes at the copy rate, whichever is longer. Under a causal mask
// outlining prices only the tiles the kernel computes.
//
//===----------------------------------------------------------------------===//
#include "compiler/families/Families.h"
#include "compiler/schedule/AttentionForm.h"

#include <algorithm>
#include <functional>
#include <vector>

namespace fusec {
namespace {

// Fitted to the H200 measurements in bench/NOTES.md ("the first
// streamed-softmax kernel"): the kernel's products run at 1.16 times the
// portable GEMM's rate (kAttentionMmaShare); a score takes about 30 fp32
// operations (the group's ops, max, exponential, sum, rescaling, the 16-bit
// packing); a causal tile costs 1.29 times an unmasked one (the mask at
// every score, the diagonal tiles' idle lanes).
constexpr double kOpsPerScore = 30;
constexpr double kCausalCost = 1.29;
// The Hopper form (wgmma, two computing warpgroups taking turns): its
// products at 0.84 of fusec's wgmma GEMM rate, the softmax of one
// warpgroup under the other's products (a tile costs the longer of the
// two), and about 6.4 us a block that nothing hides (barriers, the first
// tiles' loads and softmax, the output's store). Fitted to the four H200
// measurements of bench/NOTES.md ("the Hopper form").
constexpr double kWgmmaShare = 0.84;
constexpr double kHopperBlockSeconds = 6.4e-6;

} // namespace

namespace families {
namespace {

class Attention final : public KernelFamilyDef {
public:
  KernelFamily id() const override { return KernelFamily::Attention; }
  GroupKind kind() const override { return GroupKind::Attention; }
  std::string reject(FusionOp fusion, const FamilyTarget &) const override {
    MatmulOp output;
    for (mlir::Operation &op : fusion.getBodyBlock())
      if (auto mm = llvm::dyn_cast<MatmulOp>(op))
        output = mm;
    std::string why;
    if (!output || !matchAttention(output, why))
      return why.empty() ? "not a softmax streamed between two products" : why;
    return "";
  }
  llvm::Expected<KernelSpec> emit(FusionOp fusion, const FamilyTarget &t) const override {
    DeviceProfile target = t.profile;
    target.arch = t.arch;
    return codegen::detail::generateAttention(fusion, target);
  }
  double seconds(const Cost &c, const DeviceProfile &p) const override {
    // Without the group's shapes (attentionSeconds has them): the products
    // at the rate measured on long sequences.
    return rooflineSeconds(c, p, {p.gemmBandwidthFraction, p.gemmFlopsPerSec * kAttentionMmaShare});
  }
};

} // namespace

double attentionSeconds(const AttentionMatch &m, const DeviceProfile &p) {
  // Blocks of `rows` queries run `blocksPerSm` to an SM; each streams its key
  // tiles (under a causal mask, up to its last query), the longest blocks
  // first. A tile costs both products on tensor cores and, per score, the
  // elementwise ops, the max, the exponential, the sum and the rescaling on
  // the CUDA cores: one after the other (portable), or the longer of the two
  // (Hopper). The time is the most any SM slot runs.
  const AttentionTiles t = attentionTiles(m, p);
  if (t.decode)
    return decodeAttentionSeconds(m, t, p);
  std::vector<int64_t> work = m.keyTilesPerBlock(t);
  int64_t slots = std::max<int64_t>(1, t.blocksPerSm * int64_t(p.smCount));
  double slot = 1.0 / static_cast<double>(slots);
  double rate = t.wgmma ? p.wgmmaFlopsPerSec * kWgmmaShare : p.gemmFlopsPerSec * kAttentionMmaShare;
  double tensor = 4.0 * double(t.rows * t.keys * m.headDim) / (rate * slot);
  double scores = static_cast<double>(t.rows * t.keys) * kOpsPerScore / (p.fp32FlopsPerSec * slot);
  double tile = (t.wgmma ? std::max(tensor, scores) : tensor + scores) * (m.causal ? kCausalCost : 1.0);
  double block = t.wgmma ? kHopperBlockSeconds : 0.0;
  // Longest first onto the least loaded of the slots.
  std::vector<double> load(static_cast<size_t>(slots), 0.0);
  std::sort(work.begin(), work.end(), std::greater<>());
  for (int64_t tiles : work)
    for (int64_t b = 0; b < m.batch; ++b) {
      // Blocks of equal length land in turn, so the slots stay ordered.
      auto least = std::min_element(load.begin(), load.end());
      *least += static_cast<double>(tiles) * tile + block;
    }
  return *std::max_element(load.begin(), load.end()) + p.launchSeconds;
}

const KernelFamilyDef &attention() {
  static const Attention family;
  return family;
}

} // namespace families
} // namespace fusec
