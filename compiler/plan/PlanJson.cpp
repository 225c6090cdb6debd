//===- PlanJson.cpp - a plan as JSON, and back, checked -------------------===//
#include "compiler/plan/PlanJson.h"
#include "compiler/plan/PeerRegion.h"
#include "compiler/support/Printable.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace fusec {
namespace {

using nlohmann::json;

constexpr int64_t kMaxBytes = int64_t(1) << 40;  // no tensor, arena or workspace is larger

/// `j` as a float: a JSON number within float's finite range.
float finiteFloat(const json &j) {
  double v = j.get<double>();
  if (!(std::fabs(v) <= double(std::numeric_limits<float>::max())))
    throw std::runtime_error("number " + j.dump() + " out of a float's range");
  return float(v);
}

template <typename T>
std::vector<T> jsonIntegers(const json &j) {
  if (!j.is_array())
    throw std::runtime_error("expected an array of integers");
  std::vector<T> out;
  for (const json &v : j)
    out.push_back(jsonInteger<T>(v));
  return out;
}

json specJson(const TensorSpec &t) {
  return {{"name", t.name}, {"dtype", std::string(dtypeName(t.dtype))}, {"shape", t.shape}};
}

TensorSpec specFrom(const json &j) {
  TensorSpec t;
  t.name = j.at("name").get<std::string>();
  std::string dt = j.at("dtype").get<std::string>();
  std::optional<DType> d = parseDType(dt);
  if (!d)
    throw std::runtime_error("unknown dtype '" + dt + "'");
  t.dtype = *d;
  t.shape = jsonIntegers<int64_t>(j.at("shape"));
  int64_t n = 1;
  for (int64_t dim : t.shape) {
    if (dim < 0 || dim > kMaxBytes || (dim > 0 && n > kMaxBytes / dim))
      throw std::runtime_error("tensor '" + t.name + "' has a dimension out of range");
    n *= dim;
  }
  if (n * dtypeBytes(t.dtype) > kMaxBytes)
    throw std::runtime_error("tensor '" + t.name + "' is larger than 1 TiB");
  return t;
}

const char *kindName(PlanBuffer::Kind k) {
  switch (k) {
  case PlanBuffer::Kind::Input: return "input";
  case PlanBuffer::Kind::Output: return "output";
  case PlanBuffer::Kind::Temp: return "temp";
  }
  return "temp";
}

const char *kindName(PlanStep::Kind k) {
  switch (k) {
  case PlanStep::Kind::Kernel: return "kernel";
  case PlanStep::Kind::Matmul: return "matmul";
  case PlanStep::Kind::Copy: return "copy";
  case PlanStep::Kind::Collective: return "collective";
  }
  return "kernel";
}

json layoutJson(const MatrixLayout &l) {
  return {{"rows", l.rows}, {"cols", l.cols}, {"ld", l.ld}, {"batch", l.batch},
          {"batchStride", l.batchStride}, {"rowMajor", l.rowMajor}};
}

MatrixLayout layoutFrom(const json &j) {
  MatrixLayout l;
  l.rows = jsonInteger<int64_t>(j.at("rows"));
  l.cols = jsonInteger<int64_t>(j.at("cols"));
  l.ld = jsonInteger<int64_t>(j.at("ld"));
  l.batch = jsonInteger<int64_t>(j.at("batch"));
  l.batchStride = jsonInteger<int64_t>(j.at("batchStride"));
  l.rowMajor = j.at("rowMajor").get<bool>();
  return l;
}

json mapJson(const TensorMapParam &m) {
  return {{"arg", m.arg}, {"elementBytes", m.elementBytes}, {"bf16", m.bf16},
          {"rows", m.rows}, {"cols", m.cols}, {"rowStrideBytes", m.rowStrideBytes},
          {"offsetBytes", m.offsetBytes}, {"boxRows", m.boxRows}, {"boxCols", m.boxCols},
          {"batches", m.batches}, {"batchStrideBytes", m.batchStrideBytes}};
}

TensorMapParam mapFrom(const json &j) {
  TensorMapParam m;
  m.arg = jsonInteger<int>(j.at("arg"));
  m.elementBytes = jsonInteger<int>(j.at("elementBytes"));
  m.bf16 = j.at("bf16").get<bool>();
  m.rows = jsonInteger<uint64_t>(j.at("rows"));
  m.cols = jsonInteger<uint64_t>(j.at("cols"));
  m.rowStrideBytes = jsonInteger<uint64_t>(j.at("rowStrideBytes"));
  m.offsetBytes = jsonInteger<uint64_t>(j.at("offsetBytes"));
  m.boxRows = jsonInteger<uint32_t>(j.at("boxRows"));
  m.boxCols = jsonInteger<uint32_t>(j.at("boxCols"));
  m.batches = jsonInteger<uint64_t>(j.at("batches"));
  m.batchStrideBytes = jsonInteger<uint64_t>(j.at("batchStrideBytes"));
  return m;
}

json kernelJson(const PlanKernel &k, size_t body) {
  json maps = json::array();
  for (const TensorMapParam &m : k.tensorMaps)
    maps.push_back(mapJson(m));
  return {{"body", body}, {"entry", k.entry}, {"family", k.family}, {"schedule", k.schedule},
          {"grid", k.grid}, {"block", k.block}, {"gridY", k.gridY}, {"gridZ", k.gridZ},
          {"sharedBytes", k.sharedBytes}, {"clusterX", k.clusterX},
          {"spreadClusters", k.spreadClusters}, {"cooperative", k.cooperative},
          {"scratchBytes", k.scratchBytes}, {"scratchZeroBytes", k.scratchZeroBytes},
          {"scratchZeroOnce", k.scratchZeroOnce}, {"tensorMaps", maps},
          {"readsBeforeWait", k.readsBeforeWait}, {"gemmConfig", k.gemmConfig},
          {"gemmKey", k.gemmKey}, {"args", k.args}, {"inputs", k.inputs}};
}

PlanKernel kernelFrom(const json &j, const std::vector<std::string> &bodies) {
  PlanKernel k;
  size_t body = jsonInteger<size_t>(j.at("body"));
  if (body >= bodies.size())
    throw std::runtime_error("kernel body " + std::to_string(body) + " does not exist");
  k.source = bodies[body];
  k.entry = j.at("entry").get<std::string>();
  k.family = j.at("family").get<std::string>();
  k.schedule = j.at("schedule").get<std::string>();
  k.grid = jsonInteger<unsigned>(j.at("grid"));
  k.block = jsonInteger<unsigned>(j.at("block"));
  k.gridY = jsonInteger<unsigned>(j.at("gridY"));
  k.gridZ = jsonInteger<unsigned>(j.at("gridZ"));
  k.sharedBytes = jsonInteger<unsigned>(j.at("sharedBytes"));
  k.clusterX = jsonInteger<unsigned>(j.at("clusterX"));
  k.spreadClusters = j.at("spreadClusters").get<bool>();
  k.cooperative = j.at("cooperative").get<bool>();
  k.scratchBytes = jsonInteger<unsigned>(j.at("scratchBytes"));
  k.scratchZeroBytes = jsonInteger<unsigned>(j.at("scratchZeroBytes"));
  k.scratchZeroOnce = jsonInteger<unsigned>(j.at("scratchZeroOnce"));
  for (const json &m : j.at("tensorMaps"))
    k.tensorMaps.push_back(mapFrom(m));
  k.readsBeforeWait = jsonInteger<int>(j.at("readsBeforeWait"));
  k.gemmConfig = j.at("gemmConfig").get<std::string>();
  k.gemmKey = j.at("gemmKey").get<std::string>();
  k.args = jsonIntegers<int>(j.at("args"));
  k.inputs = jsonInteger<size_t>(j.at("inputs"));
  return k;
}

json matmulJson(const PlanMatmul &m) {
  const MatmulDesc &d = m.desc;
  json desc = {{"dtype", std::string(dtypeName(d.dtype))}, {"a", layoutJson(d.a)},
               {"b", layoutJson(d.b)}, {"c", layoutJson(d.c)}, {"transA", d.transA},
               {"transB", d.transB}, {"alpha", d.alpha}, {"beta", d.beta},
               {"biasEpilogue", d.biasEpilogue}, {"geluEpilogue", d.geluEpilogue}};
  return {{"desc", desc}, {"a", m.a}, {"b", m.b}, {"c", m.c}, {"aOffset", m.aOffset},
          {"bOffset", m.bOffset}, {"residual", m.residual}, {"bias", m.bias},
          {"residualOffset", m.residualOffset}, {"biasOffset", m.biasOffset},
          {"algoRank", m.algoRank}, {"tuningKey", m.tuningKey}};
}

PlanMatmul matmulFrom(const json &j) {
  PlanMatmul m;
  const json &d = j.at("desc");
  std::string dt = d.at("dtype").get<std::string>();
  std::optional<DType> type = parseDType(dt);
  if (!type || (*type != DType::F32 && *type != DType::F16 && *type != DType::BF16))
    throw std::runtime_error("matmul dtype '" + dt + "' is not f32, f16 or bf16");
  m.desc.dtype = *type;
  m.desc.a = layoutFrom(d.at("a"));
  m.desc.b = layoutFrom(d.at("b"));
  m.desc.c = layoutFrom(d.at("c"));
  m.desc.transA = d.at("transA").get<bool>();
  m.desc.transB = d.at("transB").get<bool>();
  m.desc.alpha = finiteFloat(d.at("alpha"));
  m.desc.beta = finiteFloat(d.at("beta"));
  m.desc.biasEpilogue = d.at("biasEpilogue").get<bool>();
  m.desc.geluEpilogue = d.at("geluEpilogue").get<bool>();
  m.a = jsonInteger<int>(j.at("a"));
  m.b = jsonInteger<int>(j.at("b"));
  m.c = jsonInteger<int>(j.at("c"));
  m.aOffset = jsonInteger<int64_t>(j.at("aOffset"));
  m.bOffset = jsonInteger<int64_t>(j.at("bOffset"));
  m.residual = jsonInteger<int>(j.at("residual"));
  m.bias = jsonInteger<int>(j.at("bias"));
  m.residualOffset = jsonInteger<int64_t>(j.at("residualOffset"));
  m.biasOffset = jsonInteger<int64_t>(j.at("biasOffset"));
  m.algoRank = jsonInteger<int>(j.at("algoRank"));
  m.tuningKey = j.at("tuningKey").get<std::string>();
  return m;
}

json costJson(const StepCost &c) {
  return {{"nodes", c.nodes}, {"ops", c.ops}, {"bytesFused", c.bytesFused},
          {"bytesUnfused", c.bytesUnfused}, {"flops", c.flops},
          {"launchesUnfused", c.launchesUnfused}, {"predictedUs", c.predictedUs},
          {"unfusedUs", c.unfusedUs}};
}

StepCost costFrom(const json &j) {
  StepCost c;
  c.nodes = j.at("nodes").get<std::vector<std::string>>();
  c.ops = j.at("ops").get<std::vector<std::string>>();
  c.bytesFused = jsonInteger<int64_t>(j.at("bytesFused"));
  c.bytesUnfused = jsonInteger<int64_t>(j.at("bytesUnfused"));
  c.flops = jsonInteger<int64_t>(j.at("flops"));
  c.launchesUnfused = jsonInteger<int>(j.at("launchesUnfused"));
  c.predictedUs = j.at("predictedUs").get<double>();
  c.unfusedUs = j.at("unfusedUs").get<double>();
  return c;
}

template <typename E>
E kindFrom(const json &j, std::initializer_list<E> kinds) {
  std::string name = j.get<std::string>();
  for (E k : kinds)
    if (name == kindName(k))
      return k;
  throw std::runtime_error("unknown kind '" + name + "'");
}

} // namespace

std::string jsonWhy(const std::exception &e) {
  std::string why = e.what();
  if (why.rfind("[json.exception.", 0) == 0) {
    size_t end = why.find("] ");
    if (end != std::string::npos)
      why = why.substr(end + 2);
  }
  return why;
}

static json collectiveJson(const PlanCollective &c) {
  return {{"op", c.op},       {"reduce", c.reduce}, {"axis", c.axis}, {"ranks", c.ranks},
          {"src", c.src},     {"dst", c.dst},       {"peer", c.peer}};
}

static PlanCollective collectiveFrom(const json &c) {
  PlanCollective p{c.at("op").get<std::string>(), c.at("reduce").get<std::string>(),
                   jsonInteger<int64_t>(c.at("axis")), jsonInteger<int>(c.at("ranks")),
                   jsonInteger<int>(c.at("src")), jsonInteger<int>(c.at("dst"))};
  // Plans written before the one-shot kernel have no "peer": NCCL.
  p.peer = c.contains("peer") && c.at("peer").get<bool>();
  return p;
}

nlohmann::json planToJson(const PlanDesc &plan, std::vector<std::string> &bodies) {
  KernelBodies kb = kernelBodies(plan);
  bodies.clear();
  for (size_t i : kb.firstStep)
    bodies.push_back(plan.steps[i].kernel.source);
  std::map<size_t, size_t> bodyOfStep;
  for (size_t k = 0; k < kb.steps.size(); ++k)
    bodyOfStep[kb.steps[k]] = kb.bodyOf[k];
  json inputs = json::array(), outputs = json::array(), buffers = json::array(),
       steps = json::array();
  for (const TensorSpec &t : plan.inputs)
    inputs.push_back(specJson(t));
  for (const TensorSpec &t : plan.outputs)
    outputs.push_back(specJson(t));
  for (const PlanBuffer &b : plan.buffers)
    buffers.push_back({{"kind", kindName(b.kind)}, {"index", b.index},
                       {"tensor", specJson(b.tensor)}, {"arenaOffset", b.arenaOffset}});
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep &s = plan.steps[i];
    json step = {{"kind", kindName(s.kind)}, {"name", s.name}, {"cost", costJson(s.cost)}};
    switch (s.kind) {
    case PlanStep::Kind::Kernel:
      step["kernel"] = kernelJson(s.kernel, bodyOfStep.at(i));
      if (s.collective.peer)
        step["collective"] = collectiveJson(s.collective);
      break;
    case PlanStep::Kind::Matmul: step["matmul"] = matmulJson(s.matmul); break;
    case PlanStep::Kind::Copy: step["copy"] = {{"src", s.copy.src}, {"dst", s.copy.dst}}; break;
    case PlanStep::Kind::Collective: {
      const PlanCollective &c = s.collective;
      step["collective"] = collectiveJson(c);
      if (c.peer)
        step["kernel"] = kernelJson(s.kernel, bodyOfStep.at(i));
      break;
    }
    }
    steps.push_back(std::move(step));
  }
  json out = {{"graphName", plan.graphName}, {"device", plan.device}, {"arch", plan.arch},
          {"fused", plan.fused}, {"overlapLaunches", plan.overlapLaunches},
          {"inputs", inputs}, {"outputs", outputs}, {"inputScales", plan.inputScales},
          {"buffers", buffers}, {"steps", steps}, {"sharedLaunches", plan.sharedLaunches},
          {"sharedLaunchSavedUs", plan.sharedLaunchSavedUs}, {"arenaBytes", plan.arenaBytes},
          {"workspaceBytes", plan.workspaceBytes}, {"ranks", plan.ranks},
          {"inputShards", plan.inputShards}, {"outputShards", plan.outputShards},
          {"collectiveScratchBytes", plan.collectiveScratchBytes}};
  if (!plan.paddedAt.empty())
    out["padding"] = {{"at", plan.paddedAt}, {"bounds", plan.sizeBounds},
                      {"sizeArgs", plan.padding.sizeArgs}, {"argDims", plan.padding.argDims},
                      {"resultDims", plan.padding.resultDims}};
  return out;
}

rt::Expected<PlanDesc> planFromJson(const nlohmann::json &j,
                                    const std::vector<std::string> &bodies,
                                    const std::string &where) {
  std::set<std::string> distinct(bodies.begin(), bodies.end());
  if (distinct.size() != bodies.size())
    return rt::errorf("%s: the kernel bodies are not distinct", where.c_str());
  PlanDesc plan;
  std::string at = "plan";
  try {
    plan.graphName = j.at("graphName").get<std::string>();
    plan.device = j.at("device").get<std::string>();
    plan.arch = j.at("arch").get<std::string>();
    plan.fused = j.at("fused").get<bool>();
    plan.overlapLaunches = j.at("overlapLaunches").get<bool>();
    for (const json &t : j.at("inputs"))
      plan.inputs.push_back(specFrom(t));
    for (const json &t : j.at("outputs"))
      plan.outputs.push_back(specFrom(t));
    plan.inputScales = j.at("inputScales").get<std::vector<double>>();
    const json &buffers = j.at("buffers");
    for (size_t i = 0; i < buffers.size(); ++i) {
      at = "buffer " + std::to_string(i);
      const json &b = buffers.at(i);
      PlanBuffer pb;
      pb.kind = kindFrom(b.at("kind"), {PlanBuffer::Kind::Input, PlanBuffer::Kind::Output,
                                        PlanBuffer::Kind::Temp});
      pb.index = jsonInteger<int>(b.at("index"));
      pb.tensor = specFrom(b.at("tensor"));
      pb.arenaOffset = jsonInteger<int64_t>(b.at("arenaOffset"));
      plan.buffers.push_back(std::move(pb));
    }
    const json &steps = j.at("steps");
    for (size_t i = 0; i < steps.size(); ++i) {
      at = "step " + std::to_string(i);
      const json &s = steps.at(i);
      PlanStep ps;
      ps.kind = kindFrom(s.at("kind"), {PlanStep::Kind::Kernel, PlanStep::Kind::Matmul,
                                        PlanStep::Kind::Copy, PlanStep::Kind::Collective});
      ps.name = s.at("name").get<std::string>();
      ps.cost = costFrom(s.at("cost"));
      if (ps.kind == PlanStep::Kind::Kernel) {
        static_cast<PlanKernel &>(ps.kernel) = kernelFrom(s.at("kernel"), bodies);
        if (s.contains("collective"))
          ps.collective = collectiveFrom(s.at("collective"));
      } else if (ps.kind == PlanStep::Kind::Matmul)
        ps.matmul = matmulFrom(s.at("matmul"));
      else if (ps.kind == PlanStep::Kind::Collective) {
        ps.collective = collectiveFrom(s.at("collective"));
        if (ps.collective.peer)
          static_cast<PlanKernel &>(ps.kernel) = kernelFrom(s.at("kernel"), bodies);
      } else
        ps.copy = {jsonInteger<int>(s.at("copy").at("src")), jsonInteger<int>(s.at("copy").at("dst"))};
      plan.steps.push_back(std::move(ps));
    }
    at = "plan";
    plan.sharedLaunches = j.at("sharedLaunches").get<std::vector<std::string>>();
    plan.sharedLaunchSavedUs = j.at("sharedLaunchSavedUs").get<double>();
    plan.arenaBytes = jsonInteger<int64_t>(j.at("arenaBytes"));
    plan.workspaceBytes = jsonInteger<int64_t>(j.at("workspaceBytes"));
    // Plans written before programs could be split carry no count: one GPU.
    plan.ranks = j.contains("ranks") ? jsonInteger<int>(j.at("ranks")) : 1;
    if (j.contains("inputShards"))
      plan.inputShards = j.at("inputShards").get<std::vector<int64_t>>();
    if (j.contains("outputShards"))
      plan.outputShards = j.at("outputShards").get<std::vector<int64_t>>();
    plan.collectiveScratchBytes = j.contains("collectiveScratchBytes")
                                      ? jsonInteger<int64_t>(j.at("collectiveScratchBytes"))
                                      : 0;
    if (j.contains("padding")) {
      at = "padding";
      const json &pad = j.at("padding");
      for (const auto &[name, size] : pad.at("at").items())
        plan.paddedAt[name] = jsonInteger<int64_t>(size);
      for (const auto &[name, bound] : pad.at("bounds").items())
        plan.sizeBounds[name] = jsonInteger<int64_t>(bound);
      plan.padding.sizeArgs = pad.at("sizeArgs").get<std::vector<std::string>>();
      plan.padding.argDims = pad.at("argDims").get<std::vector<std::vector<std::string>>>();
      plan.padding.resultDims = pad.at("resultDims").get<std::vector<std::vector<std::string>>>();
      for (const TensorSpec &t : plan.inputs)
        plan.padding.argShapes.push_back(t.shape);
    }
  } catch (const std::exception &e) {
    return rt::errorf("%s: %s: %s", where.c_str(), at.c_str(), jsonWhy(e).c_str());
  }
  // The runtime pairs the k-th distinct body in plan order with the k-th
  // cubin: the bodies must be numbered so, each used.
  KernelBodies kb = kernelBodies(plan);
  if (kb.firstStep.size() != bodies.size())
    return rt::errorf("%s: %zu kernel bodies, %zu of them used", where.c_str(), bodies.size(),
                      kb.firstStep.size());
  for (size_t b = 0; b < bodies.size(); ++b)
    if (plan.steps[kb.firstStep[b]].kernel.source != bodies[b])
      return rt::errorf("%s: kernel bodies not numbered in the order the plan first uses them",
                        where.c_str());
  if (rt::Error err = checkPlan(plan, where))
    return std::move(err);
  return std::move(plan);
}

namespace {
/// Elements from a matrix's first to its last (all batches), -1 when its
/// sizes are out of range.
int64_t extent(const MatrixLayout &l) {
  const int64_t limit = kMaxBytes;
  if (l.rows < 0 || l.cols < 0 || l.ld < 0 || l.batch < 1 || l.batchStride < 0 ||
      l.rows > limit || l.cols > limit || l.ld > limit || l.batch > limit ||
      l.batchStride > limit)
    return -1;
  if (l.rows == 0 || l.cols == 0)
    return 0;
  int64_t inner = l.rowMajor ? l.cols : l.rows, outer = l.rowMajor ? l.rows : l.cols;
  // Each product stays below 2^80 / 2^40 ... checked in 128 bits.
  __int128 e = __int128(outer - 1) * l.ld + inner;
  if (l.batch > 1)
    e += __int128(l.batch - 1) * l.batchStride;
  return e > limit ? -1 : int64_t(e);
}
} // namespace

namespace {
/// A padded plan's sizes and signature agree with each other and with its
/// inputs and outputs: every name has a size and a bound with 1 <= size <=
/// bound, every size argument is an i32 scalar, and every marked dim is a
/// named size's padded size (so that a call's tensors fit the buffers).
rt::Error checkPadding(const PlanDesc &plan) {
  const PaddedSignature &sig = plan.padding;
  if (plan.paddedAt.empty())
    return sig.padded() || !plan.sizeBounds.empty()
               ? rt::Error::failure("dims that vary without the sizes they are compiled at")
               : rt::Error::success();
  if (plan.paddedAt.size() != plan.sizeBounds.size())
    return rt::Error::failure("sizes and bounds name different dims");
  for (const auto &[name, size] : plan.paddedAt) {
    auto bound = plan.sizeBounds.find(name);
    if (bound == plan.sizeBounds.end())
      return rt::Error::failure("'" + printable(name) + "' has a size but no bound");
    if (size < 1 || size > bound->second || bound->second > kMaxPaddedBound)
      return rt::Error::failure("'" + printable(name) + "' is compiled at " +
                                std::to_string(size) + " with a bound of " +
                                std::to_string(bound->second));
    if (paddedSize(size, bound->second) != size)
      return rt::Error::failure("'" + printable(name) + "' is compiled at " +
                                std::to_string(size) + ", which is not a padded size");
  }
  if (plan.ranks > 1)
    return rt::Error::failure("sizes that vary in a plan split over ranks");
  for (const auto &[name, size] : plan.paddedAt)
    // What `--bind NAME=N` can give (the frontends' rule for dim names).
    if (name.empty() || name.find_first_of(",=") != std::string::npos ||
        printable(name) != name || name.front() == ' ' || name.back() == ' ')
      return rt::Error::failure("'" + printable(name) + "' is not a size name --bind can give");
  auto named = [&](const std::string &n) { return n.empty() || plan.paddedAt.count(n); };
  if (sig.sizeArgs.size() != plan.inputs.size() || sig.argDims.size() != plan.inputs.size() ||
      sig.resultDims.size() != plan.outputs.size())
    return rt::Error::failure("its signature does not match the inputs and outputs");
  // The size arguments come after the graph's own inputs (call input i is
  // plan input i).
  for (size_t i = 1; i < sig.sizeArgs.size(); ++i)
    if (sig.sizeArgs[i - 1].size() && sig.sizeArgs[i].empty())
      return rt::Error::failure("input " + std::to_string(i) + " follows a size argument");
  auto dimsOk = [&](const std::vector<std::string> &dims, const TensorSpec &t) {
    if (dims.size() != t.shape.size())
      return false;
    for (size_t d = 0; d < dims.size(); ++d)
      if (!named(dims[d]) || (!dims[d].empty() && t.shape[d] != plan.paddedAt.at(dims[d])))
        return false;
    return true;
  };
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    if (!named(sig.sizeArgs[i]))
      return rt::Error::failure("input " + std::to_string(i) + " takes a size not named");
    if (!sig.sizeArgs[i].empty() &&
        (plan.inputs[i].dtype != DType::I32 || !plan.inputs[i].shape.empty()))
      return rt::Error::failure("input " + std::to_string(i) + " takes a size but is not an i32 scalar");
    if (!dimsOk(sig.argDims[i], plan.inputs[i]))
      return rt::Error::failure("input " + std::to_string(i) + "'s marked dims do not match it");
  }
  for (size_t i = 0; i < plan.outputs.size(); ++i)
    if (!dimsOk(sig.resultDims[i], plan.outputs[i]))
      return rt::Error::failure("output " + std::to_string(i) + "'s marked dims do not match it");
  return rt::Error::success();
}
} // namespace

rt::Error checkPlan(const PlanDesc &plan, const std::string &where) {
  auto fail = [&](const std::string &at, const std::string &why) {
    return rt::Error::failure(where + ": " + at + ": " + why);
  };
  if (plan.arenaBytes < 0 || plan.arenaBytes > kMaxBytes || plan.workspaceBytes < 0 ||
      plan.workspaceBytes > kMaxBytes)
    return fail("plan", "arena or workspace size out of range");
  if (plan.ranks < 1 || plan.ranks > 64)
    return fail("plan", "a count of ranks out of range");
  if (plan.collectiveScratchBytes < 0 || plan.collectiveScratchBytes > kMaxBytes)
    return fail("plan", "collective scratch size out of range");
  auto shardsOk = [&](const std::vector<int64_t> &shards, const std::vector<TensorSpec> &specs) {
    if (shards.empty())
      return plan.ranks == 1;
    if (shards.size() != specs.size())
      return false;
    for (size_t i = 0; i < shards.size(); ++i)
      if (shards[i] < -1 || shards[i] >= int64_t(specs[i].shape.size()))
        return false;
    return true;
  };
  if (!shardsOk(plan.inputShards, plan.inputs) || !shardsOk(plan.outputShards, plan.outputs))
    return fail("plan", "the split of the inputs or outputs does not match them");
  if (rt::Error err = checkPadding(plan))
    return fail("padding", err.message());
  auto bufferOk = [&](int id) { return id >= 0 && size_t(id) < plan.buffers.size(); };
  std::vector<bool> inputSeen(plan.inputs.size()), outputSeen(plan.outputs.size());
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const PlanBuffer &b = plan.buffers[i];
    std::string at = "buffer " + std::to_string(i);
    if (b.kind == PlanBuffer::Kind::Temp) {
      if (b.arenaOffset < 0 || b.arenaOffset % 16 != 0 ||
          b.arenaOffset > plan.arenaBytes - b.tensor.bytes())
        return fail(at, "a temporary outside the arena");
      continue;
    }
    const auto &specs = b.kind == PlanBuffer::Kind::Input ? plan.inputs : plan.outputs;
    auto &seen = b.kind == PlanBuffer::Kind::Input ? inputSeen : outputSeen;
    if (b.index < 0 || size_t(b.index) >= specs.size())
      return fail(at, "graph input or output " + std::to_string(b.index) + " does not exist");
    if (specs[b.index].bytes() != b.tensor.bytes())
      return fail(at, "its size differs from the graph's tensor");
    seen[b.index] = true;
  }
  for (size_t i = 0; i < inputSeen.size(); ++i)
    if (!inputSeen[i])
      return fail("plan", "graph input " + std::to_string(i) + " has no buffer");
  for (size_t i = 0; i < outputSeen.size(); ++i)
    if (!outputSeen[i])
      return fail("plan", "graph output " + std::to_string(i) + " has no buffer");
  auto within = [&](int id, int64_t offset, int64_t bytes) {
    return id >= 0 && size_t(id) < plan.buffers.size() && offset >= 0 && bytes >= 0 &&
           offset <= plan.buffers[id].tensor.bytes() &&
           bytes <= plan.buffers[id].tensor.bytes() - offset;
  };
  // What every generated kernel's launch must satisfy; "" where it does.
  auto kernelProblem = [&](const PlanKernel &k) -> std::string {
    for (int a : k.args)
      if (!bufferOk(a))
        return "argument buffer " + std::to_string(a) + " does not exist";
    if (k.inputs > k.args.size())
      return "more inputs than arguments";
    if (k.tensorMaps.size() > 8 || k.args.size() + 1 + k.tensorMaps.size() > 64)
      return "more parameters than a launch takes";
    for (const TensorMapParam &m : k.tensorMaps) {
      if (m.arg < 0 || size_t(m.arg) >= k.args.size())
        return "a tensor map of an argument that does not exist";
      // What the map may reach: its dims at its strides, from its offset.
      const uint64_t limit = uint64_t(kMaxBytes);
      if (m.elementBytes != 2 || m.rows > limit || m.cols > limit || m.batches == 0 ||
          m.batches > limit || m.rowStrideBytes > limit || m.batchStrideBytes > limit ||
          m.offsetBytes > limit || m.boxRows == 0 || m.boxCols == 0 || m.boxRows > 256 ||
          m.boxCols > 256)
        return "a tensor map out of range";
      uint64_t reach = m.rows == 0 || m.cols == 0
                           ? 0
                           : (m.batches - 1) * m.batchStrideBytes +
                                 (m.rows - 1) * m.rowStrideBytes + m.cols * 2;
      if (!within(k.args[m.arg], int64_t(m.offsetBytes), int64_t(reach)))
        return "a tensor map reaches past its buffer";
    }
    if (k.readsBeforeWait < -1 || k.readsBeforeWait > int(k.tensorMaps.size()))
      return "readsBeforeWait out of range";
    if (k.grid == 0 || k.gridY == 0 || k.gridZ == 0 || k.gridY > 65535 || k.gridZ > 65535 ||
        k.block == 0 || k.block > 1024 || k.clusterX == 0 || k.clusterX > 16 ||
        k.grid % k.clusterX != 0)
      return "a launch shape the driver cannot take";
    if (k.scratchZeroBytes > k.scratchBytes || k.scratchZeroOnce > k.scratchBytes ||
        k.scratchZeroBytes % 4 != 0)
      return "scratch sizes out of range";
    if (k.entry.empty() || k.source.empty())
      return "a kernel without an entry point or body";
    return "";
  };
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep &s = plan.steps[i];
    std::string at = "step " + std::to_string(i) + " (" + s.name + ")";
    switch (s.kind) {
    case PlanStep::Kind::Kernel: {
      if (std::string why = kernelProblem(s.kernel); !why.empty())
        return fail(at, why);
      const PlanCollective &c = s.collective;
      if (!c.peer)
        break;
      // An all-reduce ahead of the kernel: of one of its inputs, in place
      // (NCCL's fallback), its blocks no more than the region's.
      const std::vector<int> &args = s.kernel.args;
      if (c.op != "all_reduce" || c.reduce != "sum" || c.src != c.dst ||
          std::find(args.begin(), args.begin() + std::ptrdiff_t(s.kernel.inputs), c.src) ==
              args.begin() + std::ptrdiff_t(s.kernel.inputs))
        return fail(at, "an all-reduce ahead of a kernel that is not a sum of one of its inputs");
      if (c.ranks != plan.ranks || c.ranks < 2 || c.ranks > peer::kMaxRanks)
        return fail(at, "a collective for another count of ranks than the plan's");
      const TensorSpec &t = plan.buffers[c.src].tensor;
      if (!isFloat(t.dtype) || t.bytes() > peer::kMaxBytes || s.kernel.grid > unsigned(peer::kMaxBlocks) ||
          s.kernel.gridY != 1 || s.kernel.gridZ != 1 || s.kernel.clusterX != 1 ||
          s.kernel.cooperative || !s.kernel.tensorMaps.empty() || s.kernel.scratchBytes != 0)
        return fail(at, "an all-reduce ahead of a kernel that its blocks cannot take (floats, "
                        "at most 512 KB, 32 blocks)");
      break;
    }
    case PlanStep::Kind::Matmul: {
      const PlanMatmul &m = s.matmul;
      if (!bufferOk(m.a) || !bufferOk(m.b) || !bufferOk(m.c) ||
          (m.residual != -1 && !bufferOk(m.residual)) || (m.bias != -1 && !bufferOk(m.bias)))
        return fail(at, "an operand buffer that does not exist");
      const int64_t elt = dtypeBytes(m.desc.dtype);
      int64_t ea = extent(m.desc.a), eb = extent(m.desc.b), ec = extent(m.desc.c);
      if (ea < 0 || eb < 0 || ec < 0)
        return fail(at, "a matrix layout out of range");
      // The result's buffer is C; a residual is read with C's layout.
      if (!within(m.a, m.aOffset, ea * elt) || !within(m.b, m.bOffset, eb * elt) ||
          !within(m.c, 0, ec * elt) ||
          (m.residual >= 0 && !within(m.residual, m.residualOffset, ec * elt)) ||
          (m.bias >= 0 && !within(m.bias, m.biasOffset, m.desc.c.cols * elt)))
        return fail(at, "an operand reaches past its buffer");
      break;
    }
    case PlanStep::Kind::Copy:
      if (!bufferOk(s.copy.src) || !bufferOk(s.copy.dst))
        return fail(at, "a copy of a buffer that does not exist");
      if (plan.buffers[s.copy.src].tensor.bytes() < plan.buffers[s.copy.dst].tensor.bytes())
        return fail(at, "a copy from a smaller buffer");
      break;
    case PlanStep::Kind::Collective: {
      const PlanCollective &c = s.collective;
      if (!bufferOk(c.src) || !bufferOk(c.dst))
        return fail(at, "a collective on a buffer that does not exist");
      if (c.ranks != plan.ranks || c.ranks < 2)
        return fail(at, "a collective for another count of ranks than the plan's");
      const TensorSpec &in = plan.buffers[c.src].tensor, &out = plan.buffers[c.dst].tensor;
      const bool reduce = c.op == "all_reduce";
      if (!reduce && c.op != "all_gather" && c.op != "reduce_scatter")
        return fail(at, "an unknown collective");
      if (reduce ? (c.reduce != "sum" && c.reduce != "max" && c.reduce != "min")
                 : (c.axis < 0 || c.axis >= int64_t(in.shape.size())))
        return fail(at, "a collective's reduction or axis out of range");
      if (in.dtype != out.dtype ||
          (reduce ? in.bytes() != out.bytes()
                  : c.op == "all_gather" ? out.bytes() != in.bytes() * c.ranks
                                         : in.bytes() != out.bytes() * c.ranks))
        return fail(at, "a collective's buffers of sizes that do not match");
      if (collectiveScratchBytes(c, in, out) > plan.collectiveScratchBytes)
        return fail(at, "a collective needs more scratch than the plan has");
      if (c.peer) {
        // The one-shot kernel: its region holds peer::kMaxBytes, a chunk a block.
        if (!reduce || !isFloat(in.dtype) || in.bytes() > peer::kMaxBytes ||
            c.ranks > peer::kMaxRanks)
          return fail(at, "a one-shot all-reduce of a tensor its kernel does not take (an "
                          "all-reduce of floats, at most 512 KB, 8 ranks)");
        if (std::string why = kernelProblem(s.kernel); !why.empty())
          return fail(at, why);
        if (s.kernel.args != std::vector<int>{c.src, c.dst} ||
            s.kernel.grid != unsigned(peer::blocksFor(in.bytes())) || s.kernel.clusterX != 1 ||
            !s.kernel.tensorMaps.empty() || s.kernel.scratchBytes != 0 || s.kernel.cooperative)
          return fail(at, "a one-shot all-reduce's kernel does not match its collective");
      }
      break;
    }
    }
  }
  return rt::Error::success();
}

} // namespace fusec
