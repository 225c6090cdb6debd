//===- AttentionDecode.cpp - attention of a few query rows: keys split -----===//
//
// The attention kernel's decode form (attentionTiles, schedule/AttentionForm.h):
// fewer than 64 query rows a head against many keys would leave most SMs idle
// with a block per tile of queries, and the time is the K/V bytes' at the
// copy rate. The query rows of the heads that share one K/V entry (grouped-
// query heads: R heads x L rows) are a block's 16 rows, so K and V are read
// once for all of them; the keys are split over `splits` blocks. A block of 4
// warps streams its split in tiles of 64 keys through three shared-memory
// buffers (cp.async), each warp taking 16 keys of a tile with the block's 16
// rows: S = Q K^T and O += P V on mma.sync, the online softmax in fp32 as the
// other forms run it (AttentionText.cpp). The warps' (max, sum, output) are
// combined through shared memory; with more than one split, each block
// stores its partial to the scratch and the last block of a row tile
// (LastBlock.h) combines the splits in order and writes the output. A cache
// joined with this step's rows is read piece by piece, the piece chosen per
// key row.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/AttentionText.h"
#include "compiler/codegen/LastBlock.h"

#include <algorithm>

namespace fusec::codegen::detail {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

constexpr int kThreads = 128;

} // namespace

std::string decodeAttentionBody(const AttentionText &a) {
  const int64_t D = a.D, S = a.S, L = a.L, R = a.m.repeat, RL = R * a.L;
  const int64_t step = a.tiles.keys, stages = a.tiles.stages;
  const int64_t keyTiles = (S + step - 1) / step, per = a.tiles.splitTiles;
  const int64_t rowTiles = a.m.rowTiles(a.tiles);
  std::string s;
  s += "  const int fz_split = blockIdx.x, fz_r0 = blockIdx.z * 16;\n";
  s += "  const long long fz_e = blockIdx.y;  // the K/V entry its heads share\n";
  s += "  const int fz_t0 = fz_split * " + str(per) + ", fz_tiles = min(" + str(per) + ", " +
       str(keyTiles) + " - fz_t0);\n";
  // Each piece's start for this entry: head fz_e * R reads its K/V entry.
  const std::string head = "fz_e * " + str(R);
  for (size_t p = 0; p < a.ks.size(); ++p)
    s += "  const " + a.T + " *const fz_gk" + str(p) + " = " + a.base(a.ks[p], head) + ";\n";
  for (size_t p = 0; p < a.vs.size(); ++p)
    s += "  const " + a.T + " *const fz_gv" + str(p) + " = " + a.base(a.vs[p], head) + ";\n";
  // The block's 16 rows of Q: row rho is query rho % L of head fz_e * R + rho / L.
  s += "  for (int c = threadIdx.x; c < " + str(16 * D / 8) + "; c += " + str(kThreads) + ") {\n";
  s += "    const int r = c / " + str(D / 8) + ", k8 = (c % " + str(D / 8) + ") * 8;\n";
  s += "    const int rho = fz_r0 + r, rr = min(rho, " + str(RL - 1) + ");\n";
  s += "    const long long hb = fz_e * " + str(R) + " + rr / " + str(L) + ";\n";
  s += "    fz_cp16z(fz_sq + r * " + str(a.ld) + " + k8, " + a.base(a.q, "hb") + " + (long long)(rr % " +
       str(L) + ") * " + str(a.q.ld) + " + k8, rho < " + str(RL) + ");\n  }\n";
  // Tile `t` of the split: 64 rows of keys and of values, each row from the
  // piece that holds it; rows past the keys are zeros.
  auto rowOf = [&](const std::vector<AttentionRows> &pieces, const std::string &g,
                   const std::string &name) {
    std::string x;
    for (size_t p = 0; p + 1 < pieces.size(); ++p)
      x += g + " < " + str(pieces[p + 1].key0) + " ? " + name + str(p) + " + (long long)(" + g +
           (pieces[p].key0 ? " - " + str(pieces[p].key0) : "") + ") * " + str(pieces[p].ld) + " : ";
    const AttentionRows &last = pieces.back();
    x += name + str(pieces.size() - 1) + " + (long long)(" + g +
         (last.key0 ? " - " + str(last.key0) : "") + ") * " + str(last.ld);
    return pieces.size() > 1 ? "(" + x + ")" : x;
  };
  auto load = [&](const std::string &t) {
    // 8D copies of a tile, a multiple of the threads: a fixed count each,
    // unrolled, so the row and column arithmetic folds.
    std::string x = "    #pragma unroll\n    for (int i = 0; i < " + str(step * D / 8 / kThreads) +
                    "; ++i) {\n      const int c = threadIdx.x + i * " + str(kThreads) + ";\n";
    x += "      const int r = c / " + str(D / 8) + ", k8 = (c % " + str(D / 8) + ") * 8;\n";
    x += "      const int g = (fz_t0 + " + t + ") * " + str(step) + " + r, gc = min(g, " +
         str(S - 1) + ");\n";
    x += "      fz_cp16z(" + a.kBuf(t) + " + r * " + str(a.ld) + " + k8, " + rowOf(a.ks, "gc", "fz_gk") +
         " + k8, g < " + str(S) + ");\n";
    x += "      fz_cp16z(" + a.vBuf(t) + " + r * " + str(a.ld) + " + k8, " + rowOf(a.vs, "gc", "fz_gv") +
         " + k8, g < " + str(S) + ");\n    }\n";
    return x;
  };
  // The first stages - 1 tiles; a commit each, loaded or not, so that the
  // wait below counts groups alike.
  for (int64_t t = 0; t + 1 < stages; ++t)
    s += "  if (" + str(t) + " < fz_tiles) {\n" + load(str(t)) + "  }\n  fz_cp_commit();\n";
  s += a.logitFunction(true);
  s += "  float fz_o[" + str(D / 8) + "][4];\n";
  s += "  #pragma unroll\n  for (int d = 0; d < " + str(D / 8) +
       "; ++d) fz_o[d][0] = fz_o[d][1] = fz_o[d][2] = fz_o[d][3] = 0.f;\n";
  s += "  float fz_m[2] = {fz_ninf, fz_ninf}, fz_l[2] = {0.f, 0.f};\n";
  s += "  #pragma unroll 1\n  for (int fz_t = 0; fz_t < fz_tiles; ++fz_t) {\n";
  s += "    if (fz_t + " + str(stages - 1) + " < fz_tiles) {\n" + load("fz_t + " + str(stages - 1)) +
       "    }\n";
  s += "    fz_cp_commit();\n    fz_cp_wait<" + str(stages - 1) + ">();\n    __syncthreads();\n";
  s += "    const " + a.T + " *const fz_kt = " + a.kBuf("fz_t") + " + warp * " + str(a.N * a.ld) +
       ";\n";
  s += "    const " + a.T + " *const fz_vt = " + a.vBuf("fz_t") + " + warp * " + str(a.N * a.ld) +
       ";\n";
  s += a.scores("fz_kt");
  s += a.softmax(false);
  s += a.outputProduct("fz_vt");
  s += "    __syncthreads();  // this tile's buffers are loaded again " + str(stages) +
       " tiles on\n  }\n";
  s += "  fz_cp_wait<0>();\n  __syncthreads();\n";
  // The warps' partials through shared memory, for the rows that exist:
  // rows' max and sum, and the output in pairs (rows D + 8 floats apart, so
  // a half-warp's pairs fall in distinct banks).
  const std::string ldr = str(D + 8);
  s += "  float *const fz_red = reinterpret_cast<float *>(fz_sk);  // [warp][row][D + 8]\n";
  s += "  float *const fz_ml = fz_red + " + str(4 * 16 * (D + 8)) + ";  // [warp][row]: max, sum\n";
  s += "  const int fz_rows = min(16, " + str(RL) + " - fz_r0);  // the block's rows that exist\n";
  s += "  #pragma unroll\n  for (int h = 0; h < 2; ++h) {\n";
  s += "    const int row = lane / 4 + 8 * h;\n    float l = fz_l[h];\n";
  s += "    l += __shfl_xor_sync(0xffffffffu, l, 1);\n";
  s += "    l += __shfl_xor_sync(0xffffffffu, l, 2);\n";
  s += "    if (lane % 4 == 0) {\n      fz_ml[(warp * 16 + row) * 2] = fz_m[h];\n";
  s += "      fz_ml[(warp * 16 + row) * 2 + 1] = l;\n    }\n";
  s += "    if (row < fz_rows) {\n";
  s += "      #pragma unroll\n      for (int d = 0; d < " + str(D / 8) + "; ++d)\n";
  s += "        *reinterpret_cast<float2 *>(&fz_red[(warp * 16 + row) * " + ldr +
       " + d * 8 + 2 * (lane % 4)]) = make_float2(fz_o[d][2 * h], fz_o[d][2 * h + 1]);\n";
  s += "    }\n  }\n  __syncthreads();\n";
  // The warps' partials (max, sum, output) combined, four columns a thread:
  // the largest max, each partial scaled by exp(its max - that); a partial
  // whose keys were all masked (max -inf) counts 0, and a row with all its
  // keys masked ends 0 / 0 = NaN, as the reference's softmax gives.
  // Row rho of the block is query rho % L of head fz_e * R + rho / L.
  const std::string outRow =
      "(" + (L == 1 ? a.outRow("fz_e * " + str(R) + " + fz_r0 + row", "0")
                    : a.outRow("fz_e * " + str(R) + " + (fz_r0 + row) / " + str(L),
                               "(fz_r0 + row) % " + str(L))) + ")";
  auto storeOut = [&](const std::string &in, const std::string &x, const std::string &sum) {
    std::string t;
    for (int k = 0; k < 4; ++k)
      t += in + outRow + "[col + " + str(k) + "] = fz_out<" + a.To + ">::of(" + x + "." + "xyzw"[k] +
           " / " + sum + ");\n";
    return t;
  };
  const std::string units = "fz_rows * " + str(D / 4);
  s += "  for (int u = threadIdx.x; u < " + units + "; u += " + str(kThreads) + ") {\n";
  s += "    const int row = u / " + str(D / 4) + ", col = (u % " + str(D / 4) + ") * 4;\n";
  s += "    float mx = fz_ninf, ls = 0.f;\n    float4 os = make_float4(0.f, 0.f, 0.f, 0.f);\n";
  s += "    #pragma unroll\n    for (int w = 0; w < 4; ++w) mx = fmaxf(mx, fz_ml[(w * 16 + row) * 2]);\n";
  s += "    #pragma unroll\n    for (int w = 0; w < 4; ++w) {\n";
  s += "      const float mw = fz_ml[(w * 16 + row) * 2];\n";
  s += "      const float f = mw == fz_ninf ? 0.f : fz_ex2((mw - mx) * 1.44269504f);\n";
  s += "      ls += f * fz_ml[(w * 16 + row) * 2 + 1];\n";
  s += "      const float4 r = *reinterpret_cast<const float4 *>(&fz_red[(w * 16 + row) * " + ldr +
       " + col]);\n";
  s += "      os.x += f * r.x; os.y += f * r.y; os.z += f * r.z; os.w += f * r.w;\n    }\n";
  if (a.tiles.splits == 1) {
    s += storeOut("    ", "os", "ls") + "  }\n";
    return s;
  }
  // Splits: this block's partial to the scratch, then the last block of
  // the row tile combines them. Scratch: a counter per row tile, then per
  // row tile and split 16 rows of max and sum, and of the output.
  const DecodeScratch scratch = decodeAttentionScratch(a);
  s += "    const long long fz_part = (fz_e * " + str(rowTiles) + " + blockIdx.z) * " +
       str(a.tiles.splits) + " + fz_split;\n";
  s += "    float *const fz_pml = reinterpret_cast<float *>(fz_scratch + " +
       str(scratch.counterBytes) + ");\n";
  s += "    float *const fz_po = fz_pml + " + str(scratch.outputFloats) + ";\n";
  s += "    if (col == 0) {\n      fz_pml[(fz_part * 16 + row) * 2] = mx;\n";
  s += "      fz_pml[(fz_part * 16 + row) * 2 + 1] = ls;\n    }\n";
  s += "    *reinterpret_cast<float4 *>(&fz_po[(fz_part * 16 + row) * " + str(D) + " + col]) = os;\n  }\n";
  s += "  __shared__ bool fz_last;\n";
  s += lastBlockHandshake("  ", "reinterpret_cast<unsigned *>(fz_scratch) + fz_e * " + str(rowTiles) +
                                    " + blockIdx.z",
                          str(a.tiles.splits), "return;");
  // The last block: the splits' max and sum into shared memory, each row's
  // factors exp(max_s - max) and total sum, then every output element's
  // partials summed with those factors (the loads independent of each other).
  const int64_t splits = a.tiles.splits;
  s += "  const long long fz_first = (fz_e * " + str(rowTiles) + " + blockIdx.z) * " + str(splits) +
       ";\n";
  s += "  const float *const fz_pml = reinterpret_cast<const float *>(fz_scratch + " +
       str(scratch.counterBytes) + ");\n";
  s += "  const float *const fz_po = fz_pml + " + str(scratch.outputFloats) + ";\n";
  // A warp per row, its lanes over the splits: the row's max and the
  // factors by shuffles, every load of a row in flight at once.
  const int64_t perLane = (splits + 31) / 32;
  s += "  float *const fz_f = fz_red, *const fz_sum = fz_red + " + str(splits * 16) +
       ";  // [split][row], [row]\n";
  s += "  for (int row = warp; row < fz_rows; row += 4) {\n";
  s += "    float mw[" + str(perLane) + "], lw[" + str(perLane) + "], mx = fz_ninf, ls = 0.f;\n";
  s += "    #pragma unroll\n    for (int j = 0; j < " + str(perLane) + "; ++j) {\n";
  s += "      const int w = lane + 32 * j;\n";
  s += "      mw[j] = w < " + str(splits) + " ? __ldcg(&fz_pml[((fz_first + w) * 16 + row) * 2]) : fz_ninf;\n";
  s += "      lw[j] = w < " + str(splits) + " ? __ldcg(&fz_pml[((fz_first + w) * 16 + row) * 2 + 1]) : 0.f;\n";
  s += "      mx = fmaxf(mx, mw[j]);\n    }\n";
  s += "    #pragma unroll\n    for (int o = 16; o > 0; o /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));\n";
  s += "    #pragma unroll\n    for (int j = 0; j < " + str(perLane) + "; ++j) {\n";
  s += "      const int w = lane + 32 * j;\n";
  s += "      // a split whose keys were all masked counts 0; all masked: 0 / 0\n";
  s += "      const float f = mw[j] == fz_ninf ? 0.f : fz_ex2((mw[j] - mx) * 1.44269504f);\n";
  s += "      if (w < " + str(splits) + ") fz_f[w * 16 + row] = f;\n";
  s += "      ls += f * lw[j];\n    }\n";
  s += "    #pragma unroll\n    for (int o = 16; o > 0; o /= 2) ls += __shfl_xor_sync(0xffffffffu, ls, o);\n";
  s += "    if (lane == 0) fz_sum[row] = ls;\n  }\n  __syncthreads();\n";
  // Four columns of a row a thread, their partials read `chunk` splits at a
  // time, the loads of a chunk all in flight.
  const int64_t chunk = std::min<int64_t>(splits, 16);
  const std::string guard = splits % chunk ? "w < " + str(splits) : "";
  s += "  for (int u = threadIdx.x; u < " + units + "; u += " + str(kThreads) + ") {\n";
  s += "    const int row = u / " + str(D / 4) + ", col = (u % " + str(D / 4) + ") * 4;\n";
  s += "    float4 os = make_float4(0.f, 0.f, 0.f, 0.f);\n";
  s += "    for (int w0 = 0; w0 < " + str(splits) + "; w0 += " + str(chunk) + ") {\n";
  s += "      float4 p[" + str(chunk) + "];\n";
  s += "      #pragma unroll\n      for (int j = 0; j < " + str(chunk) + "; ++j) {\n";
  s += "        const int w = w0 + j;\n";
  const std::string partial = "__ldcg(reinterpret_cast<const float4 *>(&fz_po[((fz_first + w) * 16 + row) * " +
                           str(D) + " + col]))";
  s += "        p[j] = " + (guard.empty() ? partial : guard + " ? " + partial + " : make_float4(0.f, 0.f, 0.f, 0.f)") +
       ";\n      }\n";
  s += "      #pragma unroll\n      for (int j = 0; j < " + str(chunk) + "; ++j) {\n";
  s += "        const float f = " + (guard.empty() ? std::string("fz_f[(w0 + j) * 16 + row]")
                                                    : "w0 + j < " + str(splits) + " ? fz_f[(w0 + j) * 16 + row] : 0.f") +
       ";\n";
  s += "        os.x += f * p[j].x; os.y += f * p[j].y; os.z += f * p[j].z; os.w += f * p[j].w;\n";
  s += "      }\n    }\n";
  s += storeOut("    ", "os", "fz_sum[row]") + "  }\n";
  return s;
}

DecodeScratch decodeAttentionScratch(const AttentionText &a) {
  DecodeScratch d;
  if (a.tiles.splits == 1)
    return d;
  d.items = (a.B / a.m.repeat) * a.m.rowTiles(a.tiles);
  d.counterBytes = (d.items * 4 + 15) / 16 * 16;
  d.outputFloats = d.items * a.tiles.splits * 16 * 2;
  d.bytes = d.counterBytes + (d.outputFloats + d.items * a.tiles.splits * 16 * a.D) * 4;
  return d;
}

} // namespace fusec::codegen::detail
