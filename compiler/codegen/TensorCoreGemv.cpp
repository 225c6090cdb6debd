//===- TensorCoreGemv.cpp - the dot-product kernel's 9-64 row body --------===//
//
// Decode with a batch (9-64 rows of A, K-contiguous weights): still bound by
// the weight bytes, but 9-64 dot products per weight element are more than
// the CUDA cores keep up with (32 x 4096 -> 4096: 537M fused multiply-adds,
// ~18 us at the H100's fp32 rate against an 11 us weight stream). So the
// tensor cores take them, the weight as mma.sync's 16-row A operand and the
// activations as its 8-column B operand (the product transposed).
//
// A lane copies 16 bytes of a weight row (8 consecutive k) into its own slot
// of its warp's cp.async stages and uses them as its A fragment of two k16
// steps. A dot product does not care in which order the k are summed, so
// the k16 step's "logical" k are a permutation of the physical ones, the
// same for both operands: lane (g, t) holds physical k = 8t + 4h .. 8t + 4h
// + 3 of step h as logical {2t, 2t+1, 2t+8, 2t+9}. Its B fragment is then
// 16 bytes of an activation row at the same k. Each lane reads back only
// what it copied: no barrier, and the bytes in flight hold no registers
// (loaded into registers instead, ptxas issues them a few at a time to save
// registers, and too few weight bytes are in flight to stream).
//
// A warp owns 16 x `tiles` weight rows and a slice of K; the block's warps
// share the rows and split K between them (their sums meet in shared
// memory). Blocks along grid.y can split K further (an autotune candidate:
// their partials meet in global scratch, summed by the last block to finish,
// as the portable GEMM does), which is slower on decode shapes
// (docs/matmul.md, "Tile configurations and autotuning").
//
// The body takes several weights of one shape (products of one A whose
// results meet in the epilogue), each its own accumulators; generateGemm
// passes one.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/GemmGen.h"
#include "compiler/codegen/KernelSpec.h"
#include "compiler/codegen/LastBlock.h"

#include <cstdio>

namespace fusec::codegen::detail {

namespace {
std::string str(int64_t v) { return std::to_string(v); }
} // namespace

std::string tcGemvWaves(int64_t blocks, int smCount) {
  if (smCount <= 0)
    return "";
  char buf[80];
  double waves = (double)blocks / smCount;
  if (blocks <= smCount)
    std::snprintf(buf, sizeof buf, "; %lld blocks for %d SMs (one wave)", (long long)blocks,
                  smCount);
  else
    std::snprintf(buf, sizeof buf, "; %lld blocks for %d SMs (%.2f waves)", (long long)blocks,
                  smCount, waves);
  return buf;
}

std::string tensorCoreGemvBody(const Operand &a, const std::vector<Operand> &weights,
                               const TcGemvShape &s, const std::string &elem,
                               const std::string &epilogue, const std::string &in) {
  const int J = static_cast<int>(weights.size()), R = s.tiles, W = s.warps, S = s.split;
  const int MT = static_cast<int>((s.m + 7) / 8);
  const int64_t rowsPerBlock = 16 * R, steps = (s.k + 31) / 32, perSplit = (steps + S - 1) / S;
  const std::string mma = elem == "fz_bf16" ? "fz_mma_bf16" : "fz_mma_f16";
  std::string o;
  o += in + "const int fz_g = lane / 4, fz_t = lane % 4, fz_warp = threadIdx.x / 32;\n";
  o += in + "float acc[" + str(J) + "][" + str(R) + "][" + str(MT) + "][4] = {};\n";
  o += in + "const int fz_s0 = blockIdx.y * " + str(perSplit) + ", fz_s1 = min(fz_s0 + " +
       str(perSplit) + ", " + str(steps) + ");\n";
  // Each lane copies its own 16-byte pieces of a step (32 k) into its own
  // slots of the warp's stages with cp.async, and reads back only those: no
  // barrier, and the bytes in flight hold no registers (loads into
  // registers are scheduled by ptxas a few at a time, to save registers).
  // Past K (a multiple of 8: a lane's 16 bytes lie wholly inside or past
  // it) the copies write zeros.
  const int V = J * R * 2 + MT, P = s.stages;
  o += in + "unsigned char *const fz_stage = fz_dyn + fz_warp * " + str(P * V * 512) +
       " + lane * 16;\n";
  o += in + "const int fz_n = (fz_s1 - fz_s0 - fz_warp + " + str(W - 1) + ") / " + str(W) + ";\n";
  auto copy = [&](const std::string &i, const std::string &slot, const std::string &ind) {
    std::string c;
    c += ind + "{\n";
    c += ind + "  const int fz_k = (fz_s0 + fz_warp + (" + i + ") * " + str(W) + ") * 32 + fz_t * 8;\n";
    c += ind + "  const bool fz_in = fz_k < " + str(s.k) + ";\n";
    c += ind + "  const int k = fz_in ? fz_k : 0;\n";
    c += ind + "  unsigned char *const fz_dst = fz_stage + (" + slot + ") * " + str(V * 512) + ";\n";
    int v = 0;
    for (int j = 0; j < J; ++j)
      for (int r = 0; r < R; ++r)
        for (int h = 0; h < 2; ++h, ++v) {
          std::string row =
              "min(fz_n0 + " + str(16 * r + 8 * h) + " + fz_g, " + str(s.n - 1) + ")";
          c += ind + "  fz_cp16z(fz_dst + " + str(v * 512) + ", " + weights[j].ptr + " + " +
               offsetExpr(weights[j], "0", "k", row) + ", fz_in);\n";
        }
    for (int t = 0; t < MT; ++t, ++v) {
      std::string row = "min(" + str(8 * t) + " + fz_g, " + str(s.m - 1) + ")";
      c += ind + "  fz_cp16z(fz_dst + " + str(v * 512) + ", " + a.ptr + " + " +
           offsetExpr(a, "0", row, "k") + ", fz_in);\n";
    }
    c += ind + "}\n";
    return c;
  };
  o += in + "#pragma unroll\n" + in + "for (int p = 0; p < " + str(P - 1) + "; ++p) {\n";
  o += in + "  if (p < fz_n)\n" + copy("p", "p", in + "  ");
  o += in + "  fz_cp_commit();\n" + in + "}\n";
  o += in + "#pragma unroll 1\n" + in + "for (int i = 0; i < fz_n; ++i) {\n";
  std::string in2 = in + "  ";
  o += in2 + "fz_cp_wait<" + str(P - 2) + ">();  // this lane's copies of step i are in\n";
  o += in2 + "const uint4 *const fz_src = reinterpret_cast<const uint4 *>(fz_stage + (i % " +
       str(P) + ") * " + str(V * 512) + ");\n";
  o += in2 + "uint4 fz_w[" + str(J) + "][" + str(R) + "][2], fz_x[" + str(MT) + "];\n";
  {
    int v = 0;
    for (int j = 0; j < J; ++j)
      for (int r = 0; r < R; ++r)
        for (int h = 0; h < 2; ++h, ++v)
          o += in2 + "fz_w[" + str(j) + "][" + str(r) + "][" + str(h) + "] = fz_src[" +
               str(v * 32) + "];\n";
    for (int t = 0; t < MT; ++t, ++v)
      o += in2 + "fz_x[" + str(t) + "] = fz_src[" + str(v * 32) + "];\n";
  }
  o += in2 + "#pragma unroll\n" + in2 + "for (int j = 0; j < " + str(J) + "; ++j)\n";
  o += in2 + "  #pragma unroll\n" + in2 + "  for (int r = 0; r < " + str(R) + "; ++r) {\n";
  std::string in4 = in2 + "    ";
  o += in4 + "const uint4 lo = fz_w[j][r][0], hi = fz_w[j][r][1];\n";
  o += in4 + "const unsigned f0[4] = {lo.x, hi.x, lo.y, hi.y}, f1[4] = {lo.z, hi.z, lo.w, hi.w};\n";
  o += in4 + "#pragma unroll\n" + in4 + "for (int t = 0; t < " + str(MT) + "; ++t) {\n";
  o += in4 + "  " + mma + "(acc[j][r][t], f0, fz_x[t].x, fz_x[t].y);\n";
  o += in4 + "  " + mma + "(acc[j][r][t], f1, fz_x[t].z, fz_x[t].w);\n";
  o += in4 + "}\n" + in2 + "  }\n";
  o += in2 + "// the slot step i - 1 was read from, already consumed\n";
  o += in2 + "if (i + " + str(P - 1) + " < fz_n)\n" +
       copy("i + " + str(P - 1), "(i + " + str(P - 1) + ") % " + str(P), in2);
  o += in2 + "fz_cp_commit();\n" + in + "}\n";
  o += in + "fz_cp_wait<0>();\n";

  // The warps' sums meet in shared memory, [warp][j][m][row] (fz_red,
  // declared by the kernel at smemFloats()).
  const int64_t MP = MT * 8, plane = MP * rowsPerBlock;
  o += in + "#pragma unroll\n" + in + "for (int j = 0; j < " + str(J) + "; ++j)\n";
  o += in + "  #pragma unroll\n" + in + "  for (int r = 0; r < " + str(R) + "; ++r)\n";
  o += in + "    #pragma unroll\n" + in + "    for (int t = 0; t < " + str(MT) + "; ++t)\n";
  o += in + "      #pragma unroll\n" + in + "      for (int q = 0; q < 4; ++q)\n";
  o += in + "        fz_red[((fz_warp * " + str(J) + " + j) * " + str(MP) +
       " + t * 8 + fz_t * 2 + q % 2) * " + str(rowsPerBlock) +
       " + r * 16 + fz_g + (q / 2) * 8] = acc[j][r][t][q];\n";
  o += in + "__syncthreads();\n";
  const int64_t E = rowsPerBlock * s.m;
  auto blockSum = [&](const std::string &ind) {
    std::string b;
    b += ind + "const int fz_nl = fz_e % " + str(rowsPerBlock) + ", fz_em = fz_e / " +
         str(rowsPerBlock) + ";\n";
    b += ind + "float fz_vs[" + str(J) + "];\n";
    b += ind + "#pragma unroll\n" + ind + "for (int j = 0; j < " + str(J) + "; ++j) {\n";
    b += ind + "  float t = 0.f;\n";
    b += ind + "  #pragma unroll\n" + ind + "  for (int w = 0; w < " + str(W) + "; ++w)\n";
    b += ind + "    t += fz_red[(w * " + str(J) + " + j) * " + str(plane) + " + fz_em * " +
         str(rowsPerBlock) + " + fz_nl];\n";
    b += ind + "  fz_vs[j] = t;\n" + ind + "}\n";
    return b;
  };
  std::string loop = in + "for (int fz_e = threadIdx.x; fz_e < " + str(E) + "; fz_e += " +
                     str(W * 32) + ") {\n";
  if (S > 1) {
    // Partials of (split, block, element, j); the last block of a row block
    // sums the splits' (unrolled over the known count: their loads overlap).
    const int64_t stride = s.partStride;
    o += in + "float *fz_part = reinterpret_cast<float *>(fz_scratch + " + str(s.counterBytes) +
         ");\n";
    o += loop + blockSum(in + "  ");
    o += in + "  #pragma unroll\n" + in + "  for (int j = 0; j < " + str(J) + "; ++j)\n";
    o += in + "    fz_part[((long long)blockIdx.y * gridDim.x + blockIdx.x) * " + str(stride) +
         " + fz_e * " + str(J) + " + j] = fz_vs[j];\n";
    o += in + "}\n";
    o += in + "__shared__ bool fz_last;\n";
    o += lastBlockHandshake(in, "reinterpret_cast<unsigned *>(fz_scratch) + blockIdx.x",
                            "gridDim.y", "");
    o += in + "if (fz_last) {\n";
    o += in + "  " + loop.substr(in.size());
    std::string ind = in + "    ";
    o += ind + "const int fz_nl = fz_e % " + str(rowsPerBlock) + ", fz_em = fz_e / " +
         str(rowsPerBlock) + ";\n";
    o += ind + "float fz_vs[" + str(J) + "] = {};\n";
    o += ind + "#pragma unroll\n" + ind + "for (int sp = 0; sp < " + str(S) + "; ++sp)\n";
    o += ind + "  #pragma unroll\n" + ind + "  for (int j = 0; j < " + str(J) + "; ++j)\n";
    o += ind + "    fz_vs[j] += __ldcg(&fz_part[((long long)sp * gridDim.x + blockIdx.x) * " +
         str(stride) + " + fz_e * " + str(J) + " + j]);\n";
    o += ind + "const int fz_en = fz_n0 + fz_nl;\n";
    o += ind + "if (fz_en < " + str(s.n) + ") {\n" + epilogue + ind + "}\n";
    o += in + "  }\n" + in + "}\n";
    return o;
  }
  o += loop + blockSum(in + "  ");
  o += in + "  const int fz_en = fz_n0 + fz_nl;\n";
  o += in + "  if (fz_en < " + str(s.n) + ") {\n" + epilogue + in + "  }\n";
  o += in + "}\n";
  return o;
}

TcGemvShape GemmGen::tcGemvShape() const {
  TcGemvShape t;
  t.m = shape.m;
  t.n = shape.n;
  t.k = shape.k;
  t.tiles = cfg.gemvTiles;
  t.warps = cfg.gemvWarps;
  t.split = cfg.gemvSplit;
  t.stages = cfg.stages;
  t.counterBytes = 256 * ((t.blocks() * 4 + 255) / 256);
  t.partStride = t.elements();
  return t;
}

KernelText GemmGen::tensorCoreGemvSource() {
  TcGemvShape t = tcGemvShape();
  KernelText text;
  text.qualifiers = "__launch_bounds__(" + str(t.warps * 32) + ")";
  text.params = parameters(fusion);
  if (t.split > 1)
    text.params.push_back(kScratchParam);
  text.staticShared = true;
  std::string s;
  s += "  extern __shared__ __align__(16) unsigned char fz_dyn[];\n";
  s += "  __shared__ float fz_red[" + str(t.smemFloats()) + "];\n";
  s += "  const int lane = threadIdx.x % 32, fz_b = 0;\n";
  s += "  const int fz_n0 = blockIdx.x * " + str(16 * t.tiles) + ";\n";
  std::string epi = "      {\n      const float fz_v = fz_vs[0];\n" + scalarEpilogue() + "      }\n";
  s += tensorCoreGemvBody(a, {b}, t, elem, epi, "  ");
  text.body = s;
  return text;
}

} // namespace fusec::codegen::detail
