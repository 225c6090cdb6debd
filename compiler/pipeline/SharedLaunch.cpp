//===- SharedLaunch.cpp - independent small kernels in one launch ---------===//
//
// At decode sizes many kernels are launch-bound: a few microseconds of work
// behind a launch and the previous kernel's tail. Two neighbouring kernels
// of which neither reads or writes what the other writes (the decode
// attention scores against the cache and against the new key) can share one
// launch: the grid is both grids side by side along x, and each block runs
// the body of the kernel its blockIdx.x falls in. Both then run at once.
//
// The bodies become device functions of the kernel's own text, with
// blockIdx.x and gridDim.x replaced by their part's: generated kernels name
// them only as such. Kernels with dynamic shared memory, scratch, clusters,
// tensor maps, a third grid dimension, other block sizes or grid rows, or
// static shared memory in both are left alone.
//
//===----------------------------------------------------------------------===//
#include "compiler/pipeline/SharedLaunch.h"

#include "compiler/codegen/KernelSpec.h"

#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>

namespace fusec {
namespace {

/// A joined launch's schedule: kSharedSchedule + "a (a's schedule)" +
/// kPartSeparator + "b (b's schedule)"; kernelSchedule() reads it back.
constexpr const char *kSharedSchedule = "one launch: ";
constexpr const char *kPartSeparator = " | ";

/// A kernel's source cut into the prelude before it, its name, parameter
/// list and body (between the braces, after the wait for the prior grid).
struct KernelText {
  std::string prelude, header, params, body;
};

std::optional<KernelText> cut(const std::string &source, const std::string &name) {
  size_t at = source.find("extern \"C\" __global__");
  if (at == std::string::npos || source.find("extern \"C\" __global__", at + 1) != std::string::npos)
    return std::nullopt;
  size_t open = source.find("\n" + name + "(", at);
  if (open == std::string::npos)
    return std::nullopt;
  open += name.size() + 2;
  size_t close = source.find(") {\n", open);
  size_t end = source.rfind('}');
  if (close == std::string::npos || end == std::string::npos || end < close)
    return std::nullopt;
  KernelText k;
  // The header comment ("// kernel k2_matmul (matmul)", its nodes, bytes and
  // schedule) is the kernel's own; the prelude before it is shared.
  size_t header = source.rfind("// kernel " + name + " ", at);
  if (header == std::string::npos)
    header = at;
  k.prelude = source.substr(0, header);
  k.header = source.substr(header, at - header);
  k.params = source.substr(open, close - open);
  k.body = source.substr(close + 4, end - (close + 4));
  const std::string wait = codegen::detail::kAfterPrior;
  if (size_t w = k.body.find(wait); w != std::string::npos)
    k.body.erase(w, wait.size());
  return k;
}

void replaceAll(std::string &s, const std::string &from, const std::string &to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

/// "const fz_bf16 *__restrict__ in0, fz_bf16 *__restrict__ out0" -> the
/// names, and the list with each name prefixed.
std::vector<std::string> paramNames(const std::string &params, const std::string &prefix,
                                    std::string &renamed) {
  std::vector<std::string> names;
  renamed.clear();
  size_t start = 0;
  while (start < params.size()) {
    size_t comma = params.find(", ", start);
    std::string p = params.substr(start, comma == std::string::npos ? std::string::npos
                                                                    : comma - start);
    size_t space = p.find_last_of(" *");
    std::string name = p.substr(space + 1);
    names.push_back(name);
    renamed += (renamed.empty() ? "" : ", ") + p.substr(0, space + 1) + prefix + name;
    if (comma == std::string::npos)
      break;
    start = comma + 2;
  }
  return names;
}

bool shareable(const PlanStep &s) {
  const PlanKernel &k = s.kernel;
  return s.kind == PlanStep::Kind::Kernel && k.sharedBytes == 0 && k.clusterX == 1 &&
         !k.cooperative && k.scratchBytes == 0 && k.tensorMaps.empty() && k.gridZ == 1;
}

/// Whether b reads or writes nothing a writes, and writes nothing a reads.
bool independent(const PlanStep &a, const PlanStep &b) {
  std::set<int> aOut(a.kernel.args.begin() + a.kernel.inputs, a.kernel.args.end());
  std::set<int> bOut(b.kernel.args.begin() + b.kernel.inputs, b.kernel.args.end());
  for (int id : b.kernel.args)
    if (aOut.count(id))
      return false;
  for (int id : a.kernel.args)
    if (bOut.count(id))
      return false;
  return true;
}

/// a and b as one kernel, their grids side by side, if they may share a
/// launch (the file comment says when); `note` says so for explain.
std::optional<PlanStep> joined(const PlanStep &a, const PlanStep &b, double smallUs,
                               std::string &note) {
  if (!shareable(a) || !shareable(b) || a.cost.predictedUs > smallUs ||
      b.cost.predictedUs > smallUs || a.kernel.block != b.kernel.block ||
      a.kernel.gridY != b.kernel.gridY)
    return std::nullopt;
  auto ta = cut(a.kernel.source, a.name), tb = cut(b.kernel.source, b.name);
  // Both bodies' static shared memory would add up: at most one may have
  // any (each alone fits). Code before the kernels that names the grid
  // would see the joined one.
  auto usesShared = [](const KernelText &t) {
    return t.body.find("__shared__") != std::string::npos;
  };
  if (!ta || !tb || ta->prelude != tb->prelude || (usesShared(*ta) && usesShared(*tb)) ||
      ta->prelude.find("blockIdx") != std::string::npos ||
      ta->prelude.find("gridDim") != std::string::npos)
    return std::nullopt;
  std::string pa, pb;
  std::vector<std::string> na = paramNames(ta->params, "p0_", pa);
  std::vector<std::string> nb = paramNames(tb->params, "p1_", pb);
  // The runtime binds at most 64 buffers per kernel (Executable.cpp).
  if (na.size() != a.kernel.args.size() || nb.size() != b.kernel.args.size() ||
      na.size() + nb.size() > 64 || !independent(a, b))
    return std::nullopt;
  auto part = [](const KernelText &t, const std::string &fn, unsigned grid) {
    std::string body = t.body;
    replaceAll(body, "blockIdx.x", "fz_bx");
    replaceAll(body, "gridDim.x", std::to_string(grid) + "u");
    return "static __device__ __forceinline__ void " + fn + "(" + t.params +
           ", const unsigned fz_bx) {\n" + body + "}\n\n";
  };
  auto call = [](const std::string &fn, const std::vector<std::string> &names,
                 const std::string &prefix, const std::string &bx) {
    std::string c = fn + "(";
    for (const std::string &n : names)
      c += prefix + n + ", ";
    return c + bx + ");";
  };
  PlanStep m;
  m.kind = PlanStep::Kind::Kernel;
  m.name = a.name + "_" + b.name;
  m.kernel.source = ta->prelude + ta->header + part(*ta, "fz_" + a.name, a.kernel.grid) +
                    tb->header + part(*tb, "fz_" + b.name, b.kernel.grid) +
                    "// " + a.name + " and " + b.name +
                    " read and write nothing of each other's: one launch, their grids side "
                    "by side along x.\nextern \"C\" __global__ void __launch_bounds__(" +
                    std::to_string(a.kernel.block) + ")\n" + m.name + "(" + pa + ", " + pb +
                    ") {\n" + codegen::detail::kAfterPrior + "  if (blockIdx.x < " +
                    std::to_string(a.kernel.grid) +
                    "u)\n    " + call("fz_" + a.name, na, "p0_", "blockIdx.x") +
                    "\n  else\n    " +
                    call("fz_" + b.name, nb, "p1_",
                         "blockIdx.x - " + std::to_string(a.kernel.grid) + "u") +
                    "\n}\n";
  m.kernel.family = a.kernel.family == b.kernel.family ? a.kernel.family : "shared";
  m.kernel.schedule = kSharedSchedule + a.name + " (" + a.kernel.schedule + ")" + kPartSeparator +
                      b.name + " (" + b.kernel.schedule + ")";
  m.kernel.grid = a.kernel.grid + b.kernel.grid;
  m.kernel.gridY = a.kernel.gridY;
  m.kernel.block = a.kernel.block;
  m.kernel.args = a.kernel.args;
  m.kernel.args.insert(m.kernel.args.end(), b.kernel.args.begin(), b.kernel.args.end());
  m.kernel.inputs = a.kernel.inputs;  // a's (PlanKernel::inputs)
  m.cost = a.cost;
  m.cost.nodes.insert(m.cost.nodes.end(), b.cost.nodes.begin(), b.cost.nodes.end());
  m.cost.ops.insert(m.cost.ops.end(), b.cost.ops.begin(), b.cost.ops.end());
  m.cost.bytesFused += b.cost.bytesFused;
  m.cost.bytesUnfused += b.cost.bytesUnfused;
  m.cost.flops += b.cost.flops;
  m.cost.launchesUnfused += b.cost.launchesUnfused;
  m.cost.predictedUs = std::max(a.cost.predictedUs, b.cost.predictedUs);
  m.cost.unfusedUs += b.cost.unfusedUs;
  char us[96];
  std::snprintf(us, sizeof us,
                ": independent, each predicted at most %.0f us; one launch, predicted %.1f us "
                "instead of %.1f",
                smallUs, m.cost.predictedUs, a.cost.predictedUs + b.cost.predictedUs);
  note = a.name + " + " + b.name + us;
  return m;
}

} // namespace

void shareLaunches(PlanDesc &plan, double smallUs) {
  std::vector<PlanStep> out;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    std::string note;
    std::optional<PlanStep> m;
    if (i + 1 < plan.steps.size())
      m = joined(plan.steps[i], plan.steps[i + 1], smallUs, note);
    if (!m) {
      out.push_back(std::move(plan.steps[i]));
      continue;
    }
    plan.sharedLaunchSavedUs += plan.steps[i].cost.predictedUs +
                                plan.steps[i + 1].cost.predictedUs - m->cost.predictedUs;
    out.push_back(std::move(*m));
    plan.sharedLaunches.push_back(note);
    ++i;  // steps i and i + 1 are in m
  }
  plan.steps = std::move(out);
}

std::string kernelSchedule(const PlanDesc &plan, const std::string &name) {
  for (const PlanStep &step : plan.steps) {
    if (step.kind != PlanStep::Kind::Kernel)
      continue;
    if (step.name == name)
      return step.kernel.schedule;
    llvm::StringRef rest(step.kernel.schedule);
    if (!rest.consume_front(kSharedSchedule))
      continue;
    while (!rest.empty()) {
      auto [part, tail] = rest.split(kPartSeparator);
      if (part.consume_front(name + " (") && part.consume_back(")"))
        return (part + " (sharing one launch with the kernel beside it)").str();
      rest = tail;
    }
  }
  return "";
}

} // namespace fusec
