//===- RowPlan.cpp - phases, register caching and stores of a row kernel --===//
#include "compiler/codegen/RowPlan.h"

#include "compiler/codegen/LastBlock.h"
#include "compiler/codegen/ReductionPhases.h"
#include "compiler/codegen/ScalarOps.h"
#include "compiler/shape/ShapeRules.h"

#include <algorithm>

using namespace mlir;

namespace fusec::codegen::detail {

namespace {
std::string str(int64_t v) { return std::to_string(v); }
/// At most this many floats per thread are spent on caching row inputs.
constexpr int64_t kCacheBudget = 96;
} // namespace

RowPlan::RowPlan(FusionOp fusion, std::vector<int64_t> domain, std::vector<int64_t> reduced,
                 std::vector<int64_t> kept, int lane, int64_t vec, int64_t tpr, int64_t slots,
                 bool cached)
    : fusion(fusion), domain(std::move(domain)), reduced(std::move(reduced)),
      kept(std::move(kept)), lane(lane), vec(vec), tpr(tpr), slots(slots), cached(cached) {
  for (int64_t a : this->reduced)
    cols *= this->domain[a];
  for (int64_t a : this->kept)
    rows *= this->domain[a];
  // A streamed row is read from HBM once a phase: the online rule saves a
  // read of the whole row for each such sum.
  if (!cached)
    online = onlineSums(fusion);
}

int64_t RowPlan::counterBytes() const { return splits > 1 ? 256 * ((rows * 4 + 255) / 256) : 0; }

int64_t RowPlan::scratchBytes() const {
  return splits > 1 ? counterBytes() + rows * partials * splits * 8 : 0;
}

std::string RowPlan::sharedDeclarations() const {
  if (tpr <= 32)
    return "";
  return "  __shared__ float fz_smem_f[32];\n  __shared__ long long fz_smem_l[32];\n" +
         std::string(online.empty() ? "" : "  __shared__ float fz_smem_s[32];\n") +
         std::string(splits > 1 ? "  __shared__ bool fz_last;\n" : "");
}

std::string RowPlan::helpers() const {
  if (online.empty())
    return "";
  // (m, s): the largest value so far and the sum of exp(v - m) over the
  // values so far, taken a vector at a time. Values of -inf add nothing
  // while m is -inf (exp(-inf - -inf) would be NaN); a row whose max is not
  // finite is NaN in the end anyway, as exp(x - max) makes it.
  return R"CUDA(template <int N>
__device__ __forceinline__ void fz_online_add(float &m, float &s, const float (&v)[N]) {
  // The max first and one rescale a vector: the exponentials of the vector
  // are then independent of each other, as in a pass of their own.
  float top = v[0];
#pragma unroll
  for (int l = 1; l < N; ++l) top = fmaxf(top, v[l]);
  if (top > m) {
    s *= expf(m - top);
    m = top;
  }
  if (m != -__int_as_float(0x7f800000)) {
#pragma unroll
    for (int l = 0; l < N; ++l) s += expf(v[l] - m);
  }
}
__device__ __forceinline__ void fz_online_merge(float &m, float &s, float m2, float s2) {
  const float inf = __int_as_float(0x7f800000), mm = fz_max(m, m2);
  const float a = m == -inf ? 0.f : s * expf(m - mm), b = m2 == -inf ? 0.f : s2 * expf(m2 - mm);
  m = mm;
  s = a + b;
}
template <int W>
__device__ __forceinline__ void fz_online_warp(float &m, float &s) {
#pragma unroll
  for (int o = W / 2; o > 0; o >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
    fz_online_merge(m, s, m2, s2);
  }
}
template <int NT>
__device__ __forceinline__ void fz_online_block(float &m, float &s, float *sm, float *ss) {
  fz_online_warp<32>(m, s);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // the scratch may still be read by the previous reduction
  if (lane == 0) {
    sm[warp] = m;
    ss[warp] = s;
  }
  __syncthreads();
  m = sm[lane < NT / 32 ? lane : 0];
  s = lane < NT / 32 ? ss[lane] : 0.f;
  fz_online_warp<(NT / 32 < 32 ? NT / 32 : 32)>(m, s);
  m = __shfl_sync(0xffffffffu, m, 0);
  s = __shfl_sync(0xffffffffu, s, 0);
}
)CUDA";
}

std::string RowPlan::keptIndices(const std::string &rowVar, const std::string &indent) const {
  std::string s, rest = rowVar;
  for (int i = (int)kept.size() - 1; i >= 0; --i) {
    int64_t d = kept[i];
    s += indent + "const fz_idx k" + str(d) + " = " +
         (i == 0 ? rest : rest + " % " + str(domain[d])) + ";\n";
    rest = "(" + rest + " / " + str(domain[d]) + ")";
  }
  return s;
}

std::string RowPlan::reducedIndices(const std::string &indent) const {
  // cbase linearizes the reduced dims in order; the lane dim is the last one.
  std::string s, rest = "cbase";
  for (int i = (int)reduced.size() - 1; i >= 0; --i) {
    int64_t d = reduced[i];
    std::string name = d == lane ? "cb" : "c" + str(d);
    s += indent + "const fz_idx " + name + " = " +
         (i == 0 ? rest : rest + " % " + str(domain[d])) + ";\n";
    rest = "(" + rest + " / " + str(domain[d]) + ")";
  }
  return s;
}

std::string RowPlan::slotLoop(const std::string &pre, const std::string &lanes,
                              const std::string &post, const std::string &in, bool deep) const {
  // A streamed split keeps 4 slots' loads in flight: its blocks are few. So
  // does a pass of online sums, whose exponentials keep the loads of one
  // slot from covering the memory's latency (bench/NOTES.md, "online").
  std::string s = in + (cached                ? "#pragma unroll\n"
                        : splits > 1 || deep ? "#pragma unroll 4\n"
                                             : "#pragma unroll 1\n");
  s += in + "for (int s = 0; s < " + str(slots) + "; ++s) {\n";
  // In fz_idx: a row of 2^31 or more elements must not wrap in 32 bits.
  std::string slot = splits > 1 ? "((fz_idx)blockIdx.y * " + str(slots) + " + s)" : "(fz_idx)s";
  s += in + "  const fz_idx cbase = (" + slot + " * " + str(tpr) + " + tl) * " + str(vec) + ";\n";
  bool ragged = splits * slots * tpr * vec != cols;
  std::string in2 = in + "  ";
  if (ragged) {
    s += in2 + "if (cbase < " + str(cols) + ") {\n";
    in2 += "  ";
  }
  s += reducedIndices(in2) + pre;
  if (!lanes.empty()) {
    s += in2 + "#pragma unroll\n" + in2 + "for (int l = 0; l < " + str(vec) + "; ++l) {\n";
    s += in2 + "  const fz_idx c" + str(lane) + " = cb + l;\n" + lanes + in2 + "}\n";
  }
  s += post;
  if (ragged)
    s += in + "  }\n";
  return s + in + "}\n";
}

ElementEmitter RowPlan::makeEmitter(std::string *slotPre) {
  std::vector<std::string> vars(domain.size());
  for (int64_t d : kept)
    vars[d] = "k" + str(d);
  for (int64_t d : reduced)
    vars[d] = "c" + str(d);
  ElementEmitter e(fusion, vars, "          ");
  auto slotLoads = std::make_shared<std::map<std::string, std::string>>();
  e.load = [this, slotPre, slotLoads](ElementEmitter &em, BlockArgument arg,
                                      const Index &idx) -> std::string {
    ArrayRef<int64_t> shape = shapeOf(arg);
    std::string ptr = ElementEmitter::argName(arg.getArgNumber());
    std::optional<int64_t> c = em.coefficient(shape, idx, lane);
    bool useVector = vec > 1 ? em.vectorizable(shape, idx, lane, vec) : (c && *c != 0);
    if (!useVector)
      return "fz_load1(" + ptr + ", " + em.offset(shape, idx) + ")";
    std::string off = em.offsetAt(shape, idx, lane, "cb");
    std::string storage = storageType(dtypeOf(arg));
    std::string type = computeType(dtypeOf(arg));
    std::string key = ptr + "@" + off;
    if (cached && (cacheByKey.count(key) ||
                   (int64_t)(cache.size() + 1) * slots * vec <= kCacheBudget)) {
      std::string &name = cacheByKey[key];
      if (name.empty()) {
        name = "cache" + str(cache.size());
        cache.push_back({name, type, storage, ptr, off});
      }
      return name + "[s][l]";
    }
    std::string &name = (*slotLoads)[key];
    if (name.empty()) {
      name = em.fresh("sv");
      *slotPre += "          " + type + " " + name + "[" + str(vec) + "];\n          fz_load<" +
                  storage + ", " + str(vec) + ">(" + ptr + ", " + off + ", " + name + ");\n";
    }
    return name + "[l]";
  };
  e.reduced = [this](Operation *op) { return reductionVars.at(op); };
  return e;
}

std::string RowPlan::phase(const std::vector<Operation *> &reds) {
  std::string head, lanes, pre, post, arrays;
  ElementEmitter e = makeEmitter(&pre);
  std::vector<std::string> accs;
  std::map<Operation *, std::string> runningMax;  // an online sum's own max
  for (Operation *op : reds) {
    ReductionRule rule = reductionRule(op);
    std::string acc = "acc" + str(counter++);
    accs.push_back(acc);
    head += "    " + rule.accType + " " + acc + " = " + rule.identity + ";\n";
    auto sum = online.find(op);
    if (sum != online.end()) {
      std::string &m = runningMax[op];
      m = "acc" + str(counter++);
      head += "    float " + m + " = " + reductionRule(sum->second).identity + ";\n";
      std::string v = e.emit(sum->second->getOperand(0), ElementEmitter::identity(domain.size()));
      const std::string values = "ov" + str(counter++);
      arrays += "          float " + values + "[" + str(vec) + "];\n";
      lanes += e.takeCode() + "            " + values + "[l] = (float)" + v + ";\n";
      post += "          fz_online_add(" + m + ", " + acc + ", " + values + ");\n";
      continue;
    }
    std::string v = e.emit(op->getOperand(0), ElementEmitter::identity(domain.size()));
    lanes += e.takeCode();
    lanes += "            " + acc + " = " + rule.functor + "(" + acc + ", (" + rule.accType +
             ")" + v + ");\n";
  }
  std::string s = head + slotLoop(arrays + pre, lanes, post, "    ", !runningMax.empty());
  // A streamed row has a block of its own (planRows gives it 1024 threads):
  // an online sum's pairs combine across the block.
  for (size_t j = 0; j < reds.size(); ++j)
    s += runningMax.count(reds[j]) ? "    fz_online_block<" + str(tpr) + ">(" +
                                         runningMax[reds[j]] + ", " + accs[j] +
                                         ", fz_smem_f, fz_smem_s);\n"
                                   : acrossThreads(reds[j], accs[j], "    ");
  if (splits > 1)
    s += combineSplits(reds, accs);
  for (size_t j = 0; j < reds.size(); ++j) {
    Operation *op = reds[j];
    ReductionRule rule = reductionRule(op);
    const std::string &acc = accs[j];
    std::string name = "red" + str(counter++);
    std::string type = computeType(dtypeOf(op->getResult(0)));
    std::string value = rule.isMean ? acc + " / " + str(cols) + ".f" : acc;
    if (runningMax.count(op)) {
      // The max of the same values, its phase's result: the sum relative
      // to it; NaN where it is not finite, as exp(x - max) gives then.
      const std::string &max = reductionVars.at(online.at(op));
      value = "(isfinite(" + max + ") ? " + acc + " * expf(" + runningMax[op] + " - " + max +
              ") : __int_as_float(0x7fffffff))";
    }
    s += "    const " + type + " " + name + " = (" + type + ")(" + value + ");\n";
    reductionVars[op] = name;
  }
  return s;
}

std::string RowPlan::acrossThreads(Operation *op, const std::string &acc,
                                   const std::string &in) const {
  ReductionRule rule = reductionRule(op);
  std::string smem = rule.accType == "float" ? "fz_smem_f" : "fz_smem_l";
  if (tpr > 32)
    return in + acc + " = fz_block_reduce<" + str(tpr) + ">(" + acc + ", " + rule.functor +
           ", " + smem + ");\n";
  if (tpr > 1)
    return in + acc + " = fz_warp_reduce<" + str(tpr) + ">(" + acc + ", " + rule.functor +
           ");\n";
  return "";
}

std::string RowPlan::combineSplits(const std::vector<Operation *> &reds,
                                   const std::vector<std::string> &accs) {
  partials = static_cast<int64_t>(reds.size());
  std::string n = str(splits), in = "      ";
  std::string s = "    {  // this block's partials; the row's last block combines them\n";
  s += in + "long long *const fz_part = reinterpret_cast<long long *>(fz_scratch + " +
       str(counterBytes()) + ") + (long long)row * " + str(partials * splits) + ";\n";
  s += in + "if (threadIdx.x == 0) {\n";
  for (size_t j = 0; j < reds.size(); ++j)
    s += in + "  reinterpret_cast<" + reductionRule(reds[j]).accType + " *>(fz_part + " +
         str(int64_t(j) * splits) + ")[blockIdx.y] = " + accs[j] + ";\n";
  s += in + "}\n";
  s += lastBlockHandshake(in, "reinterpret_cast<unsigned *>(fz_scratch) + row", n + "u",
                          "continue;");
  // Thread t folds splits t, t + tpr, ... and the block's tree the rest: a
  // fixed order, so the result does not depend on which block came last.
  for (size_t j = 0; j < reds.size(); ++j) {
    ReductionRule rule = reductionRule(reds[j]);
    s += in + accs[j] + " = " + rule.identity + ";\n";
    s += in + "for (int i = threadIdx.x; i < " + n + "; i += " + str(tpr) + ")\n";
    s += in + "  " + accs[j] + " = " + rule.functor + "(" + accs[j] + ", __ldcg(reinterpret_cast<const " +
         rule.accType + " *>(fz_part + " + str(int64_t(j) * splits) + ") + i));\n";
    s += acrossThreads(reds[j], accs[j], in);
  }
  return s + "    }\n";
}

std::string RowPlan::rowVaryingOutputs() {
  std::string pre, lanes, post;
  ElementEmitter e = makeEmitter(&pre);
  Index id = ElementEmitter::identity(domain.size());
  std::string decls;
  unsigned o = 0;
  for (Value v : fusion.getYield().getValues()) {
    unsigned out = o++;
    if (shapeOf(v) != ArrayRef<int64_t>(domain))
      continue;
    std::string r = "r" + str(out);
    std::string val = e.emit(v, id);
    lanes += e.takeCode() + "            " + r + "[l] = " + val + ";\n";
    decls += "          " + std::string(computeType(dtypeOf(v))) + " " + r + "[" + str(vec) +
             "];\n";
    std::string off = e.offsetAt(domain, id, lane, "cb");
    post += "          if (active) fz_store<" + std::string(storageType(dtypeOf(v))) + ", " +
            str(vec) + ">(out" + str(out) + ", " + off + ", " + r + ");\n";
  }
  if (lanes.empty())
    return "";
  return slotLoop(decls + pre, lanes, post, "    ");
}

std::string RowPlan::perRowOutputs() {
  std::vector<std::string> vars(domain.size(), "0");
  for (int64_t d : kept)
    vars[d] = "k" + str(d);
  std::string unused;
  ElementEmitter e = makeEmitter(&unused);
  std::string stores;
  unsigned o = 0;
  for (Value v : fusion.getYield().getValues()) {
    unsigned out = o++;
    ArrayRef<int64_t> s = shapeOf(v);
    if (s == ArrayRef<int64_t>(domain))
      continue;
    // Shape D with reduced dims 1, or the kept dims alone (keepdims = false).
    Index idx;
    if (s.size() == domain.size()) {
      for (size_t d = 0; d < domain.size(); ++d)
        idx.push_back(llvm::is_contained(reduced, (int64_t)d) ? IndexExpr::constant(0)
                                                              : IndexExpr::domain(d));
    } else {
      for (int64_t d : kept)
        idx.push_back(IndexExpr::domain(d));
    }
    std::string val = e.emit(v, idx);
    stores += e.takeCode() + "      out" + str(out) + "[row] = fz_out<" +
              storageType(dtypeOf(v)) + ">::of(" + val + ");\n";
  }
  if (stores.empty())
    return "";
  return "    if (active && tl == 0) {\n" + stores + "    }\n";
}

std::string RowPlan::body() {
  // Reductions by phase: a reduction that needs another's result comes later.
  std::map<int, std::vector<Operation *>> byLevel = reductionPhases(fusion, online);
  std::string phases;
  for (auto &[l, reds] : byLevel)
    phases += "    // phase " + str(l) + "\n" + phase(reds);
  std::string outputs = "    // outputs\n" + rowVaryingOutputs() + perRowOutputs();
  // The cache is known only now that every phase has asked for its loads.
  std::string preload;
  if (!cache.empty()) {
    std::string loads;
    for (const Cached &c : cache) {
      preload += "    " + c.type + " " + c.name + "[" + str(slots) + "][" + str(vec) + "];\n";
      loads += "          fz_load<" + c.storage + ", " + str(vec) + ">(" + c.ptr + ", " +
               c.offset + ", " + c.name + "[s]);\n";
    }
    preload += "    // the row's inputs, read from HBM once\n" + slotLoop("", "", loads, "    ");
  }
  return preload + phases + outputs;
}

} // namespace fusec::codegen::detail
