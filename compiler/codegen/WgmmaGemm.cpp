//===- WgmmaGemm.cpp - the matmul family on Hopper: TMA + wgmma -----------===//
//
// sm_90a's GEMM, for one matrix with K-contiguous, 16-byte aligned operands
// (x @ w^T, a linear layer). mma.sync leaves Hopper's tensor cores at 40% of
// cuBLAS (docs/matmul.md, "Where it stands"): each warp feeds them from
// registers through ldmatrix. Here the operands go from HBM to shared memory
// by the Tensor Memory Accelerator and from shared memory to the tensor cores
// by wgmma, without passing through registers:
//
//   * Warpgroup 0 is the producer: one thread issues the TMA copies of each
//     64-deep K step (A: bm x 64, B: bn x 64, 128-byte swizzled rows, zeros
//     past the edges) into one of `stages` buffers, and waits, per buffer, on
//     an "empty" barrier before reusing it. It gives most of its registers
//     to the consumers (setmaxnreg).
//   * Warpgroups 1.. are consumers, 64 rows of the tile each: they wait on
//     the buffer's "full" barrier (the TMA's byte count arriving), issue four
//     wgmma m64nNk16 on it, keep one step in flight, and release the buffer
//     of the step before.
//   * Blocks are persistent, one per SM, walking the output tiles; the
//     producer runs ahead into the next tile while the consumers apply the
//     epilogue of the last one.
//   * The accumulators hold the tile in the mma.sync fragment layout (per
//     warp, 16 rows; per 8 columns, two rows x two columns per lane), so the
//     group's epilogue is the same code as the portable kernel's.
//   * One 16-bit [M, N] output leaves through shared memory: 64 x 64 boxes,
//     128-byte swizzled, each sent by a TMA store that overlaps the next
//     tile's products (storing from the fragments cost ~8 us per tile, the
//     whole gap to cuBLAS). A 16-bit [M, N] epilogue input is TMA-loaded
//     into the same boxes while the products run (tmaStoreApplies).
//   * "c2": clusters of two blocks on neighbouring tile rows share B tiles,
//     each loading half and multicasting it (slower on an H100; autotune
//     only).
//
// The tensor maps (the TMA's view of A and B) hold the buffers' addresses;
// the runtime encodes them at launch (compiler/plan/TensorMapParam.h).
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/GemmGen.h"
#include "compiler/codegen/ElementEmitter.h"
#include "compiler/codegen/KernelSpec.h"
#include "compiler/codegen/ScalarOps.h"
#include "compiler/cost/CostModel.h"
#include "compiler/shape/ShapeRules.h"

using namespace mlir;

namespace fusec::codegen::detail {
namespace {
std::string str(int64_t v) { return std::to_string(v); }
} // namespace

/// Helpers for the Hopper kernels (the shared prelude stays portable).
const char *kHopperHelpers = R"(// ---- Hopper: TMA, mbarriers, wgmma ----
struct __align__(64) fz_tmap { unsigned long long v[16]; };  // a CUtensorMap, by value
__device__ __forceinline__ unsigned fz_smem_u32(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void fz_mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void fz_mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void fz_mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
}
__device__ __forceinline__ bool fz_mbar_try(unsigned bar, unsigned parity) {
  unsigned done;
  asm volatile("{\n  .reg .pred p;\n  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
               "  selp.u32 %0, 1, 0, p;\n}" : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  return done != 0;
}
// Waits until the barrier's phase of this parity has completed.
__device__ __forceinline__ void fz_mbar_wait(unsigned bar, unsigned parity) {
  while (!fz_mbar_try(bar, parity)) {
  }
}
// A box of the tensor map at (c0 = column, c1 = row) into shared memory; the
// barrier counts its bytes.
__device__ __forceinline__ void fz_tma_2d(unsigned dst, const fz_tmap *map, unsigned bar, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3}], [%4];"
               :: "r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar)
               : "memory");
}
// The same box into the same shared-memory offset of every block of the
// cluster in `mask`, each block's barrier at `bar` counting the bytes.
__device__ __forceinline__ void fz_tma_2d_mc(unsigned dst, const fz_tmap *map, unsigned bar, int c0, int c1,
                                             unsigned short mask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
               :: "r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar),
                  "h"(mask)
               : "memory");
}
// Arrives on the barrier at the same offset in block `cta` of the cluster.
// At the default (.cta) scope: it only says this consumer's wgmma reads of a
// stage are done, which the TMA that refills the stage does not need ordered
// further. A .release.cluster arrive cost a cluster-scope fence on every K
// step: clusters of two ran 2.3x slower than single blocks (8192 x 8192 x
// 4096 on an H100: 1561-1572 us against 677-678; 683-685 us with this form).
__device__ __forceinline__ void fz_mbar_arrive_in(unsigned bar, unsigned cta) {
  asm volatile("{\n  .reg .b32 r;\n  mapa.shared::cluster.u32 r, %0, %1;\n"
               "  mbarrier.arrive.shared::cluster.b64 _, [r];\n}"
               :: "r"(bar), "r"(cta) : "memory");
}
// Every thread of every block of the cluster; unlike the prelude's
// fz_cluster_sync, the threads of a warp need not be converged.
__device__ __forceinline__ void fz_cluster_barrier() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}
// A K-major operand tile of 128-byte rows, 128-byte swizzled (as the TMA
// writes it): 8-row groups 1024 bytes apart.
__device__ __forceinline__ unsigned long long fz_wg_desc(unsigned addr) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}
// Pulls `bytes` (a multiple of 16) at p into L2, asynchronously.
__device__ __forceinline__ void fz_prefetch_l2(const void *p, unsigned bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" :: "l"(__cvta_generic_to_global(p)), "r"(bytes) : "memory");
}
// The tensor map's box at (c0 = column, c1 = row) into L2.
__device__ __forceinline__ void fz_tma_prefetch_2d(const fz_tmap *map, int c0, int c1) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];"
               :: "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1) : "memory");
}
// A box of shared memory at src to the tensor map's (c0 = column, c1 = row),
// in the thread's current bulk group.
__device__ __forceinline__ void fz_tma_store_2d(const fz_tmap *map, unsigned src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
               :: "l"(reinterpret_cast<unsigned long long>(map)), "r"(src), "r"(c0), "r"(c1) : "memory");
}
__device__ __forceinline__ void fz_bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Until at most N of this thread's bulk groups still read shared memory
// (.read) or are unfinished.
template <int N> __device__ __forceinline__ void fz_bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(N) : "memory");
}
template <int N> __device__ __forceinline__ void fz_bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;" :: "n"(N) : "memory");
}
// Shared-memory writes of this thread, visible to the TMA (the async proxy).
__device__ __forceinline__ void fz_fence_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
// A barrier of `n` threads (one consumer warpgroup) on hardware barrier `id`.
__device__ __forceinline__ void fz_bar_sync(int id, int n) {
  asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(n) : "memory");
}
__device__ __forceinline__ void fz_wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void fz_wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> __device__ __forceinline__ void fz_wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
}
)";

/// `fz_wgmma(acc, descA, descB)`: acc (64 x n, fp32) += A (64 x 16) B^T (16 x n).
std::string wgmmaWrapper(int n, const std::string &elem) {
  WgmmaCall call;
  call.n = n;
  call.elem = elem;
  return wgmmaWrapper(call);
}

std::string wgmmaWrapper(const WgmmaCall &c) {
  const int regs = c.n / 2;
  const std::string type = c.elem == "fz_bf16" ? "bf16" : "f16";
  const int aRegs = c.aInRegisters ? 4 : 0;
  // Operands: d[0 .. regs), then A (4 registers or a descriptor), B, the flag.
  const int aAt = regs, bAt = regs + (c.aInRegisters ? 4 : 1), flagAt = bAt + 1;
  std::string s = "__device__ __forceinline__ void " + c.name + "(float (&d)" +
                  (c.blocked ? "[" + str(c.n / 8) + "][4]" : "[" + str(regs) + "]") + ", " +
                  (c.aInRegisters ? "const unsigned (&a)[4]" : "unsigned long long a") +
                  ", unsigned long long b, int accumulate) {\n";
  s += "  asm volatile(\"{\\n  .reg .pred p;\\n  setp.ne.b32 p, %" + str(flagAt) +
       ", 0;\\n  wgmma.mma_async.sync.aligned.m64n" + str(c.n) + "k16.f32." + type + "." + type +
       " {\"\n";
  for (int i = 0; i < regs; i += 8) {
    s += "      \"";
    for (int j = i; j < std::min(regs, i + 8); ++j)
      s += "%" + str(j) + (j + 1 < regs ? ", " : "");
    s += "\"\n";
  }
  std::string a = "%" + str(aAt);
  if (c.aInRegisters)
    a = "{%" + str(aAt) + ", %" + str(aAt + 1) + ", %" + str(aAt + 2) + ", %" + str(aAt + 3) + "}";
  // Scale d by the flag, A and B by 1; A from registers takes no transpose.
  s += "      \"}, " + a + ", %" + str(bAt) + ", p, 1, 1" + (c.aInRegisters ? "" : ", 0") + ", " +
       (c.transposeB ? "1" : "0") + ";\\n}\"\n      : ";
  for (int j = 0; j < regs; ++j)
    s += std::string(j ? ", " : "") + ((j % 8 == 0 && j) ? "\n        " : "") + "\"+f\"(d[" +
         (c.blocked ? str(j / 4) + "][" + str(j % 4) : str(j)) + "])";
  s += "\n      : ";
  for (int j = 0; j < aRegs; ++j)
    s += "\"r\"(a[" + str(j) + "]), ";
  if (!c.aInRegisters)
    s += "\"l\"(a), ";
  s += "\"l\"(b), \"r\"(accumulate));\n}\n";
  return s;
}

/// Whether `v` is M x N (leading dims of 1 aside): one element per output.
static bool tileShaped(Value v, const GemmShape &shape) {
  SmallVector<int64_t> sh;
  for (int64_t d : shapeOf(v))
    if (d != 1 || !sh.empty())
      sh.push_back(d);
  return sh.size() == 2 && sh[0] == shape.m && sh[1] == shape.n;
}

static bool sixteenBit(Value v) { return isHalfFloat(dtypeOf(v)); }

bool GemmGen::tmaStoreApplies(int64_t smemPerBlock) {
  tmaResidual = -1;
  if (!parts.empty()) {
    // Products side by side: 16-bit results with 16-byte rows, no epilogue
    // inputs (concatWgmmaApplies); each tile stores through its part's map.
    tmaSlots = (cfg.bn / 64) % 2 == 0 ? 2 : 1;
    return cfg.wgmma && !cfg.pingpong && cfg.bn % 64 == 0 &&
           stageBytes * cfg.stages + boxesBytes(tmaSlots) + 1024 <= smemPerBlock;
  }
  if (!cfg.wgmma || cfg.pingpong || cfg.bn % 64 != 0 || fusion.getNumResults() != 1 ||
      shape.batch != 1 || shape.n % 8 != 0 || !sixteenBit(fusion.getResult(0)) ||
      !tileShaped(fusion.getResult(0), shape))
    return false;
  auto fits = [&](int slots) {
    return stageBytes * cfg.stages + boxesBytes(slots) + 1024 <= smemPerBlock;
  };
  // Boxes in turn: a number that divides the tile's, so that a box's chunks
  // of one tile and the next are whole turns apart (the stores' and the
  // residual barriers' bookkeeping count on it).
  const int chunks = cfg.bn / 64;
  tmaSlots = chunks % 2 == 0 ? 2 : 1;
  if (!fits(tmaSlots))
    return false;
  // A 16-bit M x N input (2-D, so the epilogue's index is its own) rides in
  // the boxes: every box of the tile when they fit, else the same in turn.
  if (batchShape.empty())
    for (BlockArgument arg : fusion.getBodyBlock().getArguments())
      if (arg != viewSource(mm.getLhs()) && arg != viewSource(mm.getRhs()) &&
          !(mm2 && arg == viewSource(mm2.getRhs())) &&
          sixteenBit(arg) && shapeOf(arg).size() == 2 && tileShaped(arg, shape)) {
        tmaResidual = static_cast<int>(arg.getArgNumber());
        if (fits(cfg.bn / 64))
          tmaSlots = cfg.bn / 64;
        break;
      }
  return true;
}

std::string GemmGen::tmaBox(const std::string &chunk, int64_t boxesAt) const {
  return "fz_base + " + str(boxesAt) + " + fz_cw * " + str(tmaSlots * kBoxBytes) + " + ((" +
         chunk + ") % " + str(tmaSlots) + ") * " + str(kBoxBytes);
}

std::string GemmGen::boxInside(const std::string &chunk) const {
  return "fz_n0 + (" + chunk + ") * 64 < " + (parts.empty() ? str(shape.n) : "fz_nlim") +
         " && fz_m0 + fz_cw * 64 < " + str(shape.m);
}

std::string GemmGen::residualLoad(const std::string &chunk, int64_t boxesAt) const {
  // Inside M and N: the TMA fills the box and counts its bytes; past them
  // (no box to load) a plain arrival completes the barrier's phase all the same.
  std::string bar = "fz_smem_u32(&fz_rbar[fz_cw * " + str(tmaSlots) + " + (" + chunk + ") % " +
                    str(tmaSlots) + "])";
  return "if (" + boxInside(chunk) + ") { fz_mbar_expect_tx(" + bar + ", " + str(kBoxBytes) + "); fz_tma_2d(" +
         tmaBox(chunk, boxesAt) + ", &fz_tmR, " + bar + ", fz_n0 + (" + chunk +
         ") * 64, fz_m0 + fz_cw * 64); } else fz_mbar_arrive(" + bar + ");\n";
}

std::string GemmGen::tmaEpilogue(int64_t boxesAt) {
  // Per consumer, tmaSlots boxes of 64 x 64 after the stages, one per 64
  // columns of the tile in turn: the results go to one while the TMA still
  // writes others to global memory, and the next tile's products start
  // without waiting for the stores. A residual loaded by the TMA is in the
  // box already; the result overwrites it there.
  const int chunks = cfg.bn / 64, slots = tmaSlots;
  const bool res = tmaResidual >= 0;
  std::string t = storageType(dtypeOf(fusion.getResult(0)));
  std::string s = "    // epilogue, in registers, out through shared memory and the TMA\n";
  // Unrolled: the accumulators stay registers only under constant indices.
  s += "    #pragma unroll\n    for (int fz_c = 0; fz_c < " + str(chunks) + "; ++fz_c) {\n";
  s += "      const unsigned fz_box = " + tmaBox("fz_c", boxesAt) + ";\n";
  s += "      " + t + " *const fz_out0_tile = reinterpret_cast<" + t +
       " *>(fz_dyn + (fz_box - fz_smem_u32(fz_dyn)));\n";
  if (res) {
    s += "      fz_mbar_wait(fz_smem_u32(&fz_rbar[fz_cw * " + str(slots) + " + fz_c % " + str(slots) +
         "]), (fz_ti * " + str(chunks / slots) + " + fz_c / " + str(slots) +
         ") & 1);  // the residual's box\n";
  } else {
    s += "      if (threadIdx.x % 128 == 0) fz_bulk_wait_read<" + str(slots - 1) +
         ">();  // this box's last store has read it\n";
    s += "      fz_bar_sync(1 + fz_cw, 128);\n";
  }
  s += "      #pragma unroll\n      for (int jj = 0; jj < 8; ++jj)\n";
  s += "      #pragma unroll\n      for (int h = 0; h < 2; ++h) {\n";
  s += "        const int j = fz_c * 8 + jj, mb = 0;\n";
  s += "        const int fz_sr = fz_w * 16 + lane / 4 + h * 8, fz_sc = jj * 8 + (lane % 4) * 2;\n";
  if (parts.empty())
    s += pairEpilogue("fz_m0 + fz_cw * 64 + fz_sr", "fz_n0 + j * 8 + (lane % 4) * 2",
                      "acc[mb][4 * j + 2 * h]", "acc[mb][4 * j + 2 * h + 1]",
                      "acc2[mb][4 * j + 2 * h]", "acc2[mb][4 * j + 2 * h + 1]");
  else  // the product itself, whichever part the tile is of
    s += "        const float fz_r[2] = {acc[mb][4 * j + 2 * h], acc[mb][4 * j + 2 * h + 1]};\n"
         "        fz_store<" + t + ", 2>(fz_out0_tile, " + kBoxedIndex + ", fz_r);\n";
  s += "      }\n";
  s += "      fz_fence_async_smem();\n";
  s += "      fz_bar_sync(1 + fz_cw, 128);\n";
  s += "      if (threadIdx.x % 128 == 0) {\n";
  s += "        if (" + boxInside("fz_c") + ")\n";
  s += "          fz_tma_store_2d(" + partMap("fz_tmO") + ", fz_box, fz_n0 + fz_c * 64, fz_m0 + fz_cw * 64);\n";
  s += "        fz_bulk_commit();\n";
  if (res && slots < chunks) {
    // The box's next residual, once its store has read it.
    s += "        if (fz_c + " + str(slots) + " < " + str(chunks) + ") {\n";
    s += "          fz_bulk_wait_read<0>();\n";
    s += "          " + residualLoad("fz_c + " + str(slots), boxesAt);
    s += "        }\n";
  }
  s += "      }\n    }\n";
  if (res)
    s += "    ++fz_ti;\n";
  s += "  }\n";
  s += "  if (threadIdx.x % 128 == 0) fz_bulk_wait<0>();  // the stores are done with the boxes\n";
  if (cfg.cluster > 1)
    s += "  fz_cluster_barrier();\n";
  return s;
}

KernelText GemmGen::hopperSource() {
  const bool pingpong = cfg.pingpong;
  const int BM = cfg.bm, BN = cfg.bn, S = cfg.stages, consumers = pingpong ? 2 : BM / 64;
  const int C = cfg.cluster;
  const int64_t aBytes = (int64_t)BM * 128, bBytes = (int64_t)BN * 128;
  // A dual product's stage holds both B tiles, mm2's after mm's.
  const int64_t bStage = bBytes * (mm2 ? 2 : 1);
  const int64_t kSteps = (shape.k + 63) / 64;
  const int64_t tilesTotal = ((shape.m + BM - 1) / BM) * tilesN();
  // Registers: the producer keeps 40, the consumers share the rest.
  const int consumerRegs = std::min<int>(240, ((65536 / 128 - 40) / consumers) / 8 * 8);
  // The tensor maps of the parts after the first (fz_tmB2, fz_tmB3, ...).
  auto partMaps = [&](const std::string &base) {
    std::string m;
    for (size_t p = 1; p < parts.size(); ++p)
      m += ", const __grid_constant__ fz_tmap " + base + str(p + 1);
    return m;
  };
  KernelText text;
  text.helpers = kHopperHelpers + wgmmaWrapper(BN, elem) + "\n";
  text.qualifiers = "__launch_bounds__(" + str(threads) + ", 1)";
  text.params = parameters(fusion);
  if (rowStats)
    text.params.push_back(kScratchParam);
  text.moreParams =
      ",\n    const __grid_constant__ fz_tmap fz_tmA, const __grid_constant__ fz_tmap fz_tmB" +
      std::string(mm2 ? ", const __grid_constant__ fz_tmap fz_tmB2" : "") + partMaps("fz_tmB") +
      (tmaStore ? ",\n    const __grid_constant__ fz_tmap fz_tmO" : "") + partMaps("fz_tmO") +
      (tmaResidual >= 0 ? ", const __grid_constant__ fz_tmap fz_tmR" : "");
  text.staticShared = true;
  std::string s;
  s += "  extern __shared__ __align__(1024) unsigned char fz_dyn[];\n";
  s += "  // 128-byte swizzled tiles need 1024-byte aligned buffers\n";
  s += "  const unsigned fz_base = (fz_smem_u32(fz_dyn) + 1023u) & ~1023u;\n";
  s += "  const unsigned fz_A = fz_base, fz_B = fz_base + " + str(S * aBytes) + ";\n";
  s += "  __shared__ __align__(8) unsigned long long fz_full[" + str(S) + "], fz_empty[" + str(S) +
       "];\n";
  if (rowStats)
    s += "  __shared__ bool fz_last;  // this block's tile was its row tile's last\n";
  if (pingpong)
    s += "  __shared__ __align__(8) unsigned long long fz_turn[2];  // whose mainloop is next\n";
  if (tmaResidual >= 0)
    s += "  __shared__ __align__(8) unsigned long long fz_rbar[" + str(consumers * tmaSlots) +
         "];  // a residual box arrived\n";
  s += "  const int fz_wg = threadIdx.x / 128;\n";
  if (C > 1)
    s += "  const unsigned fz_rank = fz_cluster_rank();  // which part of each B tile this block loads\n";
  s += "  if (threadIdx.x == 0) {\n";
  s += "    for (int st = 0; st < " + str(S) + "; ++st) {\n";
  s += "      fz_mbar_init(fz_smem_u32(&fz_full[st]), 1);\n";
  s += "      fz_mbar_init(fz_smem_u32(&fz_empty[st]), " + str(pingpong ? 1 : consumers * C) + ");\n    }\n";
  if (pingpong)
    s += "    fz_mbar_init(fz_smem_u32(&fz_turn[0]), 1);\n    fz_mbar_init(fz_smem_u32(&fz_turn[1]), 1);\n";
  if (tmaResidual >= 0)
    s += "    for (int b = 0; b < " + str(consumers * tmaSlots) +
         "; ++b) fz_mbar_init(fz_smem_u32(&fz_rbar[b]), 1);\n";
  s += "    asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");\n  }\n";
  // A cluster's blocks multicast into each other's buffers and arrive on
  // each other's barriers: all are initialized before any block starts.
  s += C > 1 ? "  fz_cluster_barrier();\n" : "  __syncthreads();\n";
  // Persistent: each block walks tiles blockIdx.x, + gridDim.x, ...; buffer
  // use `it` counts K steps across tiles, so the producer runs ahead into the
  // next tile while the consumers apply the epilogue.
  std::string tiles = "for (int fz_t = blockIdx.x; fz_t < " + str(tilesTotal) +
                      "; fz_t += gridDim.x) {\n";
  // Producer.
  s += "  if (fz_wg == 0) {\n";
  s += "    asm volatile(\"setmaxnreg.dec.sync.aligned.u32 40;\");\n";
  s += "    if (threadIdx.x == 0) {\n";
  s += "      int it = 0;\n";
  s += "      " + tiles + tileOrder("fz_t", "        ");
  s += "        for (int kt = 0; kt < " + str(kSteps) + "; ++kt, ++it) {\n";
  s += "          const int st = it % " + str(S) + ";\n";
  s += "          if (it >= " + str(S) + ")  // the consumers are done with this buffer's last use\n";
  s += "            fz_mbar_wait(fz_smem_u32(&fz_empty[st]), ((it / " + str(S) + ") & 1) ^ 1);\n";
  s += "          const unsigned full = fz_smem_u32(&fz_full[st]);\n";
  s += "          fz_mbar_expect_tx(full, " + str(aBytes + bStage) + ");\n";
  s += "          fz_tma_2d(fz_A + st * " + str(aBytes) + ", &fz_tmA, full, kt * 64, fz_m0);\n";
  if (C > 1)
    s += "          fz_tma_2d_mc(fz_B + st * " + str(bBytes) + " + fz_rank * " + str(bBytes / C) +
         ", &fz_tmB, full, kt * 64, fz_n0 + fz_rank * " + str(BN / C) + ", " + str((1 << C) - 1) +
         ");\n";
  else
    s += "          fz_tma_2d(fz_B + st * " + str(bStage) + ", " + partMap("fz_tmB") +
         ", full, kt * 64, fz_n0);\n";
  if (mm2)
    s += "          fz_tma_2d(fz_B + st * " + str(bStage) + " + " + str(bBytes) +
         ", &fz_tmB2, full, kt * 64, fz_n0);\n";
  // The epilogue reads its [M, N] inputs (a residual, the other half of a
  // SwiGLU) one element pair per thread, latency-bound: with the tile's last
  // K step, ask for its rows of them in L2, a few K steps before the epilogue.
  {
    std::string rows, boxes;
    // Products side by side have no epilogue inputs (only their weights).
    for (BlockArgument arg : fusion.getBodyBlock().getArguments()) {
      if (!parts.empty())
        break;
      // Whole 16-byte rows: the bulk prefetch takes 16-byte aligned spans.
      int64_t eb = dtypeBytes(dtypeOf(arg));
      if ((shape.n * eb) % 16 != 0 || (BN * eb) % 16 != 0)
        continue;
      if (arg == viewSource(mm.getLhs()) || arg == viewSource(mm.getRhs()) ||
          (mm2 && arg == viewSource(mm2.getRhs())))
        continue;
      if (!tileShaped(arg, shape))
        continue;
      if ((int)arg.getArgNumber() == tmaResidual) {
        // The TMA loads the boxes of the first tmaSlots chunks at the start
        // of the tile, the others during the epilogue: those, one prefetch
        // per box. (A prefetch per row, 128 per tile from the one producer
        // thread, would hold up the next tile's operand loads.)
        for (int c = tmaSlots; c < BN / 64; ++c)
          for (int cw = 0; cw < BM / 64; ++cw)
            boxes += "            if (fz_n0 + " + str(c * 64) + " < " + str(shape.n) +
                     " && fz_m0 + " + str(cw * 64) + " < " + str(shape.m) +
                     ") fz_tma_prefetch_2d(&fz_tmR, fz_n0 + " + str(c * 64) + ", fz_m0 + " +
                     str(cw * 64) + ");\n";
        continue;
      }
      rows += "              fz_prefetch_l2(" + ElementEmitter::argName(arg.getArgNumber()) +
              " + (long long)(fz_m0 + r) * " + str(shape.n) + " + fz_n0, cols * " + str(eb) +
              ");\n";
    }
    if (!rows.empty() || !boxes.empty()) {
      s += "          if (kt == " + str(kSteps - 1) + ") {  // the epilogue's inputs of this tile into L2\n";
      s += boxes;
      if (!rows.empty()) {
        s += "            const unsigned cols = min(" + str(BN) + ", " + str(shape.n) + " - fz_n0);\n";
        s += "            for (int r = 0; r < " + str(BM) + " && fz_m0 + r < " + str(shape.m) + "; ++r) {\n";
        s += rows + "            }\n";
      }
      s += "          }\n";
    }
  }
  // A block leaves only after the cluster's last arrivals on its barriers.
  s += "        }\n      }\n    }\n" + std::string(C > 1 ? "    fz_cluster_barrier();\n" : "") +
       "    return;\n  }\n";
  // Consumers. Cooperative: every consumer takes 64 rows of every tile.
  // Ping-pong: consumer c takes whole tiles c, c + 2, ... of this block's
  // sequence, so one applies its epilogue while the other multiplies (the
  // buffers are filled in tile order, which keeps their products in turn).
  const int mBlocks = pingpong ? BM / 64 : 1;
  s += "  asm volatile(\"setmaxnreg.inc.sync.aligned.u32 " + str(consumerRegs) + ";\");\n";
  s += "  const int fz_cw = fz_wg - 1;\n";
  s += "  const int lane = threadIdx.x % 32, fz_w = (threadIdx.x / 32) % 4;\n";
  s += "  const int fz_b = 0;\n";
  if (pingpong) {
    s += "  for (int fz_i = fz_cw;; fz_i += " + str(consumers) + ") {\n";
    s += "    const int fz_t = blockIdx.x + fz_i * gridDim.x;\n";
    s += "    if (fz_t >= " + str(tilesTotal) + ") break;\n";
    s += "    int it = fz_i * " + str(kSteps) + ";  // this tile's first buffer use\n";
    s += tileOrder("fz_t", "    ");
  } else {
    s += tmaResidual >= 0 ? "  int it = 0, fz_ti = 0;  // K steps and tiles so far\n"
                                      : "  int it = 0;  // K steps so far\n";
    s += "  " + tiles + tileOrder("fz_t", "    ");
    if (tmaResidual >= 0) {
      // The residual's first boxes load during the products (the boxes'
      // stores from the last tile have read them by now).
      s += "    if (threadIdx.x % 128 == 0) {\n      fz_bulk_wait_read<0>();\n";
      for (int c = 0; c < std::min(tmaSlots, BN / 64); ++c)
        s += "      " + residualLoad(std::to_string(c), S * (aBytes + bStage));
      s += "    }\n";
    }
  }
  s += "    float acc[" + str(mBlocks) + "][" + str(BN / 2) + "];\n";
  s += "    #pragma unroll\n    for (int mb = 0; mb < " + str(mBlocks) +
       "; ++mb)\n      #pragma unroll\n      for (int i = 0; i < " + str(BN / 2) +
       "; ++i) acc[mb][i] = 0.f;\n";
  if (mm2)
    s += "    float acc2[1][" + str(BN / 2) + "];\n    #pragma unroll\n    for (int i = 0; i < " +
         str(BN / 2) + "; ++i) acc2[0][i] = 0.f;\n";
  // A barrier's parity tells only its last two phases apart: a consumer may
  // wait on a buffer's next use only once the other consumer has waited on
  // all uses of the tile before (its mainloop is done), so the turns pass.
  if (pingpong)
    s += "    if (fz_i > 0) fz_mbar_wait(fz_smem_u32(&fz_turn[fz_cw]), ((fz_i - 1) / 2) & 1);\n";
  s += "    #pragma unroll 1\n    for (int kt = 0; kt < " + str(kSteps) + "; ++kt, ++it) {\n";
  s += "      const int st = it % " + str(S) + ";\n";
  s += "      fz_mbar_wait(fz_smem_u32(&fz_full[st]), (it / " + str(S) + ") & 1);\n";
  s += "      const unsigned a = fz_A + st * " + str(aBytes) + (pingpong ? "" : " + fz_cw * 8192") +
       ", b = fz_B + st * " + str(bStage) + ";\n";
  s += "      fz_wg_fence();\n";
  s += "      #pragma unroll\n      for (int kk = 0; kk < 4; ++kk) {  // 16 deep each: 32 bytes along the row\n";
  s += "        #pragma unroll\n        for (int mb = 0; mb < " + str(mBlocks) + "; ++mb)\n";
  s += "          fz_wgmma(acc[mb], fz_wg_desc(a + mb * 8192 + kk * 32), fz_wg_desc(b + kk * 32), 1);\n";
  if (mm2)  // the same A slice against the second weight's tile
    s += "        fz_wgmma(acc2[0], fz_wg_desc(a + kk * 32), fz_wg_desc(b + " + str(bBytes) +
         " + kk * 32), 1);\n";
  s += "      }\n";
  s += "      fz_wg_commit();\n";
  s += "      fz_wg_wait<1>();  // the step before has finished reading its buffer\n";
  // A buffer is free once every consumer of every block of the cluster (the
  // multicast writes them all) is done with it.
  auto release = [&](const std::string &stage) {
    std::string bar = "fz_smem_u32(&fz_empty[" + stage + "])";
    if (C == 1)
      return "fz_mbar_arrive(" + bar + ");\n";
    return "for (unsigned c = 0; c < " + str(C) + "; ++c) fz_mbar_arrive_in(" + bar + ", c);\n";
  };
  s += "      if (kt > 0 && threadIdx.x % 128 == 0)\n";
  s += "        " + release("(it - 1) % " + str(S));
  s += "    }\n";
  if (pingpong)
    s += "    if (threadIdx.x % 128 == 0) fz_mbar_arrive(fz_smem_u32(&fz_turn[fz_cw ^ 1]));\n";
  s += "    fz_wg_wait<0>();\n";
  s += "    if (threadIdx.x % 128 == 0)  // the tile's last buffer\n";
  s += "      " + release("(it - 1) % " + str(S));
  // Epilogue from the accumulators.
  if (rowStats) {
    // Cooperative consumers (generateGemm leaves out ping-pong): the
    // consumers' rows of one tile together.
    RowStatsLayout l;
    l.slices = mBlocks;
    l.pairs = BN / 8;
    l.col = "fz_n0 + j * 8 + (lane % 4) * 2 + l";
    l.acc = "acc[i][4 * j + 2 * h + l]";
    l.indent = "    ";
    l.persistent = true;
    l.threads = consumers * 128;
    l.row = "fz_m0 + fz_cw * 64 + fz_w * 16 + lane / 4 + h * 8";
    l.thread = "(threadIdx.x - 128)";
    l.warp = "((threadIdx.x - 128) / 32)";
    l.sync = "fz_bar_sync(1, " + str(l.threads) + ");";
    l.leader = "threadIdx.x == 128";
    text.body = s + rowStatsEpilogue(l) + "  }\n";
    return text;
  }
  if (tmaStore) {
    text.body = s + tmaEpilogue(S * (aBytes + bStage));
    return text;
  }
  s += "    // epilogue, in registers\n";
  s += "    #pragma unroll\n    for (int mb = 0; mb < " + str(mBlocks) + "; ++mb)\n";
  s += "    #pragma unroll\n    for (int j = 0; j < " + str(BN / 8) + "; ++j)\n";
  s += "      #pragma unroll\n      for (int h = 0; h < 2; ++h) {\n";
  s += pairEpilogue("fz_m0 + " + std::string(pingpong ? "mb" : "fz_cw") +
                        " * 64 + fz_w * 16 + lane / 4 + h * 8",
                    "fz_n0 + j * 8 + (lane % 4) * 2", "acc[mb][4 * j + 2 * h]",
                    "acc[mb][4 * j + 2 * h + 1]", "acc2[mb][4 * j + 2 * h]",
                    "acc2[mb][4 * j + 2 * h + 1]") +
       "      }\n  }\n";
  if (C > 1)
    s += "  fz_cluster_barrier();\n";
  text.body = s;
  return text;
}

} // namespace fusec::codegen::detail
