//===- CooperativeColumnKernel.cpp - column reductions that read once -----===//
//
// softmax over dim 0 needs two statistics per column (max, then the sum of
// exponentials) before any output, and a column is 16 KB or more: one block
// cannot hold it, and re-reading it per phase triples the HBM traffic. Here a
// team of C blocks shares a tile of W columns: each block loads its chunk of
// the reduced rows into shared memory once, reduces it, publishes a partial
// per column in global memory, and waits at a team barrier (a counter in
// global memory; the launch is cooperative, so every block is resident). The
// partials are combined, the next phase runs on the shared-memory copy, and
// the outputs are written from it. Partials are double-buffered by barrier
// parity: no member can be two barriers ahead of another.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/ElementEmitter.h"
#include "compiler/codegen/KernelSpec.h"
#include "compiler/codegen/ReductionPhases.h"
#include "compiler/codegen/ScalarOps.h"
#include "compiler/cost/CostModel.h"
#include "compiler/shape/ShapeRules.h"

#include <algorithm>
#include <map>
#include <set>

using namespace mlir;

namespace fusec::codegen::detail {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

/// 256 threads measured best (512: 153 us, 1024: 308 us on softmax over dim 0).
constexpr int64_t kThreads = 256;
/// Two buffers (the tile being reduced, the next one arriving) share this.
constexpr int64_t kSmemBudget = 160 * 1024;


struct Cached {
  std::string name, storage, ptr, offset;
  int64_t elementBytes = 0;
};

struct CoopPlan {
  FusionOp fusion;
  std::vector<int64_t> domain, reduced, kept;
  int64_t rr = 1, kc = 1, vec = 1, tx = 1, ty = 1, width = 1, chunk = 1, members = 1,
          teams = 1, tiles = 1, maxPerPhase = 1;
  int last = 0;
  bool cluster = false;  ///< Hopper: a thread block cluster is the team (see file header)
  std::vector<Cached> cache;
  std::map<std::string, std::string> cacheByKey;
  std::map<Operation *, std::string> reductionVars;
  int counter = 0, barriers = 0;
  /// Row-wide loads of cached tiles the current row loop needs (see emitter()).
  std::map<std::string, std::string> rowLoads;
  std::string rowPre;
  /// Reciprocals of reduction results (ElementEmitter::reciprocal), declared
  /// before the first pass that uses them.
  std::set<std::string> reciprocals;
  std::string pendingReciprocals;
  /// A per-element value the last phase computes (softmax's exp(x - max)) that
  /// the outputs need again: the last phase writes it over a cached input's
  /// slot and the output pass reads it back instead of recomputing it, one
  /// MUFU op per element fewer. Legal when the outputs read
  /// that input no other way; tried per cached input (see the generator).
  struct Stash {
    Value value;
    int cache = -1;       ///< the slot it overwrites; -1: none
    std::string storage;  ///< its element type there
    bool written = false, used = false;
  } stash;
  bool inOutputs = false;
  std::set<std::string> outputLoads;  ///< caches the output pass reads

  std::string takeRowPre() {
    rowLoads.clear();
    return std::move(rowPre);
  }

  ElementEmitter emitter() {
    ElementEmitter e(fusion, columnIndexNames(domain.size(), reduced, kept), "          ");
    e.load = columnLoads(reduced, last, vec, [this](BlockArgument arg, const std::string &ptr,
                                                   const std::string &off) {
      std::string &name = cacheByKey[ptr + "@" + off];
      if (name.empty()) {
        name = "cache" + str(cache.size());
        cache.push_back({name, storageType(dtypeOf(arg)), ptr, off, dtypeBytes(dtypeOf(arg))});
      }
      if (inOutputs)
        outputLoads.insert(name);
      // One 16-byte shared-memory load per row, not one per element.
      std::string &row = rowLoads[name];
      if (row.empty()) {
        row = "cv" + name.substr(5);
        rowPre += "      " + std::string(computeType(dtypeOf(arg))) + " " + row + "[" + str(vec) +
                  "];\n      fz_load_shared<" + storageType(dtypeOf(arg)) + ", " + str(vec) +
                  ">(&" + name + "[buf][rr][tx * " + str(vec) + "], " + row + ");\n";
      }
      return row + "[l]";
    });
    e.reduced = [this](Operation *op) { return reductionVars.at(op) + "[l]"; };
    e.known = [this](ElementEmitter &, Value v, const Index &idx) -> std::optional<std::string> {
      if (!stash.written || v != stash.value || !ElementEmitter::isIdentity(idx))
        return std::nullopt;
      stash.used = true;
      std::string &row = rowLoads["stash"];
      if (row.empty()) {
        row = "sv";
        rowPre += "      float sv[" + str(vec) + "];\n      fz_load_shared<" + stash.storage + ", " +
                  str(vec) + ">(" + stashSlot() + ", sv);\n";
      }
      return row + "[l]";
    };
    e.reciprocal = [this](Value d) -> std::optional<std::string> {
      Operation *op = throughBroadcasts(d);
      auto it = op ? reductionVars.find(op) : reductionVars.end();
      if (it == reductionVars.end() || computeType(dtypeOf(op->getResult(0))) != std::string("float"))
        return std::nullopt;
      std::string r = "rcp" + it->second.substr(3);  // red3 -> rcp3
      if (reciprocals.insert(r).second)
        pendingReciprocals += "    float " + r + "[" + str(vec) + "];\n    #pragma unroll\n    for (int l = 0; l < " +
                              str(vec) + "; ++l) " + r + "[l] = 1.f / " + it->second + "[l];\n";
      return r + "[l]";
    };
    return e;
  }

  std::string stashSlot() const {
    return "reinterpret_cast<" + stash.storage + " *>(&cache" + str(stash.cache) + "[buf][rr][tx * " +
           str(vec) + "])";
  }
  std::string takeReciprocals() { return std::move(pendingReciprocals); }

  std::string rowIndices(const std::string &in) const {
    return reducedIndexDecls(domain, reduced, "rrow", in);
  }
  std::string keptIndices(const std::string &in) const {
    return keptIndexDecls(domain, kept, last, in);
  }

  /// A loop over this block's rows of the chunk, lanes inside.
  std::string rowLoop(const std::string &pre, const std::string &lanes,
                      const std::string &post) const {
    std::string s = "    for (fz_idx rr = ty; rr < rows; rr += " + str(ty) + ") {\n";
    s += "      const fz_idx rrow = rbase + rr;\n" + rowIndices("      ") + pre;
    s += "      #pragma unroll\n      for (int l = 0; l < " + str(vec) + "; ++l) {\n";
    s += "        const fz_idx k" + str(last) + " = kl + l;\n" + lanes + "      }\n" + post;
    return s + "    }\n";
  }

  /// Where member `m` publishes partial `j` of the current phase: its own
  /// shared memory in a cluster (one slot per phase), else global scratch
  /// (double-buffered by barrier parity).
  std::string slot(const std::string &parity, const std::string &m, size_t j,
                   const std::string &col) const {
    if (cluster)
      return "fz_cpart[it & 1][" + str(barriers) + "][" + str(j) + "][" + col + "]";
    return "fz_part[((" + parity + " * " + str(teams) + " + team) * " + str(members) + " + " + m +
           ") * " + str(maxPerPhase * width) + " + " + str(j * width) + " + " + col + "]";
  }
  std::string readSlot(const std::string &parity, const std::string &m, size_t j,
                       const std::string &col) const {
    if (cluster)
      return "fz_dsmem_ld(&" + slot(parity, m, j, col) + ", " + m + ")";
    return "__ldcg(&" + slot(parity, m, j, col) + ")";
  }

  std::string phase(const std::vector<Operation *> &reds, bool lastPhase) {
    ElementEmitter e = emitter();
    std::string head, lanes, tail, post;
    std::vector<std::string> accs;
    std::string V = str(vec), unroll = "    #pragma unroll\n";
    for (Operation *op : reds) {
      ReductionRule rule = reductionRule(op);
      std::string acc = "acc" + str(counter++);
      accs.push_back(acc);
      head += "    " + rule.accType + " " + acc + "[" + V + "];\n" + unroll + "    for (int l = 0; l < " +
              V + "; ++l) " + acc + "[l] = " + rule.identity + ";\n";
      std::string v = e.emit(op->getOperand(0), ElementEmitter::identity(domain.size()));
      lanes += e.takeCode() + "          " + acc + "[l] = " + rule.functor + "(" + acc + "[l], (" +
               rule.accType + ")" + v + ");\n";
      if (lastPhase && op->getOperand(0) == stash.value && stash.cache >= 0 &&
          stash.cache < (int)cache.size() && !stash.written) {
        head += "    float stash[" + V + "];  // kept for the outputs\n";
        lanes += "          stash[l] = " + v + ";\n";
        post += "      fz_store<" + stash.storage + ", " + V + ">(" + stashSlot() + ", 0, stash);\n";
        stash.written = true;
      }
    }
    std::string s = head + takeReciprocals() + rowLoop(takeRowPre(), lanes, post);
    // Block partials: the lanes of a warp that share tx hold other rows and
    // fold with shuffles; warp 0 then folds the warps' results.
    std::string parity = "par" + str(barriers);
    if (!cluster)
      s += "    const unsigned " + parity + " = epoch & 1u;\n";
    for (size_t j = 0; j < reds.size(); ++j) {
      ReductionRule rule = reductionRule(reds[j]);
      const std::string &acc = accs[j];
      s += unroll + "    for (int l = 0; l < " + V + "; ++l) {\n      " + rule.accType + " a = " +
           acc + "[l];\n      for (int o = " + str(tx) + "; o < 32; o <<= 1)\n        a = " +
           rule.functor + "(a, __shfl_xor_sync(0xffffffffu, a, o));\n      if (threadIdx.x % 32 < " +
           str(tx) + ") fz_red[" + str(j) + "][threadIdx.x / 32][tx * " + V + " + l] = (double)a;\n    }\n";
    }
    s += "    __syncthreads();\n    if (threadIdx.x < " + str(tx) + ") {\n";
    for (size_t j = 0; j < reds.size(); ++j) {
      ReductionRule rule = reductionRule(reds[j]);
      s += unroll + "      for (int l = 0; l < " + V + "; ++l) {\n        double a = fz_red[" + str(j) +
           "][0][tx * " + V + " + l];\n        for (int w = 1; w < " + str(kThreads / 32) +
           "; ++w) a = " + rule.functor + "(a, fz_red[" + str(j) + "][w][tx * " + V + " + l]);\n" +
           "        " + slot(parity, "member", j, "tx * " + V + " + l") + " = a;\n      }\n";
    }
    s += "    }\n";
    s += cluster ? "    fz_cluster_sync();  // every block's partials are published\n"
                 : "    fz_team_barrier(fz_count + team, " + str(members) + "u * ++epoch);\n";
    // Combine the members' partials: one thread per column reads them (from
    // peers' shared memory or global scratch), the block shares the result.
    // Every thread reading every partial would be the bottleneck.
    s += "    for (int c = threadIdx.x; c < " + str(width) + "; c += " + str(kThreads) + ") {\n";
    for (size_t j = 0; j < reds.size(); ++j) {
      ReductionRule rule = reductionRule(reds[j]);
      s += "      {\n      double a = " + readSlot(parity, "0", j, "c") + ";\n";
      s += "      for (int m = 1; m < " + str(members) + "; ++m)\n        a = " + rule.functor +
           "(a, " + readSlot(parity, "m", j, "c") + ");\n";
      s += "      fz_comb[" + str(j) + "][c] = a;\n      }\n";
    }
    s += "    }\n    __syncthreads();\n";
    for (size_t j = 0; j < reds.size(); ++j) {
      Operation *op = reds[j];
      ReductionRule rule = reductionRule(op);
      std::string name = "red" + str(counter++);
      std::string type = computeType(dtypeOf(op->getResult(0)));
      s += "    " + type + " " + name + "[" + V + "];\n" + unroll + "    for (int l = 0; l < " + V +
           "; ++l)\n      " + name + "[l] = (" + type + ")(fz_comb[" + str(j) + "][tx * " + V +
           " + l]" + (rule.isMean ? " / " + str(rr) + ".0" : "") + ");\n";
      reductionVars[op] = name;
    }
    ++barriers;
    return s;
  }

  std::string outputs() {
    inOutputs = true;
    ColumnOutputCode c = columnOutputs(
        fusion, [this] { return emitter(); }, domain, reduced, last, vec);
    inOutputs = false;
    std::string pre = c.decls + takeRowPre();
    std::string s = takeReciprocals() + (c.lanes.empty() ? "" : rowLoop(pre, c.lanes, c.post));
    if (!c.perColumn.empty())
      s += "    if (active && member == 0 && ty == 0) {\n" + c.perColumn + "    }\n";
    return s;
  }

};

/// The first operand of a last-phase reduction worth keeping for the outputs:
/// computed (not an input or a view of one), of the domain's shape, stored in
/// the cached tiles' element size. exp(a - max(a)) lies in (0, 1] and is kept
/// as f16 (11-bit significand) when the tiles hold 16-bit elements; anything
/// else in its own dtype, as the graph rounds it.
CoopPlan::Stash stashCandidate(const std::vector<Operation *> &reds,
                               const std::vector<int64_t> &domain, int64_t vec) {
  CoopPlan::Stash st;
  for (Operation *red : reds) {
    Value v = red->getOperand(0);
    Operation *def = v.getDefiningOp();
    if (!def || isView(def) || isa<ConstantOp, IotaOp>(def) || shapeOf(v) != llvm::ArrayRef<int64_t>(domain))
      continue;
    DType t = dtypeOf(v);
    if (std::string(computeType(t)) != "float")
      continue;
    int64_t slotBytes = 16 / vec;
    if (shiftedExpMax(v) && slotBytes == 2)  // in (0, 1]
      st.storage = storageType(DType::F16);
    else if (dtypeBytes(t) == slotBytes)
      st.storage = storageType(t);
    else
      continue;
    st.value = v;
    return st;
  }
  return st;
}

} // namespace

llvm::Expected<KernelSpec> generateCooperativeColumnReduction(FusionOp fusion,
                                                              const DeviceProfile &profile,
                                                              bool cluster) {
  CoopPlan p;
  p.fusion = fusion;
  ReductionDomain rd = takeColumnDomain(p, fusion);
  ColumnTile tile = columnTile(fusion, rd);
  p.vec = tile.vec;
  p.tx = tile.tx;
  p.ty = kThreads / p.tx;
  p.width = p.tx * p.vec;
  p.tiles = (p.kc + p.width - 1) / p.width;

  std::map<int, std::vector<Operation *>> byLevel = reductionPhases(fusion);
  for (auto &[l, reds] : byLevel)
    p.maxPerPhase = std::max<int64_t>(p.maxPerPhase, reds.size());

  // Generate the phases first: they decide which inputs are cached.
  auto generate = [&](CoopPlan &g, std::string &phases, std::string &outs) {
    phases.clear();
    for (auto it = byLevel.begin(); it != byLevel.end(); ++it)
      phases += "    // phase " + str(it->first) + "\n" +
                g.phase(it->second, std::next(it) == byLevel.end());
    outs = "    // outputs\n" + g.outputs();
  };
  std::string phases, outs;
  generate(p, phases, outs);
  if (p.cache.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "nothing to cache");
  // The chunk is copied 16 bytes per thread: a vector of every cached input
  // (all of one dtype) is 16 bytes, whatever the other inputs' dtypes.
  for (const Cached &c : p.cache)
    if (p.vec * c.elementBytes != 16 || c.storage != p.cache.front().storage)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "cached inputs are not 16-byte vectors of one dtype");
  int64_t rowBytes = 0;
  for (const Cached &c : p.cache)
    rowBytes += p.width * 16 / p.vec;  // storage bytes of one row of the tile
  p.cluster = cluster;
  int buffers = 2;
  if (cluster) {
    // A cluster of 8 blocks (the portable maximum) is the team and takes one
    // tile; the hardware schedules clusters as SMs free up, 3 blocks per SM.
    // Persistent double-buffered clusters (1 block per SM) are slower, by
    // about 1.5x on softmax over dim 0.
    p.members = 8;
    p.chunk = (p.rr + p.members - 1) / p.members;
    buffers = 1;
    if (p.chunk * rowBytes > kSmemBudget)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "chunk does not fit");
    p.teams = p.tiles;
  } else {
    // Smallest team whose chunk fits twice (double buffering) in shared memory.
    int64_t blocks = profile.smCount;  // one block per SM, all resident
    p.members = 1;
    while (p.members < blocks &&
           ((p.rr + p.members - 1) / p.members) * rowBytes * 2 > kSmemBudget)
      p.members *= 2;
    p.chunk = (p.rr + p.members - 1) / p.members;
    if (p.chunk * rowBytes * 2 > kSmemBudget)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "chunk does not fit");
    p.teams = std::max<int64_t>(1, std::min<int64_t>(blocks / p.members, p.tiles));
  }
  // The team geometry is baked into the phase code: regenerate with it known,
  // keeping a last-phase value for the outputs where that is legal.
  auto regenerate = [&](int stashCache, std::string &phases, std::string &outs) {
    CoopPlan q = p;
    q.cache.clear();
    q.cacheByKey.clear();
    q.reductionVars.clear();
    q.counter = q.barriers = 0;
    q.rowLoads.clear();
    q.rowPre.clear();
    q.reciprocals.clear();
    q.pendingReciprocals.clear();
    q.outputLoads.clear();
    q.stash = {};
    if (stashCache >= 0) {
      q.stash = stashCandidate(byLevel.rbegin()->second, q.domain, q.vec);
      q.stash.cache = q.stash.value ? stashCache : -1;
    }
    generate(q, phases, outs);
    return q;
  };
  std::optional<CoopPlan> kept;
  for (int c = 0; c < (int)p.cache.size() && !kept; ++c) {
    CoopPlan t = regenerate(c, phases, outs);
    if (t.stash.written && t.stash.used && !t.outputLoads.count("cache" + str(c)))
      kept = std::move(t);
  }
  CoopPlan q = kept ? std::move(*kept) : regenerate(-1, phases, outs);

  KernelSpec spec;
  spec.name = fusion->getAttrOfType<StringAttr>("name").str();
  spec.family = "column_reduction";
  std::string caches;
  int64_t off = 0;
  for (const Cached &c : q.cache) {
    std::string dims = "[" + str(q.chunk) + "][" + str(q.width) + "]";
    caches += "  " + c.storage + " (*" + c.name + ")" + dims + " = reinterpret_cast<" + c.storage +
              " (*)" + dims + ">(fz_dyn + " + str(off) + ");\n";
    off += buffers * q.chunk * q.width * 16 / q.vec;
  }
  // Copies of a tile's chunk into buffer `nb`, asynchronous; kept indices are
  // recomputed for that tile in their own scope.
  std::string copies;
  for (const Cached &c : q.cache)
    copies += "      fz_cp16(&" + c.name + "[nb][rr][tx * " + str(q.vec) + "], " + c.ptr + " + " +
              c.offset + ");\n";
  auto prefetch = [&](const std::string &tileExpr, const std::string &bufExpr) {
    std::string s = "    {\n    const fz_idx ntile = " + tileExpr + ";\n    const int nb = " + bufExpr +
                    ";\n    if (ntile < " + str(q.tiles) + ") {\n";
    s += "    const fz_idx kbase = (ntile * " + str(q.tx) + " + tx) * " + str(q.vec) + ";\n";
    s += "    const fz_idx kb = kbase < " + str(q.kc) + " ? kbase : 0;\n" + q.keptIndices("    ");
    s += q.rowLoop(copies, "", "") + "    }\n    fz_cp_commit();\n    }\n";
    return s;
  };
  std::string tileHead = "    const fz_idx kbase = (tile * " + str(q.tx) + " + tx) * " + str(q.vec) +
                         ";\n    const bool active = kbase < " + str(q.kc) +
                         ";\n    const fz_idx kb = active ? kbase : 0;  // compute on a valid "
                         "column, store nothing\n" + q.keptIndices("    ");
  std::string common = "  typedef " + std::string(indexType(fusion)) + " fz_idx;\n" +
                       "  extern __shared__ __align__(16) unsigned char fz_dyn[];\n" + caches +
                       "  __shared__ double fz_red[" + str(q.maxPerPhase) + "][" +
                       str(kThreads / 32) + "][" + str(q.width) + "];\n" +
                       "  __shared__ double fz_comb[" + str(q.maxPerPhase) + "][" + str(q.width) +
                       "];\n" +
                       "  const int tx = threadIdx.x % " + str(q.tx) + ", ty = threadIdx.x / " +
                       str(q.tx) + ";\n";
  std::string src;
  spec.text.params = parameters(fusion);
  spec.text.staticShared = true;
  int64_t counterBytes = 256 * ((q.teams * 4 + 255) / 256);
  if (cluster) {
    spec.text.qualifiers = "__cluster_dims__(" + str(q.members) + ", 1, 1) __launch_bounds__(" +
                           str(kThreads) + ")";
    src = common;
    // Partials by tile parity: a peer may still read this tile's while the
    // block publishes the next one's.
    src += "  __shared__ double fz_cpart[2][" + str(std::max(1, q.barriers)) + "][" +
           str(q.maxPerPhase) + "][" + str(q.width) + "];\n";
    src += "  const unsigned member = fz_cluster_rank();\n";
    src += "  const int team = blockIdx.x / " + str(q.members) + ";\n";
    src += "  const int fz_teams = gridDim.x / " + str(q.members) + ";  // one tile per cluster\n";
  } else {
    spec.text.helpers = "__device__ __forceinline__ void fz_team_barrier(unsigned *count, unsigned target) {\n"
          "  __syncthreads();\n  if (threadIdx.x == 0) {\n    __threadfence();\n"
          "    atomicAdd(count, 1u);\n    while (atomicAdd(count, 0u) < target) __nanosleep(64);\n"
          "    __threadfence();\n  }\n  __syncthreads();\n}\n\n";
    spec.text.qualifiers = "__launch_bounds__(" + str(kThreads) + ", 1)";
    spec.text.params.push_back(kScratchParam);
    src = common;
    src += "  unsigned *fz_count = reinterpret_cast<unsigned *>(fz_scratch);\n";
    src += "  double *fz_part = reinterpret_cast<double *>(fz_scratch + " + str(counterBytes) + ");\n";
    src += "  const int team = blockIdx.x / " + str(q.members) + ", member = blockIdx.x % " +
           str(q.members) + ";\n  unsigned epoch = 0;\n";
    src += "  const int fz_teams = " + str(q.teams) + ";\n";
  }
  src += "  const fz_idx rbase = (fz_idx)member * " + str(q.chunk) + ";\n";
  src += "  const fz_idx rows = min((fz_idx)" + str(q.chunk) + ", (fz_idx)(" + str(q.rr) +
         " - rbase));\n";
  if (buffers == 2)
    src += "  // the first tile's chunk starts arriving now\n" + prefetch("team", "0");
  src += "  int it = 0;\n";
  src += "  for (fz_idx tile = team; tile < " + str(q.tiles) + "; tile += fz_teams, ++it) {\n";
  src += "    __syncthreads();  // nobody still reads the buffer the next chunk goes to\n";
  if (buffers == 2) {
    src += "    const int buf = it & 1;\n" + prefetch("tile + fz_teams", "buf ^ 1");
    src += "    fz_cp_wait<1>();  // this tile's chunk has arrived (read from HBM once)\n";
  } else {
    src += "    const int buf = 0;\n" + prefetch("tile", "0") + "    fz_cp_wait<0>();\n";
  }
  src += "    __syncthreads();\n" + tileHead + phases + outs + "  }\n";
  if (cluster)
    src += "  fz_cluster_sync();  // no block leaves while others may read its partials\n";
  spec.text.body = src;
  spec.grid = static_cast<unsigned>(q.teams * q.members);
  spec.block = kThreads;
  spec.sharedBytes = static_cast<unsigned>(off);
  if (!cluster) {
    spec.cooperative = true;
    spec.scratchZeroBytes = static_cast<unsigned>(counterBytes);
    spec.scratchBytes = static_cast<unsigned>(counterBytes + 2 * q.teams * q.members *
                                                                 q.maxPerPhase * q.width * 8);
  }
  spec.schedule = str(q.rr) + " reduced x " + str(q.kc) + " kept; " + str(q.teams) +
                  (cluster ? " clusters" : " teams") + " of " + str(q.members) +
                  " blocks, each holding " + str(q.chunk) + " rows x " + str(q.width) +
                  " columns in shared memory (read once" +
                  (buffers == 2 ? ", double-buffered" : "") + "); " +
                  str(q.tiles) + " tiles" +
                  (kept ? "; the last phase's " +
                              q.stash.value.getDefiningOp()->getName().stripDialect().str() +
                              " kept there (" + q.stash.storage + ") for the outputs"
                        : std::string());
  return spec;
}

} // namespace fusec::codegen::detail
