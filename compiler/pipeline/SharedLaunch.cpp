//===- SharedLaunch.cpp - independent small kernels in one launch ---------===//
//
// At decode sizes many kernels are launch-bound: a few microseconds of work
// behind a launch and the previous kernel's tail. Two neighbouring kernels
// of which neither reads or writes what the other writes (the decode
// attention scores against the cache and against the new key) can share one
// launch: the grid is both grids side by side along x, and each block runs
// the body of the kernel its blockIdx.x falls in. Both then run at once.
//
// Each part's body becomes a device function composed from its kernel's
// structure (KernelText), not cut out of printed text: it takes its block
// index as a parameter, under which a local blockIdx and gridDim stand for
// its own part of the grid. Kernels with dynamic shared memory, scratch,
// clusters, tensor maps, a third grid dimension, other block sizes or grid
// rows, static shared memory in both, or an all-reduce ahead (its blocks
// meet their peers by block index) are left alone.
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

bool shareable(const PlanStep &s) {
  const PlanKernel &k = s.kernel;
  return s.kind == PlanStep::Kind::Kernel && !s.collective.peer && k.sharedBytes == 0 &&
         k.clusterX == 1 &&
         !k.cooperative && k.scratchBytes == 0 && k.tensorMaps.empty() && k.gridZ == 1 &&
         k.text.moreParams.empty() && !k.text.waitPerRole;
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
  const KernelText &ta = a.kernel.text, &tb = b.kernel.text;
  // Both bodies' static shared memory would add up: at most one may have
  // any (each alone fits). The runtime binds at most 64 buffers per kernel
  // (Executable.cpp).
  if ((ta.staticShared && tb.staticShared) || ta.params.size() != a.kernel.args.size() ||
      tb.params.size() != b.kernel.args.size() || ta.params.size() + tb.params.size() > 64 ||
      !independent(a, b))
    return std::nullopt;
  // A part: its kernel's body as a device function whose blocks count from
  // 0 (fz_bx) over its own grid.
  auto part = [](const KernelText &t, const std::string &fn, unsigned grid) {
    std::string params;
    for (const KernelParam &p : t.params)
      params += p.type + p.name + ", ";
    return t.helpers + "static __device__ __forceinline__ void " + fn + "(" + params +
           "const unsigned fz_bx) {\n" +
           "  const uint3 blockIdx = make_uint3(fz_bx, ::blockIdx.y, ::blockIdx.z);\n" +
           "  const dim3 gridDim(" + std::to_string(grid) + "u, ::gridDim.y, ::gridDim.z);\n" +
           t.body + "}\n\n";
  };
  // The shared entry's parameters: each part's, prefixed apart.
  auto call = [](const std::string &fn, const KernelText &t, const std::string &prefix,
                 const std::string &bx, std::vector<KernelParam> &params) {
    std::string c = fn + "(";
    for (const KernelParam &p : t.params) {
      params.push_back({p.type, prefix + p.name});
      c += prefix + p.name + ", ";
    }
    return c + bx + ");";
  };
  PlanStep m;
  m.kind = PlanStep::Kind::Kernel;
  m.name = a.name + "_" + b.name;
  KernelText &t = m.kernel.text;
  // The parts' headers name their plan positions: they go in the joined
  // kernel's header, so that the compiled body is the same at any position.
  t.header = ta.header + tb.header + "// " + a.name + " and " + b.name +
             " read and write nothing of each other's: one launch, their grids side by side "
             "along x (fz_part0, fz_part1).\n";
  t.helpers = part(ta, "fz_part0", a.kernel.grid) + part(tb, "fz_part1", b.kernel.grid);
  t.qualifiers = "__launch_bounds__(" + std::to_string(a.kernel.block) + ")";
  std::string callA = call("fz_part0", ta, "p0_", "blockIdx.x", t.params);
  std::string callB = call("fz_part1", tb, "p1_",
                           "blockIdx.x - " + std::to_string(a.kernel.grid) + "u", t.params);
  t.staticShared = ta.staticShared || tb.staticShared;
  t.body = "  if (blockIdx.x < " + std::to_string(a.kernel.grid) + "u)\n    " + callA +
           "\n  else\n    " + callB + "\n";
  m.kernel.entry = a.kernel.entry + "_" + b.kernel.entry;
  m.kernel.source = codegen::compiledSource(t, m.kernel.entry);
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
