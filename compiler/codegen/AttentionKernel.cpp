//===- AttentionKernel.cpp - the streamed softmax of a product ------------===//
//
// The attention family's kernel (families/Attention.cpp): O = softmax(f(Q
// K^T)) V with f the group's elementwise ops on the scores (scale, masks),
// without S or P in memory. Per tile of keys: S = Q K^T on tensor cores in
// fp32; f at each element; the online softmax keeps each row's running max
// m and sum l in fp32, rescales the output accumulators by exp(m_old -
// m_new) when the max grows, and turns the exponentials into the A
// fragments of P V straight from the accumulators' registers. Keys past the
// end are -inf. A row whose logits are all -inf ends 0 / 0 = NaN, as the
// reference's softmax gives.
//
// Two forms (attentionTiles, schedule/AttentionForm.h); their shared text is
// AttentionText.cpp:
//   * portable (here): a block of 8 warps owns 128 query rows of one batch
//     entry (16 rows a warp, its Q tile in shared memory) and streams the
//     keys and values in tiles of 64 rows through two shared-memory buffers
//     (cp.async, the next tile loading while this one is used); mma.sync
//     m16n8k16 with the operands read by ldmatrix.
//   * Hopper (AttentionHopper.cpp): TMA loads by a producer warpgroup, wgmma
//     for both products, two computing warpgroups taking turns.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/AttentionText.h"
#include "compiler/codegen/KernelSpec.h"

using namespace mlir;

namespace fusec::codegen::detail {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

} // namespace

std::string portableAttentionBody(const AttentionText &a) {
  const int64_t threads = a.R / 16 * 32;  // a warp per 16 query rows
  std::string s;
  // The last query tiles first: under a causal mask they stream the most
  // keys, and the short ones fill in behind them.
  s += a.item("(gridDim.x - 1 - blockIdx.x) * " + str(a.R), "blockIdx.y", "  ");
  s += "  const " + a.T + " *const fz_gq = " + a.base(a.q) + ";\n";
  s += "  const " + a.T + " *const fz_gk = " + a.base(a.k) + ";\n";
  s += "  const " + a.T + " *const fz_gv = " + a.base(a.v) + ";\n";
  const int64_t D = a.D, N = a.N, S = a.S;
  // Tiles of `tileRows` x D, 16 bytes a copy; rows past the end are zeros.
  auto tile = [&](int64_t tileRows, const std::string &dst, const std::string &src,
                  const std::string &row0, int64_t rowsTotal, int64_t srcLd) {
    return "    for (int c = threadIdx.x; c < " + str(tileRows * D / 8) + "; c += " + str(threads) +
           ") {\n      const int r = c / " + str(D / 8) + ", k8 = (c % " + str(D / 8) +
           ") * 8;\n      const int g = " + row0 + " + r;\n      fz_cp16z(" + dst + " + r * " +
           str(a.ld) + " + k8, " + src + " + (long long)min(g, " + str(rowsTotal - 1) + ") * " +
           str(srcLd) + " + k8, g < " + str(rowsTotal) + ");\n    }\n";
  };
  // Keys stored along rows (K^T contiguous over keys): D rows of N keys,
  // S a multiple of 8 (16-byte copies).
  auto keyTile = [&](const std::string &dst, const std::string &j0) {
    if (!a.k.keysContiguous)
      return tile(N, dst, "fz_gk", j0, S, a.k.ld);
    return "    for (int c = threadIdx.x; c < " + str(D * N / 8) + "; c += " + str(threads) +
           ") {\n      const int d = c / " + str(N / 8) + ", c8 = (c % " + str(N / 8) +
           ") * 8;\n      const int g = " + j0 + " + c8;\n      fz_cp16z(" + dst + " + d * " +
           str(a.kld) + " + c8, fz_gk + (long long)d * " + str(a.k.ld) + " + min(g, " + str(S - 8) +
           "), g < " + str(S) + ");\n    }\n";
  };
  s += "  {  // the queries, and the first tile of keys and values\n";
  s += tile(a.R, "fz_sq", "fz_gq", "fz_q0", a.L, a.q.ld);
  s += keyTile("fz_sk", "0");
  s += tile(N, "fz_sv", "fz_gv", "0", S, a.v.ld);
  s += "  }\n  fz_cp_commit();\n";
  s += a.declarations();
  s += "  #pragma unroll 1\n  for (int fz_t = 0; fz_t < fz_tiles; ++fz_t) {\n";
  s += "    if (fz_t + 1 < fz_tiles) {  // the next tile loads while this one is used\n";
  s += "      " + a.T + " *const fz_nk = " + a.kBuf("fz_t + 1") + ";\n";
  s += "      " + a.T + " *const fz_nv = " + a.vBuf("fz_t + 1") + ";\n";
  s += "      const int fz_j0 = (fz_t + 1) * " + str(a.N) + ";\n";
  s += keyTile("fz_nk", "fz_j0");
  s += tile(N, "fz_nv", "fz_gv", "fz_j0", S, a.v.ld);
  s += "    }\n    fz_cp_commit();\n    fz_cp_wait<1>();\n";
  s += "    __syncthreads();\n";
  s += "    const " + a.T + " *const fz_kt = " + a.kBuf("fz_t") + ";\n";
  s += "    const " + a.T + " *const fz_vt = " + a.vBuf("fz_t") + ";\n";
  s += a.scores("fz_kt");
  s += a.softmax(false);
  s += a.outputProduct("fz_vt");
  s += "    __syncthreads();  // this tile's buffers are the next-but-one's\n  }\n";
  s += "  fz_cp_wait<0>();\n";
  return s + a.store();
}

llvm::Expected<KernelSpec> generateAttention(FusionOp fusion, const DeviceProfile &profile) {
  llvm::Expected<AttentionText> text = AttentionText::of(fusion, profile);
  if (!text)
    return text.takeError();
  const AttentionText &a = *text;
  KernelSpec spec;
  spec.name = fusion->getAttrOfType<StringAttr>("name").str();
  spec.family = "attention";
  KernelText &t = spec.text;
  // Portable: two blocks an SM (16 warps) hide the loads and the softmax
  // behind each other's products; the Q fragments are read from shared
  // memory at each tile instead of held, which keeps a thread within the 128
  // registers that allows. Hopper: a warpgroup's S and O accumulators (64 +
  // up to 64 registers a thread) leave room for one block.
  const int64_t threads = a.tiles.decode ? 128 : a.wg ? a.R / 16 * 32 + 128 : a.R / 16 * 32;
  t.qualifiers = "__launch_bounds__(" + str(threads) + ", " + str(a.tiles.blocksPerSm) + ")";
  t.params = parameters(fusion);
  if (a.wg) {  // the TMA's views of Q, K and V (spec.tensorMaps), the barriers
    t.moreParams = ",\n    const __grid_constant__ fz_tmap fz_tmQ, const __grid_constant__ fz_tmap "
                   "fz_tmK, const __grid_constant__ fz_tmap fz_tmV";
    t.staticShared = true;
    spec.tensorMaps = hopperAttentionMaps(a);
  }
  t.body = a.buffers(a.wg ? 128 : 0) + (a.tiles.decode ? decodeAttentionBody(a)
                                        : a.wg         ? hopperAttentionBody(a)
                                                       : portableAttentionBody(a));
  t.helpers = a.wg ? hopperAttentionHelpers(a) : a.helpers();
  spec.grid = static_cast<unsigned>((a.L + a.R - 1) / a.R);
  spec.gridY = static_cast<unsigned>(a.B);
  if (a.tiles.decode) {  // splits x K/V entries x row tiles
    spec.grid = static_cast<unsigned>(a.tiles.splits);
    spec.gridY = static_cast<unsigned>(a.B / a.m.repeat);
    spec.gridZ = static_cast<unsigned>(a.m.rowTiles(a.tiles));
    const DecodeScratch scratch = decodeAttentionScratch(a);
    spec.scratchBytes = static_cast<unsigned>(scratch.bytes);
    spec.scratchZeroOnce = static_cast<unsigned>(scratch.counterBytes);
    if (spec.scratchBytes)
      t.params.push_back(kScratchParam);
  }
  spec.block = static_cast<unsigned>(threads);
  spec.sharedBytes = static_cast<unsigned>(a.tiles.sharedBytes);
  if (spec.sharedBytes > profile.smemPerBlock)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the attention kernel's tiles of head dim %lld need %u bytes of "
                                   "shared memory, more than a block has",
                                   (long long)a.D, spec.sharedBytes);
  spec.schedule = a.schedule();
  return spec;
}

} // namespace fusec::codegen::detail
