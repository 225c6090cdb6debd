//===- PointwiseKernel.cpp - the pointwise kernel family ------------------===//
//
// One thread computes VEC consecutive elements of the domain per step of a
// grid-stride loop (grid sized from the SM count). Inputs read contiguously
// along the last domain dim become one 16-byte vector load each; inputs that do
// not vary along it (a bias broadcast over rows, a per-row scale) are loaded
// once per step; anything else is gathered per element. Outputs are stored as
// vectors.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/ElementEmitter.h"
#include "compiler/codegen/KernelSpec.h"
#include "compiler/codegen/ScalarOps.h"
#include "compiler/shape/ShapeRules.h"

#include <algorithm>
#include <map>

using namespace mlir;

namespace fusec::codegen::detail {
namespace {

constexpr unsigned kThreads = 256;

/// Largest power-of-two vector width (elements) whose bytes fit 16 and that
/// divides the last domain dim.
int64_t vectorWidth(FusionOp fusion, ArrayRef<int64_t> domain) {
  if (domain.empty())
    return 1;
  int64_t vec = 16 / maxElementBytes(fusion);
  while (vec > 1 && domain.back() % vec != 0)
    vec /= 2;
  return vec;
}

} // namespace

llvm::Expected<KernelSpec> generatePointwise(FusionOp fusion, const DeviceProfile &profile) {
  KernelSpec spec;
  spec.name = fusion->getAttrOfType<StringAttr>("name").str();
  spec.family = "pointwise";
  ArrayRef<int64_t> domain = fusion->getAttrOfType<DenseI64ArrayAttr>("domain").asArrayRef();
  int rank = domain.size();
  int64_t numel = shape::numElements(domain);
  int64_t vec = vectorWidth(fusion, domain);
  std::string idxT = indexType(fusion);
  int last = rank - 1;

  std::vector<std::string> vars;
  for (int d = 0; d < rank; ++d)
    vars.push_back("i" + std::to_string(d));
  ElementEmitter e(fusion, vars, "      ");
  std::string pre;  // per-step loads hoisted out of the lane loop
  std::map<std::string, std::string> hoisted;
  e.load = [&](ElementEmitter &em, BlockArgument arg, const Index &idx) -> std::string {
    ArrayRef<int64_t> shape = shapeOf(arg);
    std::string ptr = ElementEmitter::argName(arg.getArgNumber());
    std::optional<int64_t> c = vec > 1 ? em.coefficient(shape, idx, last) : std::nullopt;
    if (c && *c == 0) {
      std::string off = em.offsetAt(shape, idx, last, "ib");
      std::string &name = hoisted["s:" + ptr + off];
      if (name.empty()) {
        name = em.fresh("h");
        pre += "    const " + std::string(computeType(dtypeOf(arg))) + " " + name +
               " = fz_load1(" + ptr + ", " + off + ");\n";
      }
      return name;
    }
    if (c && *c == 1 && em.vectorizable(shape, idx, last, vec)) {
      std::string off = em.offsetAt(shape, idx, last, "ib");
      std::string &name = hoisted["v:" + ptr + off];
      if (name.empty()) {
        name = em.fresh("h");
        pre += "    " + std::string(computeType(dtypeOf(arg))) + " " + name + "[" +
               std::to_string(vec) + "];\n    fz_load<" + storageType(dtypeOf(arg)) + ", " +
               std::to_string(vec) + ">(" + ptr + ", " + off + ", " + name + ");\n";
      }
      return name + "[l]";
    }
    return "fz_load1(" + ptr + ", " + em.offset(shape, idx) + ")";
  };

  // Lane loop body: every output at the identity index.
  Index id = ElementEmitter::identity(rank);
  std::vector<std::string> results;
  for (Value v : fusion.getYield().getValues())
    results.push_back(e.emit(v, id));
  std::string body = e.takeCode();

  // One step: VEC elements starting at linear index t * VEC.
  std::string V = std::to_string(vec);
  std::string step = "    const fz_idx lin = t * " + V + ";\n";
  // Domain indices of the first lane (the last one is completed per lane).
  std::string rest = "lin";
  for (int d = last; d >= 0; --d) {
    std::string name = d == last ? "ib" : vars[d];
    if (d == 0)
      step += "    const fz_idx " + name + " = " + rest + ";\n";
    else
      step += "    const fz_idx " + name + " = " + rest + " % " + std::to_string(domain[d]) + ";\n";
    if (d > 0)
      rest = "(" + rest + " / " + std::to_string(domain[d]) + ")";
  }
  for (unsigned o = 0; o < results.size(); ++o)
    step += "    " + std::string(computeType(dtypeOf(fusion.getResult(o)))) + " r" +
            std::to_string(o) + "[" + V + "];\n";
  step += pre;
  step += "#pragma unroll\n    for (int l = 0; l < " + V + "; ++l) {\n";
  if (rank > 0)
    step += "      const fz_idx " + vars[last] + " = ib + l;\n";
  step += body;
  for (unsigned o = 0; o < results.size(); ++o)
    step += "      r" + std::to_string(o) + "[l] = " + results[o] + ";\n";
  step += "    }\n";
  for (unsigned o = 0; o < results.size(); ++o)
    step += "    fz_store<" + std::string(storageType(dtypeOf(fusion.getResult(o)))) + ", " + V +
            ">(out" + std::to_string(o) + ", lin, r" + std::to_string(o) + ");\n";

  // A grid-stride loop. Wide vectors (16 bytes) get one step per thread and a
  // grid that covers every step: the block scheduler then balances the tail,
  // which measured 95% of copy bandwidth on an H100 against 88% for a grid of
  // SMs x 8 blocks (bench/NOTES.md). Narrow (scalar) accesses keep the capped
  // grid, whose threads loop, since there the extra blocks cost more than they save.
  int64_t steps = numel / vec;
  bool wide = vec * maxElementBytes(fusion) >= 16;
  std::string src;
  src += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(kThreads) + ")\n" +
         spec.name + "(" + parameterList(fusion) + ") {\n";
  src += "  typedef " + idxT + " fz_idx;\n";
  src += "  for (fz_idx t = blockIdx.x * (fz_idx)blockDim.x + threadIdx.x; t < " +
         std::to_string(steps) + "; t += (fz_idx)gridDim.x * blockDim.x) {\n" + step + "  }\n}\n";

  int64_t blocks = (steps + kThreads - 1) / kThreads;
  int64_t cap = wide ? int64_t(1) << 31 : static_cast<int64_t>(profile.smCount) * (2048 / kThreads);
  spec.grid = static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, cap)));
  spec.block = kThreads;
  spec.source = src;
  spec.schedule = "vec " + V + ", " + std::to_string(kThreads) + " threads x " +
                  std::to_string(spec.grid) + " blocks over " + std::to_string(steps) + " steps";
  return spec;
}

} // namespace fusec::codegen::detail
