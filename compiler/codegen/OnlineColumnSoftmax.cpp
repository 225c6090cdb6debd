//===- OnlineColumnSoftmax.cpp - softmax over outer dims, read once -------===//
//
// softmax over dim 0 (y = exp(v - max v) / sum exp(v - max v), reduced over
// the leading dims) on Hopper. CooperativeColumnKernel.cpp keeps a cluster's
// column tile in shared memory and runs max, then sum, then the outputs over
// it; that caps the tile at 64 bytes of a row, which HBM serves at 77% of a
// copy, and it reaches 64.5% of the floor (docs/reductions.md, "Last dim
// kept: column kernels"). Here:
//
//   * the max and the sum of exponentials are one pass: each thread keeps a
//     running (max, sum) per column and rescales the sum when the max grows
//     ("online" softmax), so the tile is read once before the cluster meets
//     once;
//   * the tile is 128 bytes of a row (8 threads x 16 bytes), held in three
//     tiers: a thread's first row slots in registers, the next in shared
//     memory, the rest in L2. Pass one reads the L2 rows with an evict_last
//     hint and every other byte with evict_first (they stay on chip), so the
//     L2 rows are still there when the output pass, which takes them first,
//     reads them again; outputs are stored evict_first.
//
// This layout reads the input from HBM once and is faster than 64-byte tiles
// in shared memory; pass one's 128-byte row pieces read at 75% of a plain
// read, which is why large grids take pairs of clusters (below; numbers in
// docs/reductions.md, "Last dim kept: column kernels").
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/ElementEmitter.h"
#include "compiler/codegen/KernelSpec.h"
#include "compiler/codegen/ReductionPhases.h"
#include "compiler/codegen/ScalarOps.h"
#include "compiler/shape/ShapeRules.h"

#include <algorithm>
#include <map>
#include <set>

using namespace mlir;

namespace fusec::codegen::detail {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

constexpr int64_t kThreads = 256, kMembers = 8, kTx = 8, kBatch = 4;
/// Pairs: 256-byte tiles (16 threads a row), each tile's rows
/// split over two clusters of 8 that exchange their statistics.
constexpr int64_t kPairTx = 16, kParts = 2;
/// Row slots per thread in registers and (at most) in shared memory; the
/// measured best for 1024-row chunks (registers 4 + shared 16 + L2 12).
constexpr int64_t kRegSlots = 4, kSmemSlots = 16, kMaxL2Slots = 16;

llvm::Error unsupported(const char *why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), why);
}

const char *kHelpers = R"(// ---- online softmax, L2 cache hints ----
// Folds a batch of rows x[] into a running (max m, sum s of exp(. - m)); the
// sum is rescaled only when the max grows, which is rare after the first rows
// (one exponential per element, not two). A NaN in x is dropped by fmaxf but
// makes s NaN, and the column's max becomes NaN at the end (fz_stat). FMA:
// the exponent as one fma (16-bit data; its error grows with |m|, 2^-24 |m|).
// While m is -inf (nothing but -inf or NaN so far) the exponent is taken
// against 0, not m: exp(-inf) adds 0 and a NaN still reaches the sum, with a
// select, not a branch per column and batch (those were 13% more
// instructions than bench/micro/column_softmax.cu, bench/NOTES.md session p).
template <int B, bool FMA>
__device__ __forceinline__ void fz_online_add(float &m, float &s, const float (&x)[B]) {
  float bm = m;
#pragma unroll
  for (int u = 0; u < B; ++u) bm = fmaxf(bm, x[u]);
  if (bm > m) { s *= fz_ex2((m - bm) * 1.4426950408889634f); m = bm; }
  const bool none = m == -__int_as_float(0x7f800000);
  const float mr = none ? 0.f : m, ml = mr * 1.4426950408889634f;
#pragma unroll
  for (int u = 0; u < B; ++u)
    s += fz_ex2(FMA ? fmaf(x[u], 1.4426950408889634f, -ml) : (x[u] - mr) * 1.4426950408889634f);
}
// Merges another running (max, sum) into (m, s). While both maxima are -inf
// the exponents are taken against 0 (they are 0, and a NaN either sum holds
// stays NaN): a select, not a branch. The merges run between pass one and
// the outputs, where every block of a cluster waits for the slowest: as
// branches they cost 1.5 us of 118 (bench/NOTES.md, session q).
__device__ __forceinline__ void fz_online_merge(float &m, float &s, float om, float os) {
  const float nm = fmaxf(m, om), r = nm == -__int_as_float(0x7f800000) ? 0.f : nm;
  s = s * fz_ex2((m - r) * 1.4426950408889634f) + os * fz_ex2((om - r) * 1.4426950408889634f);
  m = nm;
}
__device__ __forceinline__ unsigned long long fz_policy_keep() {
  unsigned long long p; asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p)); return p;
}
__device__ __forceinline__ unsigned long long fz_policy_drop() {
  unsigned long long p; asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p)); return p;
}
__device__ __forceinline__ uint4 fz_ld16(const void *p, unsigned long long pol) {
  uint4 v;
  asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(pol));
  return v;
}
template <typename S, int N, typename C>
__device__ __forceinline__ void fz_unpack(uint4 raw, C (&out)[N]) {
  fz_pack<S, N> u;
  u.v = raw;
#pragma unroll
  for (int i = 0; i < N; ++i) out[i] = fz_in(u.s[i]);
}
// bf16 from whole 32-bit words, a shift or a mask per value (the generic
// path takes each 16-bit half out first): 0.7 us of 117 (bench/NOTES.md).
template <>
__device__ __forceinline__ void fz_unpack<fz_bf16, 8, float>(uint4 raw, float (&out)[8]) {
  const unsigned w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int i = 0; i < 4; ++i)
    out[2 * i] = __uint_as_float(w[i] << 16), out[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
}
// fz_store with an L2 evict_first hint: the outputs are not read again here.
template <typename S, int N, typename C>
__device__ __forceinline__ void fz_store_ef(S *__restrict__ p, long long off, const C (&in)[N]) {
  const uint4 v = fz_pack_out<S, N>(in).v;
  asm volatile("st.global.L1::no_allocate.L2::cache_hint.v4.u32 [%0], {%1,%2,%3,%4}, %5;"
               :: "l"(p + off), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "l"(fz_policy_drop()) : "memory");
}
__device__ __forceinline__ float2 fz_dsmem_ld2(const float2 *p, unsigned rank) {
  unsigned local = (unsigned)__cvta_generic_to_shared(p), remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  float2 v;
  asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "r"(remote) : "memory");
  return v;
}

)";

const char *kPairHelpers = R"(// ---- two clusters a tile: their (max, sum) through global memory ----
// A statistic travels as one 64-bit word {value bits, epoch}: a single
// 64-bit store is seen whole, so a word that carries this launch's epoch is
// this launch's value, with no flag and no fence (a flag and fences measured
// 6.5 us of 115, these words 1.6; bench/NOTES.md session v).
__device__ __forceinline__ void fz_publish(unsigned long long *w, float2 a, unsigned epoch) {
  const unsigned long long e = (unsigned long long)epoch << 32;
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" :: "l"(w), "l"(e | __float_as_uint(a.x)) : "memory");
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" :: "l"(w + 1), "l"(e | __float_as_uint(a.y)) : "memory");
}
// Waits for a word of this epoch. The other cluster of the pair is the
// next or previous in launch order, so it is resident or next to start;
// should it never come, the launch fails after 2^32 SM cycles (2-4 s)
// instead of hanging (the SM's cycle counter: the global timer is slower
// to read).
// Both words are read at once (one round trip a poll, not two in turn).
__device__ __forceinline__ float2 fz_await(const unsigned long long *w, unsigned epoch) {
  const long long t0 = clock64();
  for (;;) {
    unsigned long long a, b;
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(a) : "l"(w) : "memory");
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(b) : "l"(w + 1) : "memory");
    if ((unsigned)(a >> 32) == epoch && (unsigned)(b >> 32) == epoch)
      return make_float2(__uint_as_float((unsigned)a), __uint_as_float((unsigned)b));
    if (clock64() - t0 > (1ll << 32)) __trap();
  }
}
// A peer block's shared memory as a plain pointer: its loads are ordinary
// ones the compiler may batch (fz_dsmem_ld2's are volatile).
__device__ __forceinline__ const float2 *fz_peer(const float2 *p, unsigned rank) {
  unsigned long long r;
  asm("mapa.u64 %0, %1, %2;" : "=l"(r) : "l"(p), "r"(rank));
  return reinterpret_cast<const float2 *>(r);
}

)";

/// max(v) and sum(exp(v - max(v))) over the same rows, the only reductions.
struct Softmax {
  Operation *max = nullptr, *sum = nullptr;
};
std::optional<Softmax> matchSoftmax(FusionOp fusion) {
  std::map<int, std::vector<Operation *>> phases = reductionPhases(fusion);
  if (phases.size() != 2 || phases.begin()->second.size() != 1 ||
      phases.rbegin()->second.size() != 1)
    return std::nullopt;
  Operation *mx = phases.begin()->second[0], *sm = phases.rbegin()->second[0];
  if (!isa<MaxOp>(mx) || !isa<SumOp>(sm))
    return std::nullopt;
  if (shiftedExpMax(sm->getOperand(0)) != mx ||
      std::string(computeType(dtypeOf(mx->getOperand(0)))) != "float" ||
      std::string(computeType(dtypeOf(sm->getResult(0)))) != "float")
    return std::nullopt;
  return Softmax{mx, sm};
}

/// Prefetched: the output pass's first L2 batch, loaded into fz_pre before
/// the cluster meets.
enum class Tier { Regs, Shared, L2, Prefetched };

struct Plan {
  FusionOp fusion;
  std::vector<int64_t> domain, reduced, kept;
  int64_t rr = 1, kc = 1, vec = 1, ty = 1, width = 1, chunk = 1, slots = 1, regSlots = 0,
          smemSlots = 0, members = kMembers, tx = kTx;
  /// Clusters a tile's rows are split over (2: pairs, which exchange their
  /// statistics through the scratch).
  int64_t parts = 1;
  int last = 0;
  struct Cached {
    std::string ptr, offset, storage;
    DType dtype;
  };
  std::vector<Cached> cache;
  std::map<std::string, int> cacheByKey;
  std::set<int> used;  ///< caches the code emitted since the last reset reads
  std::map<Operation *, std::string> reductionVars;
  Operation *sum = nullptr;
  /// exp(x - max) in the outputs as one fma and ex2 from fz_ML (max * log2e)
  /// when set: for 16-bit outputs (error 2^-24 |max|, far below their ulp).
  Value expValue, maxOperand;

  ElementEmitter emitter() {
    ElementEmitter e(fusion, columnIndexNames(domain.size(), reduced, kept), "            ");
    e.load = columnLoads(reduced, last, vec, [this](BlockArgument arg, const std::string &ptr,
                                                   const std::string &off) {
      auto [it, fresh] = cacheByKey.try_emplace(ptr + "@" + off, (int)cache.size());
      if (fresh)
        cache.push_back({ptr, off, storageType(dtypeOf(arg)), dtypeOf(arg)});
      used.insert(it->second);
      return "cv" + str(it->second) + "[l]";
    });
    e.reduced = [this](Operation *op) { return reductionVars.at(op) + "[l]"; };
    e.known = [this](ElementEmitter &em, Value v, const Index &idx) -> std::optional<std::string> {
      if (!expValue || v != expValue || !ElementEmitter::isIdentity(idx))
        return std::nullopt;
      std::string x = em.emit(maxOperand, idx), name = em.fresh("v");
      em.line("const float " + name + " = fz_ex2(fmaf(" + x + ", 1.4426950408889634f, -fz_ML[l]));");
      return name;
    };
    e.reciprocal = [this](Value d) -> std::optional<std::string> {
      if (throughBroadcasts(d) != sum)
        return std::nullopt;
      return std::string("fz_rcp[l]");
    };
    return e;
  }

  /// Loads rows [k0, k0 + kBatch) of the L2 tier into fz_pre<c>, evict_first
  /// as the output pass would.
  std::string prefetch(int64_t k0, const std::set<int> &caches) const {
    std::string B = str(kBatch), s;
    for (int c : caches)
      s += "  uint4 fz_pre" + str(c) + "[" + B + "];\n";
    s += "  #pragma unroll\n  for (int u = 0; u < " + B + "; ++u) {\n    const int fz_q = " + str(k0) +
         " + u;\n" + rowOf("    ");
    for (int c : caches)
      s += "    fz_pre" + str(c) + "[u] = " + load16(c, "fz_drop") + ";\n";
    return s + "  }\n";
  }

  /// Slot fz_q's row of the chunk (rrow) and the reduced dims' indices.
  std::string rowOf(const std::string &in) const {
    return in + "const fz_idx rrow = rbase + ty + fz_q * " + str(ty) + ";\n" +
           reducedIndexDecls(domain, reduced, "rrow", in);
  }

  /// Cache c's 16-byte vector of that row from global memory.
  std::string load16(int c, const std::string &policy) const {
    return "fz_ld16(" + cache[c].ptr + " + (" + cache[c].offset + "), " + policy + ")";
  }

  /// Row slots [k0, k1) of one tier: a thread's slot k is row ty + k * ty of
  /// the chunk. Loads kBatch rows' vectors first (bytes in flight), then runs
  /// `lanes` per row. `fill`: pass one, which reads HBM and keeps the rows
  /// in their tier; otherwise the rows come from the tier.
  std::string loop(Tier t, bool fill, int64_t k0, int64_t k1, const std::set<int> &caches,
                   const std::string &decls, const std::string &lanes, const std::string &post,
                   const std::string &batchPre = "", const std::string &batchPost = "",
                   const std::string &skipped = "") const {
    if (k0 >= k1)
      return "";
    // Whole batches need no clamp or guard (and the compiler sees every row
    // of a batch written); a ragged last batch runs `skipped` for its rows
    // past the tier.
    const bool whole = (k1 - k0) % kBatch == 0;
    std::string V = str(vec), B = str(kBatch);
    std::string s = t == Tier::Regs || t == Tier::Prefetched ? "    #pragma unroll\n"
                                                             : "    #pragma unroll 1\n";
    s += "    for (int fz_k = " + str(k0) + "; fz_k < " + str(k1) + "; fz_k += " + B + ") {\n";
    for (int c : caches)
      s += "      uint4 fz_raw" + str(c) + "[" + B + "];\n";
    s += batchPre;
    s += "      #pragma unroll\n      for (int u = 0; u < " + B + "; ++u) {\n";
    s += whole ? "        const int fz_q = fz_k + u;\n"
               : "        const int fz_q = min(fz_k + u, " + str(k1 - 1) + ");\n";
    if (t == Tier::L2 || fill)
      s += rowOf("        ");
    for (int c : caches) {
      std::string raw = "        fz_raw" + str(c) + "[u] = ";
      if (fill || t == Tier::L2)
        s += raw + load16(c, fill && t == Tier::L2 ? "fz_keep" : "fz_drop") + ";\n";
      else if (t == Tier::Prefetched)
        s += raw + "fz_pre" + str(c) + "[u];\n";
      else if (t == Tier::Shared)
        s += raw + "*reinterpret_cast<const uint4 *>(&cache" + str(c) + "[(fz_q - " +
             str(regSlots) + ") * " + str(ty) + " + ty][tx * " + V + "]);\n";
      else
        s += raw + "fz_reg" + str(c) + "[fz_q];\n";
    }
    s += "      }\n      #pragma unroll\n      for (int u = 0; u < " + B + "; ++u) {\n";
    s += "        const int fz_q = fz_k + u;\n";
    s += whole ? "        {\n" : "        if (fz_q < " + str(k1) + ") {\n";
    for (int c : caches) {
      if (fill && t == Tier::Regs)
        s += "          fz_reg" + str(c) + "[fz_q] = fz_raw" + str(c) + "[u];\n";
      if (fill && t == Tier::Shared)
        s += "          *reinterpret_cast<uint4 *>(&cache" + str(c) + "[(fz_q - " + str(regSlots) +
             ") * " + str(ty) + " + ty][tx * " + V + "]) = fz_raw" + str(c) + "[u];\n";
    }
    s += rowOf("          ");
    for (int c : caches)
      s += "          float cv" + str(c) + "[" + V + "];\n          fz_unpack<" + cache[c].storage +
           ", " + V + ">(fz_raw" + str(c) + "[u], cv" + str(c) + ");\n";
    s += decls + "          #pragma unroll\n          for (int l = 0; l < " + V + "; ++l) {\n";
    s += "            const fz_idx k" + str(last) + " = kl + l;\n" + lanes + "          }\n" + post;
    s += "        }";
    if (!whole && !skipped.empty())
      s += " else {\n" + skipped + "        }";
    return s + "\n      }\n" + batchPost + "    }\n";
  }
};

} // namespace

llvm::Expected<KernelSpec> generateOnlineColumnSoftmax(FusionOp fusion,
                                                       const DeviceProfile &profile) {
  std::optional<Softmax> sm = matchSoftmax(fusion);
  if (!sm)
    return unsupported("not a softmax over the reduced dims");
  Plan p;
  p.fusion = fusion;
  p.sum = sm->sum;
  takeColumnDomain(p, fusion);
  int64_t bytes = maxElementBytes(fusion);
  p.vec = 16 / bytes;
  if (16 % bytes != 0 || p.domain.back() % p.vec != 0 || p.kc < kTx * p.vec)
    return unsupported("rows are not whole 128-byte tiles of 16-byte vectors");
  // Pairs where a tile's rows, split over two clusters of 8, give every
  // thread the tuned slots with an L2 tier (24-36 rows), the tiles are whole
  // 256-byte pieces of 16-bit data, and there are two waves or more of them
  // (three blocks an SM): pass one then reads 256-byte row pieces, which HBM
  // serves better than 128 (docs/reductions.md, "Last dim kept: column
  // kernels").
  {
    const int64_t w = kPairTx * p.vec, ty = kThreads / kPairTx,
                  slots = p.rr / (kParts * kMembers * ty);
    if (bytes == 2 && p.kc % w == 0 && p.rr % (kParts * kMembers * ty) == 0 &&
        slots % kBatch == 0 && slots >= kRegSlots + kSmemSlots + kBatch &&
        slots <= kRegSlots + kSmemSlots + kMaxL2Slots &&
        p.kc / w * kParts * kMembers >= 2 * 3 * int64_t(std::max(profile.smCount, 1))) {
      p.tx = kPairTx;
      p.parts = kParts;
    }
  }
  p.width = p.tx * p.vec;
  p.ty = kThreads / p.tx;
  // The merges give each column four lanes of one block (a tree by
  // shuffles); pairs take one thread a column (below).
  const int64_t mergeLanes = p.parts > 1 ? 1 : 4;
  if (mergeLanes * p.width > kThreads)
    return unsupported("tile wider than the merges' lanes a column cover");
  // Every member holds whole batches of rows: chunks of equal size.
  if (p.rr % (p.parts * kMembers * p.ty) != 0)
    return unsupported("reduced rows do not split evenly over the cluster");
  // The cluster size: the largest of 8, 4 and 2 blocks whose grid is
  // resident at once (two blocks per SM: three fit, less what GPCs leave
  // over), fewer than 8 only with chunks of at most 1024 rows (the tiers were
  // tuned on those); 8 where none is. A grid a little past one resident wave
  // pays a second, thin one (docs/reductions.md, "Last dim kept": 4096 x 4096).
  const int64_t tiles = (p.kc + p.width - 1) / p.width;
  for (int64_t m = kMembers; m >= 2 && p.parts == 1; m /= 2)
    if ((m == kMembers || p.rr / m <= 1024) &&
        tiles * m <= 2 * int64_t(std::max(profile.smCount, 1))) {
      p.members = m;
      break;
    }
  p.chunk = p.rr / (p.parts * p.members);
  p.slots = p.chunk / p.ty;
  p.regSlots = p.slots >= 3 * kBatch ? kRegSlots : 0;
  p.smemSlots = std::min(p.slots - p.regSlots, kSmemSlots);
  if (p.slots - p.regSlots - p.smemSlots > kMaxL2Slots)
    return unsupported("column tile too tall to keep on chip and in L2");

  // Pass one: the running (max, sum) of the max's operand.
  ElementEmitter e = p.emitter();
  std::string x = e.emit(sm->max->getOperand(0), ElementEmitter::identity(p.domain.size()));
  // Each row's values go to fz_x (rows past the tier are -inf, which adds
  // nothing); the batch is folded in after the last row.
  std::string fillLanes = e.takeCode() + "            fz_x[l][u] = (float)" + x + ";\n";
  std::string V0 = str(p.vec), B0 = str(kBatch);
  std::string fillPre = "      float fz_x[" + V0 + "][" + B0 + "];\n";
  std::string fillSkipped = "          #pragma unroll\n          for (int l = 0; l < " + V0 +
                            "; ++l) fz_x[l][u] = -__int_as_float(0x7f800000);\n";
  const bool narrow = dtypeBytes(p.cache.empty() ? DType::F32 : p.cache.front().dtype) == 2;
  std::string fillPost = "      #pragma unroll\n      for (int l = 0; l < " + V0 +
                         "; ++l) fz_online_add<" + B0 + ", " + (narrow ? "true" : "false") +
                         ">(fz_rm[l], fz_rs[l], fz_x[l]);\n";
  std::set<int> fillCaches = p.used;
  // The outputs, from the combined statistics.
  p.reductionVars[sm->max] = "fz_M";
  p.reductionVars[sm->sum] = "fz_S";
  p.used.clear();
  if (narrow) {
    p.expValue = sm->sum->getOperand(0);
    p.maxOperand = sm->max->getOperand(0);
  }
  ColumnOutputCode out = columnOutputs(
      fusion, [&p] { return p.emitter(); }, p.domain, p.reduced, p.last, p.vec, "fz_store_ef");
  if (p.cache.size() != 1 || fillCaches.size() != 1)
    return unsupported("not one input read along the rows");
  if (!std::includes(fillCaches.begin(), fillCaches.end(), p.used.begin(), p.used.end()))
    return unsupported("the outputs read rows pass one does not keep");
  const Plan::Cached &c0 = p.cache.front();
  if (dtypeBytes(c0.dtype) * p.vec != 16)
    return unsupported("the kept input is not 16-byte vectors");
  // Outputs are stored as 16-byte vectors too (fz_store_ef).
  for (Value r : fusion.getResults())
    if (dtypeBytes(dtypeOf(r)) * p.vec != 16)
      return unsupported("an output is not 16-byte vectors of the tile");

  const int64_t l2Begin = p.regSlots + p.smemSlots;
  KernelSpec spec;
  spec.name = fusion->getAttrOfType<StringAttr>("name").str();
  spec.family = "column_reduction";
  std::string V = str(p.vec), W = str(p.width);
  const bool pairs = p.parts > 1;
  spec.text.helpers = kHelpers;
  if (pairs)
    spec.text.helpers += kPairHelpers;
  spec.text.qualifiers = "__cluster_dims__(" + str(p.members) + ", 1, 1) __launch_bounds__(" +
                         str(kThreads) + ", 3)";
  spec.text.params = parameters(fusion);
  if (pairs)
    spec.text.params.push_back(kScratchParam);
  spec.text.staticShared = true;
  std::string s;
  // The scratch: a tile's two halves' statistics. Both halves publish once
  // a launch, so after one their words carry the same epoch: this launch's
  // is one more than what this half's own word says. Thread 0 reads it now
  // and passes it on after pass one (no counter, nothing to reset; a count
  // of clusters moving a shared epoch on costs 3.5 us of 113 in
  // bench/micro/column_softmax.cu).
  const std::string rec0 = "reinterpret_cast<unsigned long long *>(fz_scratch) + (tile * " +
                           str(p.parts * p.width) + " + fz_half * " + str(p.width) + ") * 2";
  if (pairs)
    s += "  __shared__ unsigned fz_epoch_s;  // this launch's: one more than the last one's\n"
         "  unsigned long long fz_last = 0;\n";
  // Pairs index in 64 bits (an address is then one wide multiply-add).
  s += "  typedef " + std::string(pairs ? "long long" : indexType(fusion)) + " fz_idx;\n";
  s += "  extern __shared__ __align__(16) unsigned char fz_dyn[];\n";
  s += "  " + c0.storage + " (*cache0)[" + W + "] = reinterpret_cast<" + c0.storage + " (*)[" + W +
       "]>(fz_dyn);\n";
  // 16-byte aligned where fz_stat's float4s live in it (below).
  s += std::string("  __shared__ ") + (pairs ? "__align__(16) " : "") + "float2 fz_wred[" +
       str(kThreads / 32) + "][" + W + "];  // per warp (max, sum)\n";
  s += "  __shared__ float2 fz_part[" + W + "];  // this block's, read by the cluster\n";
  // The statistics take fz_wred's room (read before the cluster meets):
  // three blocks of 256-byte tiles fill an SM's 228 KB to the byte otherwise.
  s += pairs ? "  float4 *const fz_stat = reinterpret_cast<float4 *>(&fz_wred[0][0]);  // the column's statistics\n"
             : "  __shared__ float4 fz_stat[" + W + "];  // the column's statistics\n";
  s += "  const int tx = threadIdx.x % " + str(p.tx) + ", ty = threadIdx.x / " + str(p.tx) + ";\n";
  s += "  const unsigned member = fz_cluster_rank();\n";
  if (pairs) {
    s += "  // Tile t's rows: the first half in cluster 2t, the second in cluster 2t + 1.\n";
    s += "  const fz_idx tile = blockIdx.x / " + str(p.parts * p.members) + ";\n";
    s += "  const unsigned fz_half = blockIdx.x / " + str(p.members) + " % " + str(p.parts) + ";\n";
    s += "  const fz_idx rbase = (fz_idx)fz_half * " + str(p.rr / p.parts) + " + (fz_idx)member * " +
         str(p.chunk) + ";\n";
    s += "  if (threadIdx.x == 0)  // this half's word of the tile's first column\n"
         "    asm volatile(\"ld.relaxed.gpu.global.b64 %0, [%1];\" : \"=l\"(fz_last) : \"l\"(" + rec0 + ") : \"memory\");\n";
  } else {
    s += "  const fz_idx tile = blockIdx.x / " + str(p.members) + ";\n";
    s += "  const fz_idx rbase = (fz_idx)member * " + str(p.chunk) + ";\n";
  }
  s += "  const fz_idx kbase = (tile * " + str(p.tx) + " + tx) * " + V + ";\n";
  // With whole tiles every block's columns exist: no guard on the stores.
  s += p.kc % p.width == 0 ? std::string("  const bool active = true;  // whole tiles\n")
                           : "  const bool active = kbase < " + str(p.kc) + ";\n";
  s += "  const fz_idx kb = active ? kbase : 0;  // compute on a valid column, store nothing\n";
  s += keptIndexDecls(p.domain, p.kept, p.last, "  ");
  s += "  const unsigned long long fz_keep = fz_policy_keep(), fz_drop = fz_policy_drop();\n";
  s += "  float fz_rm[" + V + "], fz_rs[" + V + "];  // running max, sum\n  #pragma unroll\n"
       "  for (int l = 0; l < " + V + "; ++l) fz_rm[l] = -__int_as_float(0x7f800000), fz_rs[l] = 0.f;\n";
  if (p.regSlots > 0)
    s += "  uint4 fz_reg0[" + str(p.regSlots) + "];  // this thread's first rows\n";
  s += "  // pass 1: HBM -> registers, shared memory, L2 (evict_last); running (max, sum)\n";
  s += p.loop(Tier::Regs, true, 0, p.regSlots, fillCaches, "", fillLanes, "", fillPre, fillPost,
              fillSkipped);
  s += p.loop(Tier::Shared, true, p.regSlots, l2Begin, fillCaches, "", fillLanes, "", fillPre,
              fillPost, fillSkipped);
  s += p.loop(Tier::L2, true, l2Begin, p.slots, fillCaches, "", fillLanes, "", fillPre, fillPost,
              fillSkipped);
  // The output pass starts with the L2 rows: their first batch is loaded now,
  // so its latency passes while the cluster meets (0.7 us of 117).
  const bool pre = p.slots - l2Begin >= kBatch;
  if (pre)
    s += p.prefetch(l2Begin, p.used);
  if (pairs)
    s += "  if (threadIdx.x == 0) fz_epoch_s = (unsigned)(fz_last >> 32) + 1u;\n";
  // The lanes of a warp that share tx hold other rows: shuffles, then warps.
  s += "  #pragma unroll\n  for (int l = 0; l < " + V + "; ++l) {\n";
  s += "    float m = fz_rm[l], sum = fz_rs[l];\n";
  s += "    for (int o = " + str(p.tx) + "; o < 32; o <<= 1)\n";
  s += "      fz_online_merge(m, sum, __shfl_xor_sync(0xffffffffu, m, o), "
       "__shfl_xor_sync(0xffffffffu, sum, o));\n";
  s += "    if (threadIdx.x % 32 < " + str(p.tx) + ") fz_wred[threadIdx.x / 32][tx * " + V +
       " + l] = make_float2(m, sum);\n  }\n  __syncthreads();\n";
  // Warps, then the cluster's members, as trees: four lanes per column each
  // merge every fourth partial, then each other's by shuffles (depth 3, not
  // 7, on the path every block of the cluster waits on). Pairs take one
  // thread a column instead (their tiles are twice as wide), the cluster's
  // partials through plain loads (fz_peer).
  const bool one = mergeLanes == 1;
  const std::string L = str(mergeLanes), lanesAll = str(mergeLanes * p.width),
                    ninf = "-__int_as_float(0x7f800000)";
  // Lane j of a column starts at partial j and steps by L; one lane a
  // column starts at 0 and needs no shuffles.
  const std::string j0 = one ? "0" : "j", next = one ? "1" : "j + " + L;
  const std::string quad = one ? ""
                               : "    for (int o = 1; o < " + L + "; o <<= 1)\n"
                                 "      fz_online_merge(a.x, a.y, __shfl_xor_sync(0xffffffffu, a.x, o), "
                                 "__shfl_xor_sync(0xffffffffu, a.y, o));\n";
  const std::string lane = "  if (threadIdx.x < " + lanesAll + ") {\n" +
                           (one ? "    const int c = threadIdx.x;\n"
                                : "    const int c = threadIdx.x / " + L + ", j = threadIdx.x % " + L + ";\n");
  s += lane + "    float2 a = fz_wred[" + j0 + "][c];\n    #pragma unroll\n    for (int w = " + next +
       "; w < " + str(kThreads / 32) + "; " + (one ? "++w" : "w += " + L) +
       ") fz_online_merge(a.x, a.y, fz_wred[w][c].x, fz_wred[w][c].y);\n";
  s += quad + (one ? "    " : "    if (j == 0) ") + "fz_part[c] = a;\n  }\n";
  s += "  fz_cluster_sync();  // every member's partials are published\n";
  if (pairs)
    s += "  const unsigned fz_epoch = fz_epoch_s;\n";
  const std::string peer = pairs ? "*fz_peer(&fz_part[c], " : "fz_dsmem_ld2(&fz_part[c], ";
  s += lane + "    float2 a = " +
       (one ? peer + "0);\n"
            : "j < " + str(p.members) + " ? " + peer + "j) : make_float2(" + ninf + ", 0.f);\n");
  s += "    #pragma unroll\n    for (int q = " + next + "; q < " + str(p.members) + "; " +
       (one ? "++q" : "q += " + L) + ") {\n";
  s += "      const float2 b = " + peer + "q);\n";
  s += "      fz_online_merge(a.x, a.y, b.x, b.y);\n    }\n" + quad;
  // Pairs: member 0 of each cluster publishes its half's statistics, and
  // every block keeps its own for the merge below.
  const std::string nanFix =
      "    if (a.y != a.y && a.x != __int_as_float(0x7f800000)) a.x = a.y;  // a NaN input: max NaN\n"
      "    // (max, sum, max * log2e, 1 / sum), once per column\n";
  const std::string rec = "reinterpret_cast<unsigned long long *>(fz_scratch) + (tile * " +
                          str(p.parts * p.width) + " + c) * 2";
  if (pairs)  // one thread a column
    s += "    if (member == 0) fz_publish(" + rec + " + fz_half * " + str(2 * p.width) +
         ", a, fz_epoch);\n"
         "    fz_stat[c] = make_float4(a.x, a.y, 0.f, 0.f);  // this half's\n  }\n";
  else
    s += nanFix +
         "    if (j == 0) fz_stat[c] = make_float4(a.x, a.y, a.x * 1.4426950408889634f, 1.f / a.y);\n  }\n";
  // Pairs arrive relaxed: every value read from a peer has been used (the
  // merged statistics are stored above), so the reads are done without the
  // release's GPU-wide fence, which waits for the published words too (about
  // 1 us of 113). PTX does not order a relaxed arrive after
  // earlier loads; this rests on the data dependence, which the SASS keeps
  // (ptxas 13.0: the eight peer loads feed the fz_stat store before
  // UCGABAR_ARV). Recheck it with a new toolkit.
  s += std::string("  asm volatile(\"barrier.cluster.arrive.") + (pairs ? "relaxed" : "release") +
       ".aligned;\" ::: \"memory\");  // done reading peers\n";
  s += "  __syncthreads();\n";
  // Then the other half's, awaited after the arrive (awaited before it, the
  // same kernel runs 6 us longer in bench/micro/column_softmax.cu), merged
  // in the same order in both halves (fma contraction would round a merge
  // the other way apart), so both halves of a column divide by the same bits.
  if (pairs)
    s += "  if (threadIdx.x < " + W + ") {\n    const int c = threadIdx.x;\n"
         "    const float4 own = fz_stat[c];\n" +
         "    const float2 b = fz_await(" + rec + " + (1 - fz_half) * " + str(2 * p.width) + ", fz_epoch);\n" +
         "    float2 a = fz_half == 0 ? make_float2(own.x, own.y) : b;\n"
         "    const float2 hi = fz_half == 0 ? b : make_float2(own.x, own.y);\n"
         "    fz_online_merge(a.x, a.y, hi.x, hi.y);\n" + nanFix +
         "    fz_stat[c] = make_float4(a.x, a.y, a.x * 1.4426950408889634f, 1.f / a.y);\n  }\n"
         "  __syncthreads();\n";
  s += "  float fz_M[" + V + "], fz_S[" + V + "], fz_rcp[" + V + "], fz_ML[" + V + "];\n  #pragma unroll\n";
  s += "  for (int l = 0; l < " + V + "; ++l) {\n    const float4 st = fz_stat[tx * " + V +
       " + l];\n    fz_M[l] = st.x;\n    fz_S[l] = st.y;\n    fz_ML[l] = st.z;\n    fz_rcp[l] = st.w;\n  }\n";
  s += "  // outputs: the L2 rows first (the longest there), then shared memory, registers\n";
  const std::string &decls = out.decls, &post = out.post;
  if (pre)
    s += p.loop(Tier::Prefetched, false, l2Begin, l2Begin + kBatch, p.used, decls, out.lanes, post);
  s += p.loop(Tier::L2, false, l2Begin + (pre ? kBatch : 0), p.slots, p.used, decls, out.lanes, post);
  s += p.loop(Tier::Shared, false, p.regSlots, l2Begin, p.used, decls, out.lanes, post);
  s += p.loop(Tier::Regs, false, 0, p.regSlots, p.used, decls, out.lanes, post);
  if (!out.perColumn.empty())
    s += std::string("  if (active && member == 0 && ") + (pairs ? "fz_half == 0 && " : "") +
         "ty == 0) {\n" + out.perColumn + "  }\n";
  s += "  asm volatile(\"barrier.cluster.wait.acquire.aligned;\" ::: \"memory\");  // peers are done with fz_part\n";

  spec.text.body = s;
  spec.grid = static_cast<unsigned>(tiles * p.parts * p.members);
  spec.block = kThreads;
  spec.sharedBytes = static_cast<unsigned>(p.smemSlots * p.ty * p.tx * 16);  // 16-byte vectors
  if (pairs) {
    spec.scratchBytes = static_cast<unsigned>(tiles * p.parts * p.width * 16);
    spec.scratchZeroOnce = spec.scratchBytes;
    spec.spreadClusters = true;
  }
  spec.schedule = str(p.rr) + " reduced x " + str(p.kc) + " kept; " +
                  (pairs ? str(tiles) + " tiles, each " + str(p.parts) + " clusters (" +
                               str(p.rr / p.parts) + " rows each) that exchange (max, sum) through global memory: " +
                               str(tiles * p.parts)
                         : str(tiles)) +
                  " clusters of " + str(p.members) + " blocks, each " + str(p.chunk) + " rows x " +
                  W + " columns, read once: max and sum in one pass (online); rows per thread " +
                  str(p.regSlots) + " in registers, " + str(p.smemSlots) + " in shared memory, " +
                  str(p.slots - l2Begin) + " in L2";
  return spec;
}

} // namespace fusec::codegen::detail
