//===- AttentionKernel.cpp - the streamed softmax of a product, mma.sync ---===//
//
// The attention family's kernel (families/Attention.cpp): O = softmax(f(Q
// K^T)) V with f the group's elementwise ops on the scores (scale, masks),
// without S or P in memory. A block of 8 warps owns 128 query rows of one
// batch entry (16 rows a warp, its Q tile in shared memory) and streams the
// keys and values in tiles of 64 rows through two shared-memory buffers
// (cp.async, the next tile loading while this one is used). Per tile: S = Q
// K^T on tensor cores (mma.sync m16n8k16, fp32 accumulators); f at each
// element; the online softmax keeps each row's running max m and sum l in
// fp32, rescales the output accumulators by exp(m_old - m_new) when the max
// grows, and turns the exponentials into the A fragments of P V straight
// from the accumulators' registers. Keys past the end are -inf. A row whose
// logits are all -inf ends 0 / 0 = NaN, as the reference's softmax gives.
//
// On Hopper (schedule/AttentionForm.h, attentionTiles) both products are
// wgmma: each of the two warpgroups owns 64 of the block's query rows, the
// tiles sit in shared memory 128-byte swizzled (as wgmma reads them: the
// copies place each 16-byte chunk), tiles of 128 keys, S = Q K^T with both
// operands from shared memory and O += P V with P from registers (the same
// fragments) and V read N-major. The accumulators keep the mma.sync layout,
// so the softmax and the store are one text for both forms.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/ElementEmitter.h"
#include "compiler/codegen/GemmGen.h"
#include "compiler/codegen/KernelSpec.h"
#include "compiler/codegen/ScalarOps.h"
#include "compiler/cost/CostModel.h"
#include "compiler/schedule/AttentionForm.h"
#include "compiler/schedule/StridedView.h"

using namespace mlir;

namespace fusec::codegen::detail {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

constexpr int kThreads = 256;  ///< 8 warps: a warp per 16 query rows

/// The Hopper form's register fences: the compiler keeps accumulators and
/// fragments in place, and orders its own reads and writes of them, around
/// the asynchronous products (which it cannot see read or write them).
/// fz_wg_desc_mn: an N-major B tile of 128-byte swizzled rows (one per
/// key), 64-column slabs `slab` bytes apart, 8-key groups 1024 bytes apart.
const char *kKeepHelpers = R"(template <int N> __device__ __forceinline__ void fz_keep(float (&r)[N][4]) {
  #pragma unroll
  for (int i = 0; i < N; ++i)
    asm volatile("" : "+f"(r[i][0]), "+f"(r[i][1]), "+f"(r[i][2]), "+f"(r[i][3]) :: "memory");
}
template <int N> __device__ __forceinline__ void fz_keep(unsigned (&r)[N][4]) {
  #pragma unroll
  for (int i = 0; i < N; ++i)
    asm volatile("" : "+r"(r[i][0]), "+r"(r[i][1]), "+r"(r[i][2]), "+r"(r[i][3]) :: "memory");
}
// Arrives at hardware barrier `id` of `n` threads without waiting.
__device__ __forceinline__ void fz_bar_arrive(int id, int n) {
  asm volatile("bar.arrive %0, %1;" :: "r"(id), "r"(n) : "memory");
}
// A box of the 3-D tensor map at (c0 = column, c1 = row, c2 = matrix).
__device__ __forceinline__ void fz_tma_3d(unsigned dst, const fz_tmap *map, unsigned bar, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3, %4}], [%5];"
               :: "r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
               : "memory");
}
__device__ __forceinline__ unsigned long long fz_wg_desc_mn(unsigned addr, unsigned slab) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)((slab >> 4) & 0x3FFF) << 16) |
         (64ull << 32) | (1ull << 62);
}
)";

/// One operand as the kernel reads it: a block argument's rows, the head
/// dim contiguous (or for K, with `keysContiguous`, rows of keys per head
/// dim element).
struct Rows {
  std::string ptr;
  int64_t offset = 0, ld = 0, batchStride = 0;
  bool keysContiguous = false;
  unsigned arg = 0;  ///< the kernel argument
};

} // namespace

llvm::Expected<KernelSpec> generateAttention(FusionOp fusion, const DeviceProfile &profile) {
  auto fail = [](const std::string &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", why.c_str());
  };
  MatmulOp output;
  for (Operation &op : fusion.getBodyBlock())
    if (auto mm = dyn_cast<MatmulOp>(op))
      output = mm;
  std::string why;
  std::optional<AttentionMatch> m = output ? matchAttention(output, why) : std::nullopt;
  if (!m)
    return fail(why.empty() ? "not a streamed softmax of a product" : why);
  std::vector<int64_t> batch = matmulBatchShape(m->scores);
  auto rows = [&](Value v, char as) -> std::optional<Rows> {
    auto arg = dyn_cast<BlockArgument>(viewSource(v));
    auto l = matmulOperandLayout(v, batch, as);
    if (!arg || !l)
      return std::nullopt;
    return Rows{ElementEmitter::argName(arg.getArgNumber()), l->offset, l->ld,
                l->batch > 1 ? l->batchStride : 0, as == 'c' && l->rowMajor, arg.getArgNumber()};
  };
  std::optional<Rows> q = rows(m->scores.getLhs(), 'r'), k = rows(m->scores.getRhs(), 'c'),
                      v = rows(m->output.getRhs(), 'c');
  if (!q || !k || !v)
    return fail("the attention kernel reads queries, keys and values from the group's inputs");
  const int64_t L = m->queries, S = m->keys, D = m->headDim, B = m->batch;
  const AttentionTiles tiles = attentionTiles(*m, profile);
  const bool wg = tiles.wgmma;
  const int64_t R = tiles.rows, N = tiles.keys;
  // Shared-memory rows: padded by 16 bytes (ldmatrix without conflicts), or
  // for wgmma 64 elements (128 bytes) a row, one tile column after another.
  const int64_t ld = D + 8;
  // A tile of keys: N rows of D, or with the keys contiguous D rows of N.
  const int64_t kld = N + 8;
  const int64_t kTile = wg ? N * D : k->keysContiguous ? D * kld : N * ld;
  const int64_t vTile = wg ? N * D : N * ld, qTile = wg ? R * D : R * ld;
  DType dt = dtypeOf(m->scores.getLhs());
  const std::string T = storageType(dt);
  const std::string mma = dt == DType::BF16 ? "fz_mma_bf16" : "fz_mma_f16";
  const std::string To = storageType(dtypeOf(output.getResult()));

  // f at one score: the group's ops from the product to the softmax's input.
  std::vector<std::string> vars;
  for (size_t d = 0; d < batch.size(); ++d)
    vars.push_back("fz_bi" + str(d));
  vars.push_back("fz_i");
  vars.push_back("fz_j");
  ElementEmitter e(fusion, vars, "    ");
  Operation *scoresOp = m->scores.getOperation();
  bool foreign = false;
  e.reduced = [&](Operation *op) {
    foreign |= op != scoresOp;
    return std::string("fz_s");
  };
  std::string logit = e.emit(m->logits, ElementEmitter::identity(vars.size()));
  if (foreign)
    return fail("the attention kernel's scores depend on another reduction");
  std::string logitCode = e.takeCode();

  KernelSpec spec;
  spec.name = fusion->getAttrOfType<StringAttr>("name").str();
  spec.family = "attention";
  KernelText &t = spec.text;
  // Portable: two blocks an SM (16 warps) hide the loads and the softmax
  // behind each other's products; the Q fragments are read from shared
  // memory at each tile instead of held, which keeps a thread within the 128
  // registers that allows. Hopper: a warpgroup's S and O accumulators (64 +
  // up to 64 registers a thread) leave room for one block.
  t.qualifiers = "__launch_bounds__(" + str(wg ? kThreads + 128 : kThreads) + ", " +
                 str(tiles.blocksPerSm) + ")";
  t.params = parameters(fusion);
  if (wg) {  // the TMA's views of K and V (spec.tensorMaps below), the barriers
    t.moreParams = ",\n    const __grid_constant__ fz_tmap fz_tmQ, const __grid_constant__ fz_tmap "
                   "fz_tmK, const __grid_constant__ fz_tmap fz_tmV";
    t.staticShared = true;
  }
  std::string s;
  if (wg) {
    // 128-byte swizzled tiles need 1024-byte aligned buffers.
    s += "  extern __shared__ __align__(1024) unsigned char fz_dyn[];\n";
    s += "  " + T + " *const fz_sq = reinterpret_cast<" + T + " *>(fz_dyn + ((1024u - (fz_smem_u32(fz_dyn) & 1023u)) & 1023u));\n";
  } else {
    s += "  extern __shared__ __align__(16) unsigned char fz_dyn[];\n";
    s += "  " + T + " *const fz_sq = reinterpret_cast<" + T + " *>(fz_dyn);\n";
  }
  s += "  " + T + " *const fz_sk = fz_sq + " + str(qTile) + ";  // two tiles of keys\n";
  s += "  " + T + " *const fz_sv = fz_sk + " + str(2 * kTile) + ";  // two of values\n";
  if (wg)  // warpgroup 0 loads (warps -4 to -1), 1 and 2 compute (warps 0 to 7)
    s += "  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32 - 4;\n";
  else
    s += "  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;\n";
  s += "  const float fz_ninf = __int_as_float(0xff800000);\n";
  // The last query tiles first: under a causal mask they stream the most
  // keys, and the short ones fill in behind them.
  s += "  const int fz_q0 = (gridDim.x - 1 - blockIdx.x) * " + str(R) + ";\n";
  s += "  const long long fz_b = blockIdx.y;\n";
  if (!batch.empty()) {
    s += "  long long fz_rest = fz_b;\n";
    for (size_t d = batch.size(); d-- > 0;) {
      s += "  const int fz_bi" + str(d) + " = (int)(fz_rest % " + str(batch[d]) + ");\n";
      s += "  fz_rest /= " + str(batch[d]) + ";\n";
    }
  }
  auto base = [&](const Rows &r) {
    return r.ptr + " + " + str(r.offset) + " + fz_b * " + str(r.batchStride) + "LL";
  };
  s += "  const " + T + " *const fz_gq = " + base(*q) + ";\n";
  s += "  const " + T + " *const fz_gk = " + base(*k) + ";\n";
  s += "  const " + T + " *const fz_gv = " + base(*v) + ";\n";
  // Tiles of `tileRows` x D, 16 bytes a copy; rows past the end are zeros.
  // For wgmma, 64-column slabs of tileRows x 128 bytes, the 16-byte chunk c
  // of row r at c ^ (r % 8) (the 128-byte swizzle).
  auto tile = [&](int64_t tileRows, const std::string &dst, const std::string &src,
                  const std::string &row0, int64_t rowsTotal, int64_t srcLd) {
    std::string at = wg ? "(k8 / 64) * " + str(tileRows * 64) + " + r * 64 + (((k8 / 8) % 8) ^ (r % 8)) * 8"
                        : "r * " + str(ld) + " + k8";
    return "    for (int c = threadIdx.x; c < " + str(tileRows * D / 8) + "; c += " + str(kThreads) +
           ") {\n      const int r = c / " + str(D / 8) + ", k8 = (c % " + str(D / 8) +
           ") * 8;\n      const int g = " + row0 + " + r;\n      fz_cp16z(" + dst + " + " + at +
           ", " + src + " + (long long)min(g, " + str(rowsTotal - 1) + ") * " + str(srcLd) +
           " + k8, g < " + str(rowsTotal) + ");\n    }\n";
  };
  // Keys stored along rows (K^T contiguous over keys): D rows of N keys,
  // S a multiple of 8 (16-byte copies).
  auto keyTile = [&](const std::string &dst, const std::string &j0) {
    if (!k->keysContiguous)
      return tile(N, dst, "fz_gk", j0, S, k->ld);
    return "    for (int c = threadIdx.x; c < " + str(D * N / 8) + "; c += " + str(kThreads) +
           ") {\n      const int d = c / " + str(N / 8) + ", c8 = (c % " + str(N / 8) +
           ") * 8;\n      const int g = " + j0 + " + c8;\n      fz_cp16z(" + dst + " + d * " +
           str(kld) + " + c8, fz_gk + (long long)d * " + str(k->ld) + " + min(g, " + str(S - 8) +
           "), g < " + str(S) + ");\n    }\n";
  };
  // S = Q K^T for this warp's 16 rows and the N keys of tile `kt`.
  auto scores = [&](const std::string &kt) {
    std::string x = "    float fz_acc[" + str(N / 8) + "][4];\n";
    if (wg) {
      // The warpgroup's 64 rows: Q from its slab rows, K^T as the K-major B.
      x += "    {\n      const unsigned fz_qa = fz_smem_u32(fz_sq) + (warp / 4) * 8192, fz_ka = fz_smem_u32(" + kt + ");\n";
      x += "      fz_wg_fence();\n";
      x += "      #pragma unroll\n      for (int kk = 0; kk < " + str(D / 16) + "; ++kk)\n";
      x += "        fz_wgmma_s(fz_acc, fz_wg_desc(fz_qa + (kk / 4) * " + str(R * 128) +
           " + (kk % 4) * 32), fz_wg_desc(fz_ka + (kk / 4) * " + str(N * 128) +
           " + (kk % 4) * 32), kk > 0);\n";
      x += "      fz_wg_commit();\n    }\n";
      return x;
    }
    x += "    #pragma unroll\n    for (int n = 0; n < " + str(N / 8) + "; ++n) fz_acc[n][0] = fz_acc[n][1] = "
         "fz_acc[n][2] = fz_acc[n][3] = 0.f;\n";
    x += "    #pragma unroll\n    for (int kk = 0; kk < " + str(D / 16) + "; ++kk) {\n";
    x += "      unsigned fz_qf[4];\n";
    x += "      fz_ldsm4(fz_qf, fz_sq + (warp * 16 + lane % 16) * " + str(ld) +
         " + kk * 16 + (lane / 16) * 8);\n";
    x += "      #pragma unroll\n      for (int j = 0; j < " + str(N / 16) + "; ++j) {\n        unsigned r[4];\n";
    if (k->keysContiguous)
      x += "        fz_ldsm4t(r, " + kt + " + (kk * 16 + ((lane / 8) % 2) * 8 + lane % 8) * " + str(kld) +
           " + j * 16 + (lane / 16) * 8);\n";
    else
      x += "        fz_ldsm4(r, " + kt + " + (j * 16 + (lane / 16) * 8 + lane % 8) * " + str(ld) +
           " + kk * 16 + ((lane / 8) % 2) * 8);\n";
    x += "        " + mma + "(fz_acc[2 * j], fz_qf, r[0], r[1]);\n";
    x += "        " + mma + "(fz_acc[2 * j + 1], fz_qf, r[2], r[3]);\n      }\n    }\n";
    return x;
  };
  // f, and the online softmax of the two rows this thread holds: the
  // exponentials in fz_acc, the rows' max and sum updated. The output's
  // rescaling by exp(m_old - m_new) is done here, or (`later`) kept in fz_sc
  // for when the product in flight has finished with fz_o.
  auto softmax = [&](bool later) {
    const std::string eachScore = "      #pragma unroll\n      for (int n = 0; n < " + str(N / 8) +
                                  "; ++n)\n        #pragma unroll\n        for (int c = 0; c < 2; ++c) {\n";
    std::string x = "    #pragma unroll\n    for (int h = 0; h < 2; ++h) {\n";
    x += "      const int fz_i = min(fz_q0 + warp * 16 + lane / 4 + 8 * h, " + str(L - 1) + ");\n";
    x += "      float fz_mx = fz_ninf;\n";
    x += eachScore;
    x += "          const int fz_j = fz_t * " + str(N) + " + n * 8 + 2 * (lane % 4) + c;\n";
    x += "          const float x = fz_j < " + str(S) +
         " ? fz_logit(fz_acc[n][2 * h + c], fz_i, fz_j) : fz_ninf;\n";
    x += "          fz_acc[n][2 * h + c] = x;\n          fz_mx = fmaxf(fz_mx, x);\n        }\n";
    x += "      fz_mx = fmaxf(fz_mx, __shfl_xor_sync(0xffffffffu, fz_mx, 1));\n";
    x += "      fz_mx = fmaxf(fz_mx, __shfl_xor_sync(0xffffffffu, fz_mx, 2));\n";
    x += "      const float fz_new = fmaxf(fz_m[h], fz_mx);\n";
    x += "      // all -inf so far: nothing to rescale, exponentials of -inf are 0\n";
    x += "      const float fz_base = fz_new == fz_ninf ? 0.f : fz_new;\n";
    // exp(x - m) as 2^(x log2 e - m log2 e): one fma and the exponential.
    x += "      const float fz_bl = fz_base * 1.44269504f;\n";
    x += "      const float fz_scale = fz_ex2(fmaf(fz_m[h], 1.44269504f, -fz_bl));\n";
    x += "      fz_m[h] = fz_new;\n      fz_l[h] *= fz_scale;\n";
    if (later)
      x += "      fz_sc[h] = fz_scale;\n";
    else
      x += "      #pragma unroll\n      for (int d = 0; d < " + str(D / 8) +
           "; ++d) { fz_o[d][2 * h] *= fz_scale; fz_o[d][2 * h + 1] *= fz_scale; }\n";
    x += eachScore;
    x += "          const float p = fz_ex2(fmaf(fz_acc[n][2 * h + c], 1.44269504f, -fz_bl));\n";
    x += "          fz_acc[n][2 * h + c] = p;\n          fz_l[h] += p;\n        }\n    }\n";
    return x;
  };
  // The accumulators of two key blocks of 8 are one A fragment of P V.
  auto pack = [&](const std::string &dst, const std::string &kk) {
    return "      " + dst + "[0] = fz_pack2(fz_acc[2 * " + kk + "][0], fz_acc[2 * " + kk + "][1]);\n" +
           "      " + dst + "[1] = fz_pack2(fz_acc[2 * " + kk + "][2], fz_acc[2 * " + kk + "][3]);\n" +
           "      " + dst + "[2] = fz_pack2(fz_acc[2 * " + kk + " + 1][0], fz_acc[2 * " + kk + " + 1][1]);\n" +
           "      " + dst + "[3] = fz_pack2(fz_acc[2 * " + kk + " + 1][2], fz_acc[2 * " + kk + " + 1][3]);\n";
  };
  auto declarations = [&]() {
    std::string x = "  // f at score fz_s of query row fz_i and key fz_j\n";
    x += "  auto fz_logit = [&](float fz_s, int fz_i, int fz_j) -> float {\n" + logitCode +
         "    return " + logit + ";\n  };\n";
    x += "  float fz_o[" + str(D / 8) + "][4];\n";
    x += "  #pragma unroll\n  for (int d = 0; d < " + str(D / 8) +
         "; ++d) fz_o[d][0] = fz_o[d][1] = fz_o[d][2] = fz_o[d][3] = 0.f;\n";
    x += "  float fz_m[2] = {fz_ninf, fz_ninf}, fz_l[2] = {0.f, 0.f};\n";
    if (m->causal)
      // Keys past a block's last query are masked for all its rows: their
      // tiles are skipped, not computed.
      x += "  const int fz_tiles = min(" + str((S + N - 1) / N) + ", (fz_q0 + " + str(R - 1) +
           ") / " + str(N) + " + 1);\n";
    else
      x += "  const int fz_tiles = " + str((S + N - 1) / N) + ";\n";
    return x;
  };
  auto kBuf = [&](const std::string &t) { return "fz_sk + ((" + t + ") & 1) * " + str(kTile); };
  auto vBuf = [&](const std::string &t) { return "fz_sv + ((" + t + ") & 1) * " + str(vTile); };
  if (!wg) {
    s += "  {  // the queries, and the first tile of keys and values\n";
    s += tile(R, "fz_sq", "fz_gq", "fz_q0", L, q->ld);
    s += keyTile("fz_sk", "0");
    s += tile(N, "fz_sv", "fz_gv", "0", S, v->ld);
    s += "  }\n  fz_cp_commit();\n";
    s += declarations();
    s += "  #pragma unroll 1\n  for (int fz_t = 0; fz_t < fz_tiles; ++fz_t) {\n";
    s += "    if (fz_t + 1 < fz_tiles) {  // the next tile loads while this one is used\n";
    s += "      " + T + " *const fz_nk = " + kBuf("fz_t + 1") + ";\n";
    s += "      " + T + " *const fz_nv = " + vBuf("fz_t + 1") + ";\n";
    s += "      const int fz_j0 = (fz_t + 1) * " + str(N) + ";\n";
    s += keyTile("fz_nk", "fz_j0");
    s += tile(N, "fz_nv", "fz_gv", "fz_j0", S, v->ld);
    s += "    }\n    fz_cp_commit();\n    fz_cp_wait<1>();\n";
    s += "    __syncthreads();\n";
    s += "    const " + T + " *const fz_kt = " + kBuf("fz_t") + ";\n";
    s += "    const " + T + " *const fz_vt = " + vBuf("fz_t") + ";\n";
    s += scores("fz_kt");
    s += softmax(false);
    s += "    #pragma unroll\n    for (int kk = 0; kk < " + str(N / 16) + "; ++kk) {\n";
    s += "      unsigned fz_pa[4];\n";
    s += pack("fz_pa", "kk");
    s += "      #pragma unroll\n      for (int dj = 0; dj < " + str(D / 16) +
         "; ++dj) {\n        unsigned r[4];\n";
    s += "        fz_ldsm4t(r, fz_vt + (kk * 16 + ((lane / 8) % 2) * 8 + lane % 8) * " + str(ld) +
         " + dj * 16 + (lane / 16) * 8);\n";
    s += "        " + mma + "(fz_o[2 * dj], fz_pa, r[0], r[1]);\n";
    s += "        " + mma + "(fz_o[2 * dj + 1], fz_pa, r[2], r[3]);\n      }\n    }\n";
    s += "    __syncthreads();  // this tile's buffers are the next-but-one's\n  }\n";
  } else {
    // Hopper, warp-specialized: warpgroup 0's first thread loads Q and the
    // K and V tiles by the TMA, each into a free buffer (an "empty" barrier
    // per buffer, which the 8 computing warps arrive at once their products
    // have read it), each filling a "full" barrier. The two computing
    // warpgroups take turns on the tensor cores (named barriers 1 and 2), so
    // one's softmax runs while the other's products do. In step t a
    // warpgroup issues S(t) and P(t - 1) V(t - 1), waits for S(t) only, runs
    // the softmax of tile t, and rescales the output once the second product
    // is done with it.
    auto pv = [&](const std::string &t) {
      // V is [keys, D] with D contiguous: the N-major B, 16 keys (2048
      // bytes) a step, its 64-column slabs N x 128 bytes apart.
      std::string x = "    {\n      const unsigned fz_va = fz_smem_u32(" + vBuf(t) + ");\n      fz_wg_fence();\n";
      x += "      #pragma unroll\n      for (int kk = 0; kk < " + str(N / 16) + "; ++kk)\n";
      x += "        fz_wgmma_o(fz_o, fz_pa[kk], fz_wg_desc_mn(fz_va + kk * 2048, " + str(N * 128) +
           "), 1);\n      fz_wg_commit();\n    }\n";
      return x;
    };
    auto packAll = [&]() {
      return "    #pragma unroll\n    for (int kk = 0; kk < " + str(N / 16) + "; ++kk) {\n" +
             pack("  fz_pa[kk]", "kk") + "    }\n";
    };
    auto rescale = "    #pragma unroll\n    for (int d = 0; d < " + str(D / 8) +
                   "; ++d) {\n      fz_o[d][0] *= fz_sc[0]; fz_o[d][1] *= fz_sc[0];\n"
                   "      fz_o[d][2] *= fz_sc[1]; fz_o[d][3] *= fz_sc[1];\n    }\n";
    // Barriers: full 0, 1: K's buffers; 2, 3: V's; 4: Q. Empty 0-3 likewise.
    auto bar = [&](const std::string &which, int base, const std::string &t) {
      return "fz_smem_u32(&" + which + "[" + str(base) + " + ((" + t + ") & 1)])";
    };
    // Tile `t` of K or V by the TMA: its 64-column boxes into the buffer's
    // slabs, the full barrier counting the bytes (boxes past the keys are
    // zeros, and count).
    auto load = [&](const Rows &r, const std::string &map, const std::string &full,
                    const std::string &buf, const std::string &row, int64_t rows) {
      std::string x = "      fz_mbar_expect_tx(" + full + ", " + str(rows * D * 2) + ");\n";
      for (int64_t c = 0; c < D / 64; ++c) {
        std::string dst = "fz_smem_u32(" + buf + ") + " + str(c * rows * 128);
        x += r.batchStride > 0 ? "      fz_tma_3d(" + dst + ", &" + map + ", " + full + ", " +
                                     str(c * 64) + ", " + row + ", (int)fz_b);\n"
                               : "      fz_tma_2d(" + dst + ", &" + map + ", " + full + ", " +
                                     str(c * 64) + ", " + row + ");\n";
      }
      return x;
    };
    auto parity = [](const std::string &t) { return "((" + t + ") >> 1) & 1"; };
    auto waitFull = [&](int base, const std::string &t) {
      return "    fz_mbar_wait(" + bar("fz_full", base, t) + ", " + parity(t) + ");\n";
    };
    auto release = [&](int base, const std::string &t) {
      return "    if (lane == 0) fz_mbar_arrive(" + bar("fz_empty", base, t) + ");\n";
    };
    // Turns on the tensor cores: a warpgroup waits for its turn (barrier 1 +
    // its index), issues its products, and hands the turn to the other.
    const std::string myTurn = "    fz_bar_sync(1 + warp / 4, 256);\n";
    const std::string yourTurn = "    fz_bar_arrive(2 - warp / 4, 256);\n";
    s += declarations();
    s += "  __shared__ __align__(8) unsigned long long fz_full[5], fz_empty[4];\n";
    s += "  if (threadIdx.x == 0) {\n";
    s += "    for (int b = 0; b < 5; ++b) fz_mbar_init(fz_smem_u32(&fz_full[b]), 1);\n";
    s += "    for (int b = 0; b < 4; ++b) fz_mbar_init(fz_smem_u32(&fz_empty[b]), 8);\n";
    s += "    asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");\n  }\n";
    s += "  __syncthreads();\n";
    s += "  if (warp < 0) {  // the loads\n";
    s += "    asm volatile(\"setmaxnreg.dec.sync.aligned.u32 24;\");\n";
    s += "    if (threadIdx.x == 0) {\n";
    s += load(*q, "fz_tmQ", "fz_smem_u32(&fz_full[4])", "fz_sq", "fz_q0", R);
    s += "      #pragma unroll 1\n      for (int t = 0; t < fz_tiles; ++t) {\n";
    s += "        if (t >= 2) fz_mbar_wait(" + bar("fz_empty", 0, "t") + ", " + parity("t - 2") + ");\n";
    s += load(*k, "fz_tmK", bar("fz_full", 0, "t"), kBuf("t"), "t * " + str(N), N);
    s += "        if (t >= 2) fz_mbar_wait(" + bar("fz_empty", 2, "t") + ", " + parity("t - 2") + ");\n";
    s += load(*v, "fz_tmV", bar("fz_full", 2, "t"), vBuf("t"), "t * " + str(N), N);
    s += "      }\n    }\n    return;\n  }\n";
    s += "  asm volatile(\"setmaxnreg.inc.sync.aligned.u32 240;\");\n";
    s += "  unsigned fz_pa[" + str(N / 16) + "][4];  // P(t - 1), the A fragments of its product\n";
    s += "  float fz_sc[2];\n";
    s += "  if (warp >= 4) fz_bar_arrive(1, 256);  // the first warpgroup's turn first\n";
    s += "  fz_mbar_wait(fz_smem_u32(&fz_full[4]), 0);\n";
    s += "  {\n  const int fz_t = 0;\n";
    s += waitFull(0, "0");
    s += myTurn;
    s += scores("fz_sk");
    s += yourTurn;
    s += "    fz_wg_wait<0>();\n    fz_keep(fz_acc);\n";
    s += release(0, "0");
    s += softmax(true);
    s += packAll();
    s += "  }\n";
    s += "  #pragma unroll 1\n  for (int fz_t = 1; fz_t < fz_tiles; ++fz_t) {\n";
    s += "    fz_keep(fz_o);\n    fz_keep(fz_pa);\n";
    s += waitFull(0, "fz_t");
    s += waitFull(2, "fz_t - 1");
    s += myTurn;
    s += scores(kBuf("fz_t"));
    s += pv("fz_t - 1");
    s += yourTurn;
    s += "    fz_wg_wait<1>();  // S(t); P(t - 1) V(t - 1) may still run\n    fz_keep(fz_acc);\n";
    s += release(0, "fz_t");
    s += softmax(true);
    s += "    fz_wg_wait<0>();\n    fz_keep(fz_o);\n    fz_keep(fz_pa);\n";
    s += release(2, "fz_t - 1");
    s += rescale;
    s += packAll();
    s += "  }\n";
    s += "  fz_keep(fz_o);\n  fz_keep(fz_pa);\n";
    s += waitFull(2, "fz_tiles - 1");
    s += myTurn;
    s += pv("fz_tiles - 1");
    s += yourTurn;
    s += "  fz_wg_wait<0>();\n  fz_keep(fz_o);\n  fz_keep(fz_pa);\n";
    s += "  if (warp < 4) fz_bar_sync(1, 256);  // the other's first hand-over, matched\n";
  }
  if (!wg)
    s += "  fz_cp_wait<0>();\n";
  // O / l, each row's sum gathered from the four threads that hold it.
  s += "  #pragma unroll\n  for (int h = 0; h < 2; ++h) {\n";
  s += "    float l = fz_l[h];\n";
  s += "    l += __shfl_xor_sync(0xffffffffu, l, 1);\n";
  s += "    l += __shfl_xor_sync(0xffffffffu, l, 2);\n";
  s += "    const int fz_i = fz_q0 + warp * 16 + lane / 4 + 8 * h;\n";
  s += "    if (fz_i < " + str(L) + ") {\n";
  s += "      " + To + " *const fz_row = out0 + (fz_b * " + str(L) + " + fz_i) * " + str(D) +
       "LL;\n";
  s += "      #pragma unroll\n      for (int d = 0; d < " + str(D / 8) + "; ++d) {\n";
  s += "        fz_row[d * 8 + 2 * (lane % 4)] = fz_out<" + To + ">::of(fz_o[d][2 * h] / l);\n";
  s += "        fz_row[d * 8 + 2 * (lane % 4) + 1] = fz_out<" + To +
       ">::of(fz_o[d][2 * h + 1] / l);\n      }\n    }\n  }\n";
  t.body = s;
  t.helpers = "// 2^x (the exponential unit's approximation, as __expf uses it).\n"
              "__device__ __forceinline__ float fz_ex2(float x) {\n"
              "  float y;\n  asm(\"ex2.approx.ftz.f32 %0, %1;\" : \"=f\"(y) : \"f\"(x));\n  return y;\n}\n"
              "// Two floats as the 16-bit pair of an mma fragment, the first in the low half.\n"
              "__device__ __forceinline__ unsigned fz_pack2(float lo, float hi) {\n"
              "  return (unsigned)fz_out<" + T + ">::of(lo).bits | ((unsigned)fz_out<" + T +
              ">::of(hi).bits << 16);\n}\n";
  if (wg) {
    WgmmaCall sc{int(N), T, "fz_wgmma_s", false, false, true};
    WgmmaCall oc{int(D), T, "fz_wgmma_o", true, true, true};
    t.helpers = std::string(kHopperHelpers) + wgmmaWrapper(sc) + wgmmaWrapper(oc) + t.helpers +
                kKeepHelpers;
  }
  if (wg)
    for (const Rows *r : {&*q, &*k, &*v}) {
      TensorMapParam m;
      m.arg = static_cast<int>(r->arg);
      m.bf16 = dt == DType::BF16;
      m.rows = static_cast<uint64_t>(r == &*q ? L : S);
      m.cols = static_cast<uint64_t>(D);
      m.rowStrideBytes = static_cast<uint64_t>(r->ld) * 2;
      m.offsetBytes = static_cast<uint64_t>(r->offset) * 2;
      m.boxRows = static_cast<uint32_t>(r == &*q ? R : N);
      m.boxCols = 64;
      if (r->batchStride > 0) {
        m.batches = static_cast<uint64_t>(B);
        m.batchStrideBytes = static_cast<uint64_t>(r->batchStride) * 2;
      }
      spec.tensorMaps.push_back(m);
    }
  spec.grid = static_cast<unsigned>((L + R - 1) / R);
  spec.gridY = static_cast<unsigned>(B);
  spec.block = wg ? kThreads + 128 : kThreads;
  spec.sharedBytes = static_cast<unsigned>(tiles.sharedBytes);
  if (spec.sharedBytes > profile.smemPerBlock)
    return fail("the attention kernel's tiles of head dim " + str(D) + " need " +
                str(spec.sharedBytes) + " bytes of shared memory, more than a block has");
  spec.schedule = "attention " + str(B) + " x " + str(L) + " queries x " + str(S) +
                  " keys, head dim " + str(D) + ": blocks of " + str(R) + " queries (" +
                  (wg ? "2 warpgroups, wgmma" : "8 warps, mma.sync") +
                  "), keys and values streamed in tiles of " + str(N) +
                  " through 2 buffers, online softmax in fp32; the scores never "
                  "leave the SM" + std::string(m->causal ? "; key tiles past a block's queries skipped (causal)" : "");
  return spec;
}

} // namespace fusec::codegen::detail
