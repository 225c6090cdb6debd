//===- Explain.cpp - what fusion decided, and what it predicts ------------===//
#include "compiler/schedule/AttentionForm.h"
#include "compiler/schedule/RowStatsForm.h"
#include "compiler/pipeline/Explain.h"
#include "compiler/support/Printable.h"
#include "compiler/pipeline/InPlaceOutputs.h"

#include "compiler/pipeline/Compile.h"

#include "compiler/cost/CostModel.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/families/CollectiveStep.h"
#include "compiler/families/KernelFamily.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

using namespace mlir;

namespace fusec {

int64_t Explanation::bytesUnfused() const {
  int64_t b = 0;
  for (const auto &k : kernels)
    b += k.bytesUnfused;
  return b;
}
int64_t Explanation::bytesFused() const {
  int64_t b = 0;
  for (const auto &k : kernels)
    b += k.bytesFused;
  return b;
}
bool Explanation::chained() const {
  if (!launchesOverlap || profile.chainedLaunchSeconds <= 0 || kernels.empty())
    return false;
  for (const auto &k : kernels)
    if (k.unfusedChainedUs < 0)
      return false;
  return true;
}
// Chained, the first kernel pays its launch (the timed runs of `fusec bench`
// are apart, between events) and each later one the larger of its work and
// the chained launch.
double Explanation::unfusedUs() const {
  const bool chain = chained();
  double t = chain ? kernels.front().unfusedLeadUs : 0;
  for (const auto &k : kernels)
    t += chain ? k.unfusedChainedUs : k.unfusedUs;
  return t;
}
double Explanation::predictedUs() const {
  if (!chained()) {
    double t = -sharedSavedUs;
    for (const auto &k : kernels)
      t += k.predictedUs;
    return t;
  }
  // A shared launch saves at most a chained launch per pair; cuBLASLt and
  // NCCL launch their kernels the ordinary way, so a library step pays all.
  const double launch = profile.launchSeconds * 1e6, link = profile.chainedLaunchSeconds * 1e6;
  double t = kernels.front().predictedUs - std::min(sharedSavedUs, link * sharedLaunches.size());
  for (size_t i = 1; i < kernels.size(); ++i)
    t += kernels[i].library
             ? kernels[i].predictedUs
             : std::max(kernels[i].predictedUs - launch, link);
  return t;
}
int Explanation::launchesUnfused() const {
  int n = 0;
  for (const auto &k : kernels)
    n += k.launchesUnfused;
  return n;
}

namespace {
std::string nameAttrOf(DictionaryAttr attrs, unsigned i, const char *prefix) {
  if (attrs)
    if (auto s = attrs.getAs<StringAttr>("fusec.name"))
      return s.str();
  return prefix + std::to_string(i);
}
} // namespace

/// " for B=4, S=1000", or nothing.
static std::string sizesText(const std::map<std::string, int64_t> &sizes) {
  std::string s;
  for (const auto &[name, size] : sizes)
    s += (s.empty() ? " for " : ", ") + printable(name) + "=" + std::to_string(size);
  return s;
}

namespace {

std::string mb(int64_t bytes) {
  char buf[32];
  if (bytes >= 1000000)
    std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.1f KB", bytes / 1e3);
  return buf;
}

} // namespace

Explanation explain(ModuleOp fused, const DeviceProfile &profile) {
  Explanation e;
  e.profile = profile;
  func::FuncOp func;
  for (auto f : fused.getOps<func::FuncOp>())
    func = f;
  e.graph = func.getSymName().str();
  e.ranks = programRanks(func);
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (std::optional<int64_t> axis = resultShardAxis(func, i))
      e.splitOutputs.push_back(printable(nameAttrOf(func.getResultAttrDict(i), i, "out")) +
                               " (dim " + std::to_string(*axis) + ")");
  llvm::DenseMap<Value, std::string> producer;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    producer[func.getArgument(i)] = "input:" + nameAttrOf(func.getArgAttrDict(i), i, "arg");
  llvm::DenseMap<Operation *, Value> inPlace = outputsWrittenInPlace(func);
  for (Operation &op : func.getBody().front()) {
    if (auto f = dyn_cast<FusionOp>(op); f && inPlace.count(f)) {
      std::string by = producer.lookup(inPlace.lookup(f));
      e.inPlace.push_back(f->getAttrOfType<StringAttr>("name").str() + ": not run; " + by +
                          " writes the output in place (a reshape of its result)");
      producer[f->getResult(0)] = by;
    } else if (auto f = dyn_cast<FusionOp>(op)) {
      ExplainedKernel k;
      k.name = f->getAttrOfType<StringAttr>("name").str();
      k.kind = f.getKind().str();
      StepCost c = fusionCost(f);
      k.nodes = c.nodes;
      k.ops = c.ops;
      k.bytesUnfused = c.bytesUnfused;
      k.bytesFused = c.bytesFused;
      k.launchesUnfused = c.launchesUnfused;
      k.unfusedUs = c.unfusedUs;
      k.predictedUs = c.predictedUs;
      if (auto a = f->getAttrOfType<FloatAttr>("unfused_chained_us"))
        k.unfusedChainedUs = a.getValueAsDouble();
      if (auto a = f->getAttrOfType<FloatAttr>("unfused_lead_us"))
        k.unfusedLeadUs = a.getValueAsDouble();
      if (std::optional<KernelFamily> family = f.getFamily()) {
        k.family = stringifyKernelFamily(*family).str();
        k.library = kernelFamily(*family).isLibrary();
      }
      if (auto list = f->getAttrOfType<ArrayAttr>("family_rejections"))
        for (Attribute r : list) {
          auto d = cast<DictionaryAttr>(r);
          k.familyRejections.push_back(
              {stringifyKernelFamily(d.getAs<KernelFamilyAttr>("family").getValue()).str(),
               d.getAs<StringAttr>("reason").str()});
        }
      if (auto g = f->getAttrOfType<StringAttr>("gemm_alternatives")) {
        k.gemmAlternatives = g.str();
        std::optional<KernelFamily> family = f.getFamily();
        k.gemm = !family                                 ? ""
                 : isFusecGemm(*family)                  ? "fusec"
                 : *family == KernelFamily::LibraryEpilogue ? "cublaslt-epilogue"
                                                            : "cublaslt";
      }
      if (k.kind == "attention") {
        MatmulOp output;
        for (Operation &op : f.getBodyBlock())
          if (auto mm = dyn_cast<MatmulOp>(op))
            output = mm;
        std::string why;
        if (std::optional<AttentionMatch> m = output ? matchAttention(output, why) : std::nullopt) {
          ArrayRef<int64_t> s = shapeOf(m->scores.getResult());
          k.streamedShape.assign(s.begin(), s.end());
          k.streamedBytes = tensorBytes(m->scores.getResult());
          k.computedShare = m->computedShare(attentionTiles(*m, profile));
        }
      }
      for (Operation &op : f.getBodyBlock())
        if (isCollective(&op)) {
          const Cost c = opFlops(&op);
          k.reducedFirst = k.kind != "collective";
          k.linkBytes = c.linkBytes;
          k.peer = families::overPeerMemory(c, profile);
          k.peerBytes = c.allReduceBytes * (c.allReduceRanks - 1);
          k.collective =
              op.getName().stripDialect().str() + " of " + mb(tensorBytes(op.getOperand(0)));
        }
      if (k.kind == "streamed_rows")
        if (std::optional<RowStatsMatch> m = rowStatsOf(f)) {
          ArrayRef<int64_t> s = shapeOf(m->product.getResult());
          k.streamedShape.assign(s.begin(), s.end());
          k.streamedBytes = tensorBytes(m->product.getResult());
          k.picks = static_cast<int>(m->picks.size());
        }
      for (Value v : f.getInputs())
        k.tripBytes = std::max(k.tripBytes, tensorBytes(v));
      for (Value v : f.getResults())
        k.tripBytes = std::max(k.tripBytes, tensorBytes(v));
      for (Value v : f.getInputs())
        e.edges.push_back({producer.lookup(v), k.name, readBytes(v)});
      for (Value r : f.getResults())
        producer[r] = k.name;
      e.kernels.push_back(std::move(k));
    } else if (isa<func::ReturnOp>(op)) {
      for (auto [i, v] : llvm::enumerate(op.getOperands()))
        e.edges.push_back({producer.lookup(v),
                           "output:" + nameAttrOf(func.getResultAttrDict(i), i, "out"),
                           tensorBytes(v)});
    }
  }
  auto decisions = [&](const char *name, std::vector<Decision> &into) {
    if (auto list = func->getAttrOfType<ArrayAttr>(name))
      for (Attribute a : list) {
        auto d = cast<DecisionAttr>(a);
        Decision r{d.getProducer().str(), d.getConsumer().str(), d.getReason().str(),
                   stringifyDecisionReason(d.getCode()).str()};
        if (d.getFusedUs())
          r.fusedUs = d.getFusedUs().getValueAsDouble();
        if (d.getApartUs())
          r.apartUs = d.getApartUs().getValueAsDouble();
        into.push_back(std::move(r));
      }
  };
  decisions("fusec.rejected", e.rejected);
  decisions("fusec.recomputed", e.recomputed);
  return e;
}

namespace {

std::string joined(const std::vector<std::string> &v, const char *sep = ", ") {
  std::string s;
  for (const std::string &x : v)
    s += (s.empty() ? "" : sep) + x;
  return s;
}

} // namespace

std::string explainText(const Explanation &e) {
  std::string s;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "fusec explain: %s%s (profile %s: %.0f GB/s copy%s, %.0f TFLOP/s matmul, %.1f us "
                "per launch)\n\n",
                e.graph.c_str(), sizesText(e.sizes).c_str(), e.profile.name.c_str(), e.profile.hbmBytesPerSec / 1e9,
                e.profile.measuredOn.empty() ? "" : " measured by fusec bench",
                e.profile.tensorFlopsPerSec / 1e12, e.profile.launchSeconds * 1e6);
  s += buf;
  if (!e.paddedSizes.empty()) {
    std::string at, serves;
    for (const auto &[name, size] : e.paddedSizes) {
      at += (at.empty() ? "" : ", ") + printable(name) + "=" + std::to_string(size);
      serves += (serves.empty() ? "" : ", ") + printable(name) + " from 1 to " +
                std::to_string(size);
    }
    s.insert(s.size() - 1, "compiled at " + at + ", padded: one compile serves " + serves +
                               " (docs/graph-format.md)\n");
  }
  if (!e.profile.measuredOn.empty())
    s.insert(s.size() - 1, "(copy bandwidth measured on " + e.profile.measuredOn + ")\n");
  if (e.ranks > 1) {
    int collectives = 0;
    int64_t link = 0;
    for (const ExplainedKernel &k : e.kernels)
      if (!k.collective.empty()) {
        ++collectives;
        link += k.linkBytes;
      }
    std::snprintf(buf, sizeof buf,
                  "split over %lld ranks: each GPU runs this plan on its shards; %d "
                  "collective(s) send %s per rank per call",
                  (long long)e.ranks, collectives, mb(link).c_str());
    std::string line = buf;
    if (!e.splitOutputs.empty())
      line += "; outputs left split: " + joined(e.splitOutputs);
    s.insert(s.size() - 1, line + "\n");  // before the blank line
  }
  for (const ExplainedKernel &k : e.kernels) {
    s += "kernel " + k.name + "  [" + k.kind + "]" +
         (k.nodes.empty() ? "" : "  nodes: " + joined(k.nodes)) + "\n";
    s += "  ops: " + (k.ops.empty() ? std::string("copy") : joined(k.ops, " ")) + "\n";
    std::snprintf(buf, sizeof buf,
                  "  HBM: %s unfused (%.1f trips of %s) -> %s fused (%.1f trips); launches %d -> 1\n"
                  "  predicted: %.1f us unfused -> %.1f us fused (%.2fx)\n",
                  mb(k.bytesUnfused).c_str(), k.tripsUnfused(), mb(k.tripBytes).c_str(),
                  mb(k.bytesFused).c_str(), k.tripsFused(), k.launchesUnfused, k.unfusedUs,
                  k.predictedUs, k.predictedUs > 0 ? k.unfusedUs / k.predictedUs : 0.0);
    s += buf;
    if (!k.family.empty()) {
      s += "  family: " + k.family;
      for (size_t i = 0; i < k.familyRejections.size(); ++i)
        s += (i == 0 ? " (before it: " : "; ") + k.familyRejections[i].first + ", " +
             k.familyRejections[i].second;
      s += k.familyRejections.empty() ? "\n" : ")\n";
    }
    if (!k.gemm.empty())
      s += "  gemm: " +
           std::string(k.gemm == "fusec"               ? "fusec's kernel"
                       : k.gemm == "cublaslt-epilogue" ? "cuBLASLt with its epilogue"
                                                       : "cuBLASLt") +
           " (" + k.gemmAlternatives + ")\n";
    if (k.streamedBytes > 0) {
      std::string shape;
      for (int64_t d : k.streamedShape)
        shape += (shape.empty() ? "" : ", ") + std::to_string(d);
      if (k.kind == "streamed_rows")
        s += "  streamed: the product [" + shape + "] (" + mb(k.streamedBytes) +
             ") and its exponentials stay on chip, reduced to a row max and sum per tile" +
             (k.picks ? " and " + std::to_string(k.picks) + " row sum" + (k.picks > 1 ? "s" : "") +
                            " of a function of it (a picked logit)"
                      : "");
      else
        s += "  streamed: the scores [" + shape + "] (" + mb(k.streamedBytes) +
             ") and the probabilities stay on chip, never written or read back";
      if (k.computedShare < 1) {
        char share[64];
        std::snprintf(share, sizeof share, "; %.0f%% of the key tiles computed (causal)",
                      k.computedShare * 100);
        s += share;
      }
      s += "\n";
    }
    if (!k.schedule.empty())
      s += "  schedule: " + k.schedule + "\n";
    if (!k.collective.empty() && k.peer) {
      // At the start of a row kernel, its launch is priced with the rows.
      const bool inRows = k.reducedFirst;
      std::snprintf(buf, sizeof buf,
                    "  link: %s over %lld ranks%s, one-shot over peer memory%s: each rank reads %s "
                    "(%.1f us %s + %.1f us at %.0f GB/s; NCCL: %.1f us%s)\n",
                    k.collective.c_str(), (long long)e.ranks, inRows ? " ahead of the rows" : "",
                    inRows ? " in this kernel" : "", mb(k.peerBytes).c_str(),
                    families::oneShotLatencySeconds(e.profile, inRows) * 1e6,
                    inRows ? "flag round trip" : "launch and flag round trip",
                    double(k.peerBytes) / e.profile.linkBytesPerSec * 1e6,
                    e.profile.linkBytesPerSec / 1e9,
                    1e6 * (e.profile.collectiveSeconds +
                           double(k.linkBytes) / e.profile.linkBytesPerSec),
                    inRows ? " and a launch" : "");
      s += buf;
    } else if (!k.collective.empty()) {
      std::snprintf(buf, sizeof buf,
                    "  link: %s over %lld ranks, %s sent per rank (%.1f us NCCL latency + %.1f us "
                    "at %.0f GB/s)\n",
                    k.collective.c_str(), (long long)e.ranks, mb(k.linkBytes).c_str(),
                    e.profile.collectiveSeconds * 1e6,
                    double(k.linkBytes) / e.profile.linkBytesPerSec * 1e6,
                    e.profile.linkBytesPerSec / 1e9);
      s += buf;
    }
  }
  // Kernels sharing a launch (listed below) are predicted as one.
  std::string launches =
      e.sharedLaunches.empty()
          ? std::string()
          : " in " + std::to_string(e.launches()) + " launches";
  std::snprintf(buf, sizeof buf,
                "\nwhole graph: %zu kernel(s)%s instead of %d; HBM %s -> %s; predicted %.1f us -> "
                "%.1f us (%.2fx)\n",
                e.kernels.size(), launches.c_str(), e.launchesUnfused(),
                mb(e.bytesUnfused()).c_str(),
                mb(e.bytesFused()).c_str(), e.unfusedUs(), e.predictedUs(),
                e.predictedUs() > 0 ? e.unfusedUs() / e.predictedUs() : 0.0);
  s += buf;
  if (e.chained()) {
    std::snprintf(buf, sizeof buf,
                  "  (launches overlap: the first costs %.1f us, each later kernel the larger "
                  "of its work and %.1f us)\n",
                  e.profile.launchSeconds * 1e6, e.profile.chainedLaunchSeconds * 1e6);
    s += buf;
  }
  if (!e.inPlace.empty()) {
    s += "\noutputs written in place:\n";
    for (const std::string &x : e.inPlace)
      s += "  " + x + "\n";
  }
  if (!e.sharedLaunches.empty()) {
    s += "\nkernels sharing one launch:\n";
    for (const std::string &x : e.sharedLaunches)
      s += "  " + x + "\n";
  }
  s += "\nmerges considered and rejected:";
  if (e.rejected.empty())
    s += " none\n";
  else
    s += "\n";
  for (const Decision &r : e.rejected)
    s += "  " + r.producer + " -> " + r.consumer + ": " + r.reason + "\n";
  if (!e.recomputed.empty()) {
    s += "\nintermediates recomputed instead of read back:\n";
    for (const Decision &r : e.recomputed)
      s += "  " + r.producer + " -> " + r.consumer + ": " + r.reason + "\n";
  }
  return s;
}

std::string explainJson(const Explanation &e) {
  nlohmann::json j;
  j["graph"] = e.graph;
  if (!e.sizes.empty())
    j["sizes"] = e.sizes;
  j["profile"] = {{"name", e.profile.name},
                  {"copy_bytes_per_s", e.profile.hbmBytesPerSec},
                  {"copy_measured_on", e.profile.measuredOn},
                  {"matmul_flops_per_s", e.profile.tensorFlopsPerSec},
                  {"launch_s", e.profile.launchSeconds},
                  {"chained_launch_s", e.profile.chainedLaunchSeconds},
                  {"link_bytes_per_s", e.profile.linkBytesPerSec},
                  {"collective_s", e.profile.collectiveSeconds},
                  {"one_shot_collective_s", e.profile.peerCollectiveSeconds}};
  j["ranks"] = e.ranks;
  j["split_outputs"] = e.splitOutputs;
  j["kernels"] = nlohmann::json::array();
  for (const ExplainedKernel &k : e.kernels)
    j["kernels"].push_back({{"name", k.name},
                            {"kind", k.kind},
                            {"nodes", k.nodes},
                            {"ops", k.ops},
                            {"bytes_unfused", k.bytesUnfused},
                            {"bytes_fused", k.bytesFused},
                            {"trip_bytes", k.tripBytes},
                            {"trips_unfused", std::round(k.tripsUnfused() * 100) / 100},
                            {"trips_fused", std::round(k.tripsFused() * 100) / 100},
                            {"launches_unfused", k.launchesUnfused},
                            {"launches_fused", 1},
                            {"unfused_us", k.unfusedUs},
                            {"predicted_us", k.predictedUs}});
  for (size_t i = 0; i < e.kernels.size(); ++i) {
    if (!e.kernels[i].family.empty()) {
      j["kernels"][i]["family"] = e.kernels[i].family;
      j["kernels"][i]["family_rejections"] = nlohmann::json::array();
      for (const auto &[family, reason] : e.kernels[i].familyRejections)
        j["kernels"][i]["family_rejections"].push_back({{"family", family}, {"reason", reason}});
    }
    if (!e.kernels[i].gemm.empty()) {
      j["kernels"][i]["gemm"] = e.kernels[i].gemm;
      j["kernels"][i]["gemm_alternatives"] = e.kernels[i].gemmAlternatives;
    }
    if (e.kernels[i].streamedBytes > 0)
      j["kernels"][i]["streamed"] = {{"tensor", e.kernels[i].kind == "streamed_rows" ? "product"
                                                                                 : "scores"},
                                     {"shape", e.kernels[i].streamedShape},
                                     {"bytes", e.kernels[i].streamedBytes},
                                     {"computed_share", e.kernels[i].computedShare}};
    if (e.kernels[i].picks > 0)
      j["kernels"][i]["streamed"]["picks"] = e.kernels[i].picks;
    if (!e.kernels[i].schedule.empty())
      j["kernels"][i]["schedule"] = e.kernels[i].schedule;
    if (!e.kernels[i].collective.empty()) {
      j["kernels"][i]["link_bytes"] = e.kernels[i].linkBytes;
      j["kernels"][i]["one_shot"] = e.kernels[i].peer;
    }
  }
  j["edges"] = nlohmann::json::array();
  for (const ExplainedEdge &ed : e.edges)
    j["edges"].push_back({{"from", ed.from}, {"to", ed.to}, {"bytes", ed.bytes}});
  j["in_place"] = e.inPlace;
  j["shared_launches"] = e.sharedLaunches;
  j["rejected"] = nlohmann::json::array();
  auto decision = [](const Decision &r) {
    nlohmann::json d = {{"producer", r.producer}, {"consumer", r.consumer}, {"reason", r.reason}};
    if (!r.code.empty())
      d["code"] = r.code;
    if (r.fusedUs >= 0) {
      d["fused_us"] = r.fusedUs;
      d["apart_us"] = r.apartUs;
    }
    return d;
  };
  for (const Decision &r : e.rejected)
    j["rejected"].push_back(decision(r));
  j["recomputed"] = nlohmann::json::array();
  for (const Decision &r : e.recomputed)
    j["recomputed"].push_back(decision(r));
  j["total"] = {{"kernels", e.kernels.size()},
                {"launches", e.launches()},
                {"launches_unfused", e.launchesUnfused()},
                {"bytes_unfused", e.bytesUnfused()},
                {"bytes_fused", e.bytesFused()},
                {"unfused_us", e.unfusedUs()},
                {"predicted_us", e.predictedUs()},
                {"predicted_speedup", e.predictedUs() > 0 ? e.unfusedUs() / e.predictedUs() : 0},
                {"launches_chained", e.chained()}};
  return j.dump(2) + "\n";
}

std::string explainDot(const Explanation &e) {
  // Escapes quotes only: labels use Graphviz's \n line breaks on purpose, and
  // the graph's names are printable() first (their backslashes as \x5c).
  auto quote = [](const std::string &s) {
    std::string q = "\"";
    for (char c : s)
      q += c == '"' ? std::string("\\\"") : std::string(1, c);
    return q + "\"";
  };
  std::string s = "digraph " + quote(printable(e.graph)) +
                  " {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\"];\n";
  for (const ExplainedKernel &k : e.kernels) {
    s += "  subgraph " + quote("cluster_" + k.name) + " {\n    label=" +
         quote(k.name + " [" + k.kind + "] " + mb(k.bytesFused)) + ";\n    style=rounded;\n";
    std::string ops = k.ops.empty() ? "copy" : joined(k.ops, "\\n");
    std::vector<std::string> names;
    for (const std::string &n : k.nodes)
      names.push_back(printable(n));
    std::string nodes = names.empty() ? "" : "\\n(" + joined(names) + ")";
    s += "    " + quote(k.name) + " [label=" + quote(ops + nodes) + "];\n  }\n";
  }
  for (const ExplainedEdge &ed : e.edges) {
    const std::string from = printable(ed.from), to = printable(ed.to);
    for (const std::string *end : {&from, &to})
      if (end->rfind("input:", 0) == 0 || end->rfind("output:", 0) == 0)
        s += "  " + quote(*end) + " [shape=ellipse, label=" + quote(end->substr(end->find(':') + 1)) + "];\n";
    s += "  " + quote(from) + " -> " + quote(to) + " [label=" + quote(mb(ed.bytes)) + "];\n";
  }
  return s + "}\n";
}

} // namespace fusec
