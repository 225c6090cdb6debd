//===- AttentionText.cpp - the kernel text both attention forms share -----===//
#include "compiler/codegen/AttentionText.h"

#include "compiler/codegen/ElementEmitter.h"
#include "compiler/codegen/ScalarOps.h"
#include "compiler/cost/CostModel.h"
#include "compiler/schedule/StridedView.h"

using namespace mlir;

namespace fusec::codegen::detail {
namespace {
std::string str(int64_t v) { return std::to_string(v); }
} // namespace

llvm::Expected<AttentionText> AttentionText::of(FusionOp fusion, const DeviceProfile &profile) {
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
  AttentionText a;
  a.m = *m;
  a.batch = matmulBatchShape(m->scores);
  auto rows = [&](Value v, char as) -> std::optional<AttentionRows> {
    auto arg = dyn_cast<BlockArgument>(viewSource(v));
    auto l = matmulOperandLayout(v, a.batch, as);
    if (!arg || !l)
      return std::nullopt;
    return AttentionRows{ElementEmitter::argName(arg.getArgNumber()), l->offset, l->ld,
                         l->batch > 1 ? l->batchStride : 0, as == 'c' && l->rowMajor,
                         arg.getArgNumber()};
  };
  // K or V through a repeat or in pieces (AttentionOperand), else as rows.
  auto pieces = [&](Value v, const std::optional<AttentionOperand> &in)
      -> std::optional<std::vector<AttentionRows>> {
    if (!in) {
      std::optional<AttentionRows> r = rows(v, 'c');
      if (!r)
        return std::nullopt;
      r->keys = m->keys;
      return std::vector<AttentionRows>{*r};
    }
    std::vector<AttentionRows> out;
    int64_t key0 = 0;
    for (const AttentionOperand::Piece &p : in->pieces) {
      auto arg = dyn_cast<BlockArgument>(viewSource(p.value));
      if (!arg)
        return std::nullopt;
      const MatrixLayoutView &l = p.layout;
      out.push_back({ElementEmitter::argName(arg.getArgNumber()), l.offset, l.ld,
                     l.batch > 1 ? l.batchStride : 0, false, arg.getArgNumber(), in->repeat,
                     key0, p.keys});
      key0 += p.keys;
    }
    return out;
  };
  std::optional<AttentionRows> q = rows(m->scores.getLhs(), 'r');
  std::optional<std::vector<AttentionRows>> k = pieces(m->scores.getRhs(), m->kIn),
                                            v = pieces(m->output.getRhs(), m->vIn);
  if (!q || !k || !v)
    return fail("the attention kernel reads queries, keys and values from the group's inputs");
  a.q = *q;
  a.ks = *k;
  a.vs = *v;
  a.k = a.ks.front();
  a.v = a.vs.front();
  a.L = m->queries, a.S = m->keys, a.D = m->headDim, a.B = m->batch;
  a.tiles = attentionTiles(*m, profile);
  a.wg = a.tiles.wgmma;
  a.R = a.tiles.rows, a.N = a.tiles.keys;
  a.rowOf = "      const int fz_i = min(fz_q0 + warp * 16 + lane / 4 + 8 * h, " + str(a.L - 1) + ");\n";
  a.keyOf = "fz_t * " + str(a.N);
  if (a.tiles.decode) {
    // A warp's 16 keys of the block's tile of 64; every warp holds the
    // block's 16 rows: row rho of the entry's R x L is query rho % L of
    // head fz_e * R + rho / L.
    const int64_t RL = m->repeat * a.L;
    a.N = a.tiles.keys / 4;
    a.warpRow = "0";
    a.rowOf = "      const int fz_rho = min(fz_r0 + lane / 4 + 8 * h, " + str(RL - 1) + ");\n" +
              "      const long long fz_hb = fz_e * " + str(m->repeat) + " + fz_rho / " + str(a.L) +
              ";\n      const int fz_i = fz_rho % " + str(a.L) + ";\n";
    a.keyOf = "(fz_t0 + fz_t) * " + str(a.tiles.keys) + " + warp * " + str(a.N);
    a.logitArgs = "fz_hb, fz_i, fz_j";
  }
  // Shared-memory rows: padded by 16 bytes (ldmatrix without conflicts), or
  // for wgmma 64 elements (128 bytes) a row, one tile column after another.
  a.ld = a.D + 8;
  // A tile of keys: N rows of D, or with the keys contiguous D rows of N.
  a.kld = a.N + 8;
  a.kTile = a.wg ? a.N * a.D : a.k.keysContiguous ? a.D * a.kld : a.N * a.ld;
  a.vTile = a.wg ? a.N * a.D : a.N * a.ld;
  a.qTile = a.wg ? a.R * a.D : a.R * a.ld;
  if (a.tiles.decode)  // a tile of the block's keys: the 4 warps' 16 each
    a.kTile = a.vTile = a.tiles.keys * a.ld;
  DType dt = dtypeOf(m->scores.getLhs());
  a.T = storageType(dt);
  a.mma = dt == DType::BF16 ? "fz_mma_bf16" : "fz_mma_f16";
  a.To = storageType(dtypeOf(output.getResult()));

  // f at one score: the group's ops from the product to the softmax's input.
  std::vector<std::string> vars;
  for (size_t d = 0; d < a.batch.size(); ++d)
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
  a.logit = e.emit(m->logits, ElementEmitter::identity(vars.size()));
  if (foreign)
    return fail("the attention kernel's scores depend on another reduction");
  a.logitCode = e.takeCode();
  return a;
}

std::string AttentionText::buffers(int threadsBeforeWarp0) const {
  std::string s;
  if (wg) {
    // 128-byte swizzled tiles need 1024-byte aligned buffers.
    s += "  extern __shared__ __align__(1024) unsigned char fz_dyn[];\n";
    s += "  " + T + " *const fz_sq = reinterpret_cast<" + T + " *>(fz_dyn + ((1024u - (fz_smem_u32(fz_dyn) & 1023u)) & 1023u));\n";
  } else {
    s += "  extern __shared__ __align__(16) unsigned char fz_dyn[];\n";
    s += "  " + T + " *const fz_sq = reinterpret_cast<" + T + " *>(fz_dyn);\n";
  }
  if (tiles.stages == 2) {
    s += "  " + T + " *const fz_sk = fz_sq + " + str(qTile) + ";  // two tiles of keys\n";
    s += "  " + T + " *const fz_sv = fz_sk + " + str(2 * kTile) + ";  // two of values\n";
  } else {
    s += "  " + T + " *const fz_sk = fz_sq + " + str(qTile) + ";  // " + str(tiles.stages) +
         " tiles of keys\n";
    s += "  " + T + " *const fz_sv = fz_sk + " + str(tiles.stages * kTile) + ";  // of values\n";
  }
  if (threadsBeforeWarp0)  // warpgroup 0 loads (warps -4 to -1), 1 and 2 compute (warps 0 to 7)
    s += "  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32 - " +
         str(threadsBeforeWarp0 / 32) + ";\n";
  else
    s += "  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;\n";
  s += "  const float fz_ninf = __int_as_float(0xff800000);\n";
  return s;
}

std::string AttentionText::item(const std::string &q0, const std::string &b,
                                const std::string &in) const {
  std::string x = in + "const int fz_q0 = " + q0 + ";\n";
  x += in + "const long long fz_b = " + b + ";\n";
  return x + batchIndices(in);
}

std::string AttentionText::batchIndices(const std::string &in) const {
  std::string x;
  if (!batch.empty()) {
    x += in + "long long fz_rest = fz_b;\n";
    for (size_t d = batch.size(); d-- > 0;) {
      x += in + "const int fz_bi" + str(d) + " = (int)(fz_rest % " + str(batch[d]) + ");\n";
      x += in + "fz_rest /= " + str(batch[d]) + ";\n";
    }
  }
  return x;
}

std::string AttentionText::base(const AttentionRows &r, const std::string &b) const {
  const std::string entry = r.repeat > 1 ? "(" + b + ") / " + str(r.repeat) : b;
  return r.ptr + " + " + str(r.offset) + " + " + entry + " * " + str(r.batchStride) + "LL";
}

std::string AttentionText::logitFunction(bool perRow) const {
  if (!perRow)
    return "  auto fz_logit = [&](float fz_s, int fz_i, int fz_j) -> float {\n" + logitCode +
           "    return " + logit + ";\n  };\n";
  return "  auto fz_logit = [&](float fz_s, long long fz_b, int fz_i, int fz_j) -> float {\n" +
         batchIndices("    ") + logitCode + "    return " + logit + ";\n  };\n";
}

std::string AttentionText::declarations() const {
  std::string x = "  // f at score fz_s of query row fz_i and key fz_j\n";
  x += logitFunction(false);
  x += "  float fz_o[" + str(D / 8) + "][4];\n";
  x += "  #pragma unroll\n  for (int d = 0; d < " + str(D / 8) +
       "; ++d) fz_o[d][0] = fz_o[d][1] = fz_o[d][2] = fz_o[d][3] = 0.f;\n";
  x += "  float fz_m[2] = {fz_ninf, fz_ninf}, fz_l[2] = {0.f, 0.f};\n";
  if (m.causal)
    // Keys past a block's last query are masked for all its rows: their
    // tiles are skipped, not computed.
    x += "  const int fz_tiles = min(" + str((S + N - 1) / N) + ", (fz_q0 + " + str(R - 1) +
         ") / " + str(N) + " + 1);\n";
  else
    x += "  const int fz_tiles = " + str((S + N - 1) / N) + ";\n";
  return x;
}

std::string AttentionText::scores(const std::string &kt, const std::string &qt) const {
  std::string x = "    float fz_acc[" + str(N / 8) + "][4];\n";
  if (wg) {
    // The warpgroup's 64 rows: Q from its slab rows, K^T as the K-major B.
    x += "    {\n      const unsigned fz_qa = fz_smem_u32(" + qt +
         ") + (warp / 4) * 8192, fz_ka = fz_smem_u32(" + kt + ");\n";
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
  x += "      fz_ldsm4(fz_qf, " + qt + " + (" + warpRow + " + lane % 16) * " + str(ld) +
       " + kk * 16 + (lane / 16) * 8);\n";
  x += "      #pragma unroll\n      for (int j = 0; j < " + str(N / 16) + "; ++j) {\n        unsigned r[4];\n";
  if (k.keysContiguous)
    x += "        fz_ldsm4t(r, " + kt + " + (kk * 16 + ((lane / 8) % 2) * 8 + lane % 8) * " + str(kld) +
         " + j * 16 + (lane / 16) * 8);\n";
  else
    x += "        fz_ldsm4(r, " + kt + " + (j * 16 + (lane / 16) * 8 + lane % 8) * " + str(ld) +
         " + kk * 16 + ((lane / 8) % 2) * 8);\n";
  x += "        " + mma + "(fz_acc[2 * j], fz_qf, r[0], r[1]);\n";
  x += "        " + mma + "(fz_acc[2 * j + 1], fz_qf, r[2], r[3]);\n      }\n    }\n";
  return x;
}

std::string AttentionText::softmax(bool later) const {
  const std::string eachScore = "      #pragma unroll\n      for (int n = 0; n < " + str(N / 8) +
                                "; ++n)\n        #pragma unroll\n        for (int c = 0; c < 2; ++c) {\n";
  std::string x = "    #pragma unroll\n    for (int h = 0; h < 2; ++h) {\n";
  x += rowOf;
  x += "      float fz_mx = fz_ninf;\n";
  x += eachScore;
  x += "          const int fz_j = " + keyOf + " + n * 8 + 2 * (lane % 4) + c;\n";
  x += "          const float x = fz_j < " + str(S) + " ? fz_logit(fz_acc[n][2 * h + c], " +
       logitArgs + ") : fz_ninf;\n";
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
}

std::string AttentionText::pack(const std::string &dst, const std::string &kk) const {
  return "      " + dst + "[0] = fz_pack2(fz_acc[2 * " + kk + "][0], fz_acc[2 * " + kk + "][1]);\n" +
         "      " + dst + "[1] = fz_pack2(fz_acc[2 * " + kk + "][2], fz_acc[2 * " + kk + "][3]);\n" +
         "      " + dst + "[2] = fz_pack2(fz_acc[2 * " + kk + " + 1][0], fz_acc[2 * " + kk + " + 1][1]);\n" +
         "      " + dst + "[3] = fz_pack2(fz_acc[2 * " + kk + " + 1][2], fz_acc[2 * " + kk + " + 1][3]);\n";
}

std::string AttentionText::store() const {
  std::string x = "  #pragma unroll\n  for (int h = 0; h < 2; ++h) {\n";
  x += "    float l = fz_l[h];\n";
  x += "    l += __shfl_xor_sync(0xffffffffu, l, 1);\n";
  x += "    l += __shfl_xor_sync(0xffffffffu, l, 2);\n";
  x += "    const int fz_i = fz_q0 + warp * 16 + lane / 4 + 8 * h;\n";
  x += "    if (fz_i < " + str(L) + ") {\n";
  x += "      " + To + " *const fz_row = " + outRow("fz_b", "fz_i") + ";\n";
  x += "      #pragma unroll\n      for (int d = 0; d < " + str(D / 8) + "; ++d) {\n";
  x += "        fz_row[d * 8 + 2 * (lane % 4)] = fz_out<" + To + ">::of(fz_o[d][2 * h] / l);\n";
  x += "        fz_row[d * 8 + 2 * (lane % 4) + 1] = fz_out<" + To +
       ">::of(fz_o[d][2 * h + 1] / l);\n      }\n    }\n  }\n";
  return x;
}

std::string AttentionText::outRow(const std::string &b, const std::string &i) const {
  if (!m.outTranspose)
    return "out0 + ((long long)(" + b + ") * " + str(L) + " + (" + i + ")) * " + str(D);
  // Each dim's stride in the transposed result, which is contiguous.
  MatmulOp output = m.output;
  TransposeOp transpose = m.outTranspose;
  ArrayRef<int64_t> shape = shapeOf(output.getResult());
  ArrayRef<int64_t> perm = transpose.getPerm();
  std::vector<int64_t> stride(shape.size());
  int64_t run = 1;
  for (size_t j = perm.size(); j-- > 0;) {
    stride[perm[j]] = run;
    run *= shape[perm[j]];
  }
  const size_t rows = shape.size() - 2;
  std::string x = "(long long)(" + i + ") * " + str(stride[rows]);
  int64_t inner = 1;
  for (size_t d = rows; d-- > 0;) {
    if (shape[d] > 1) {
      std::string index = "(long long)(" + b + ")";
      if (inner > 1)
        index = "(" + index + " / " + str(inner) + ")";
      if (inner * shape[d] < B)
        index = "(" + index + " % " + str(shape[d]) + ")";
      x += " + " + index + " * " + str(stride[d]);
    }
    inner *= shape[d];
  }
  return "out0 + " + x;
}

std::string AttentionText::outputProduct(const std::string &vt) const {
  std::string s = "    #pragma unroll\n    for (int kk = 0; kk < " + str(N / 16) + "; ++kk) {\n";
  s += "      unsigned fz_pa[4];\n";
  s += pack("fz_pa", "kk");
  s += "      #pragma unroll\n      for (int dj = 0; dj < " + str(D / 16) +
       "; ++dj) {\n        unsigned r[4];\n";
  s += "        fz_ldsm4t(r, " + vt + " + (kk * 16 + ((lane / 8) % 2) * 8 + lane % 8) * " + str(ld) +
       " + dj * 16 + (lane / 16) * 8);\n";
  s += "        " + mma + "(fz_o[2 * dj], fz_pa, r[0], r[1]);\n";
  s += "        " + mma + "(fz_o[2 * dj + 1], fz_pa, r[2], r[3]);\n      }\n    }\n";
  return s;
}

std::string AttentionText::kBuf(const std::string &t) const {
  if (tiles.stages != 2)
    return "fz_sk + ((" + t + ") % " + str(tiles.stages) + ") * " + str(kTile);
  return "fz_sk + ((" + t + ") & 1) * " + str(kTile);
}

std::string AttentionText::vBuf(const std::string &t) const {
  if (tiles.stages != 2)
    return "fz_sv + ((" + t + ") % " + str(tiles.stages) + ") * " + str(vTile);
  return "fz_sv + ((" + t + ") & 1) * " + str(vTile);
}

std::string AttentionText::helpers() const {
  return "// Two floats as the 16-bit pair of an mma fragment, the first in the low half.\n"
         "__device__ __forceinline__ unsigned fz_pack2(float lo, float hi) {\n"
         "  return (unsigned)fz_out<" + T + ">::of(lo).bits | ((unsigned)fz_out<" + T +
         ">::of(hi).bits << 16);\n}\n";
}

std::string AttentionText::schedule() const {
  auto written = [&]() -> std::string {
    if (!m.outTranspose)
      return "";
    std::string shape;
    TransposeOp transpose = m.outTranspose;
    for (int64_t d : shapeOf(transpose.getResult()))
      shape += (shape.empty() ? "" : ", ") + str(d);
    return "; the output written transposed, as [" + shape + "]";
  };
  std::string reads;
  for (const std::vector<AttentionRows> *pieces : {&ks, &vs})
    if (pieces->front().repeat > 1 || pieces->size() > 1) {
      reads = "; K and V read in place (" + str(pieces->front().repeat) + " heads a K/V head" +
              (pieces->size() > 1 ? ", in " + str(pieces->size()) + " pieces along the keys" : "") +
              ")";
      break;
    }
  if (tiles.decode) {
    return "attention decode " + str(B) + " x " + str(L) + " queries x " + str(S) +
           " keys, head dim " + str(D) + ": blocks of 16 rows (the query rows of " +
           str(m.repeat) + " heads sharing K and V), the keys split over " + str(tiles.splits) +
           " blocks of up to " + str(tiles.splitTiles * tiles.keys) + ", 4 warps (mma.sync) taking 16 of each " +
           str(tiles.keys) + "-key tile through " + str(tiles.stages) +
           " buffers, online softmax in fp32" +
           (tiles.splits > 1 ? "; the splits' partials combined by the last block" : "") + reads +
           written();
  }
  return "attention " + str(B) + " x " + str(L) + " queries x " + str(S) + " keys, head dim " +
         str(D) + ": blocks of " + str(R) + " queries (" +
         (wg ? "a warpgroup loading by the TMA, 2 taking turns on wgmma" : str(R / 16) + " warps, mma.sync") +
         "), keys and values streamed in tiles of " + str(N) +
         " through 2 buffers, online softmax in fp32; the scores never leave the SM" +
         std::string(m.causal ? "; key tiles past a block's queries skipped (causal)" : "") + reads +
         written();
}

} // namespace fusec::codegen::detail
