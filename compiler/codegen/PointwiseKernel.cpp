//===- PointwiseKernel.cpp - the pointwise kernel family ------------------===//
//
// One thread computes VEC consecutive elements of the domain per step of a
// grid-stride loop (grid sized from the SM count). Inputs read contiguously
// along the last domain dim become one 16-byte vector load each; inputs that do
// not vary along it (a bias broadcast over rows, a per-row scale) are loaded
// once per step; anything else is gathered per element. Outputs are stored as
// vectors.
//
// When the last dim does not allow 16-byte vectors (an odd row length), the
// steps run over the flattened domain instead: the tensors laid out like the
// domain (the outputs and same-shaped inputs) still move as 16-byte vectors,
// each lane finds its own domain index, broadcast operands are gathered per
// lane (they hit in L1), and the last numel % VEC elements are a scalar tail.
// Scalar accesses leave too few bytes in flight per thread to cover HBM
// latency (docs/kernels.md, "Grids").
//
// A group reading a transpose goes to PointwiseTranspose.cpp instead.
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

/// The code of one step: VEC elements starting at linear index `lin`. With
/// `flat`, lanes may cross rows (see the file header).
std::string stepCode(FusionOp fusion, ArrayRef<int64_t> domain, int64_t vec, bool flat) {
  int rank = domain.size();
  int last = rank - 1;
  std::vector<std::string> vars;
  for (int d = 0; d < rank; ++d)
    vars.push_back("i" + std::to_string(d));
  ElementEmitter e(fusion, vars, "      ");
  HoistedLoads hoist{last, vec, "ib", "    "};  // per-step loads, before the lane loop
  std::string V = std::to_string(vec);
  e.load = [&](ElementEmitter &em, BlockArgument arg, const Index &idx) -> std::string {
    if (!flat)
      return hoist.load(em, arg, idx);
    // Laid out like the domain: element `lin + l` is at offset `lin + l`.
    ArrayRef<int64_t> shape = shapeOf(arg);
    bool same = shape == domain;
    for (int d = 0; same && d < rank; ++d)
      same = idx[d].text.empty() && idx[d].dom == d && idx[d].mul == 1 && idx[d].add == 0;
    if (same)
      return hoist.vectorLoad(em, arg, "lin");
    return "fz_load1(" + ElementEmitter::argName(arg.getArgNumber()) + ", " +
           em.offset(shape, idx) + ")";
  };

  // Lane loop body: every output at the identity index.
  Index id = ElementEmitter::identity(rank);
  std::vector<std::string> results;
  for (Value v : fusion.getYield().getValues())
    results.push_back(e.emit(v, id));
  std::string body = e.takeCode();

  // Domain indices from a linear index: of the first lane (the last dim is
  // completed per lane), or of every lane when flat.
  auto indices = [&](const std::string &from, const std::string &lastName,
                     const std::string &in) {
    std::string s, rest = from;
    for (int d = last; d >= 0; --d) {
      std::string name = d == last ? lastName : vars[d];
      s += in + "const fz_idx " + name + " = " +
           (d == 0 ? rest : rest + " % " + std::to_string(domain[d])) + ";\n";
      if (d > 0)
        rest = "(" + rest + " / " + std::to_string(domain[d]) + ")";
    }
    return s;
  };
  std::string step = "    const fz_idx lin = t * " + V + ";\n";
  if (!flat)
    step += indices("lin", "ib", "    ");
  for (unsigned o = 0; o < results.size(); ++o)
    step += "    " + std::string(computeType(dtypeOf(fusion.getResult(o)))) + " r" +
            std::to_string(o) + "[" + V + "];\n";
  step += hoist.pre;
  step += "#pragma unroll\n    for (int l = 0; l < " + V + "; ++l) {\n";
  if (flat)
    step += indices("(lin + l)", vars[last], "      ");
  else if (rank > 0)
    step += "      const fz_idx " + vars[last] + " = ib + l;\n";
  step += body;
  for (unsigned o = 0; o < results.size(); ++o)
    step += "      r" + std::to_string(o) + "[l] = " + results[o] + ";\n";
  step += "    }\n";
  for (unsigned o = 0; o < results.size(); ++o)
    step += "    fz_store<" + std::string(storageType(dtypeOf(fusion.getResult(o)))) + ", " + V +
            ">(out" + std::to_string(o) + ", lin, r" + std::to_string(o) + ");\n";
  return step;
}

} // namespace

llvm::Expected<KernelSpec> generatePointwise(FusionOp fusion, const DeviceProfile &profile) {
  KernelSpec spec;
  spec.name = fusion->getAttrOfType<StringAttr>("name").str();
  spec.family = "pointwise";
  ArrayRef<int64_t> domain = fusion->getAttrOfType<DenseI64ArrayAttr>("domain").asArrayRef();
  int64_t numel = shape::numElements(domain);
  int64_t bytes = maxElementBytes(fusion);
  int64_t vec = vectorWidth(fusion, domain);
  // Flat 16-byte steps when the rows do not allow them and there is enough
  // work for the tail not to matter.
  int64_t flatVec = 16 / bytes;
  bool flat = domain.size() > 0 && vec < flatVec && numel >= 64 * flatVec;
  if (flat)
    vec = flatVec;
  std::string idxT = indexType(fusion);
  std::string step = stepCode(fusion, domain, vec, flat);

  // A grid-stride loop. Wide vectors (16 bytes) get one step per thread and a
  // grid that covers every step: the block scheduler then balances the tail,
  // faster than a grid of SMs x 8 blocks (docs/kernels.md, "Grids"). Narrow
  // (scalar) accesses keep the capped grid, whose threads loop, since there
  // the extra blocks cost more than they save.
  int64_t steps = numel / vec;
  int64_t tail = numel - steps * vec;
  bool wide = vec * bytes >= 16;
  spec.text.qualifiers = "__launch_bounds__(" + std::to_string(kThreads) + ")";
  spec.text.params = parameters(fusion);
  std::string src;
  src += "  typedef " + idxT + " fz_idx;\n";
  src += "  for (fz_idx t = blockIdx.x * (fz_idx)blockDim.x + threadIdx.x; t < " +
         std::to_string(steps) + "; t += (fz_idx)gridDim.x * blockDim.x) {\n" + step + "  }\n";
  if (tail > 0) {
    // The last elements one at a time, by the first threads of the grid.
    src += "  if (blockIdx.x == 0 && threadIdx.x < " + std::to_string(tail) + ") {\n" +
           "    const fz_idx t = " + std::to_string(steps * vec) + " + threadIdx.x;\n" +
           stepCode(fusion, domain, 1, false) + "  }\n";
  }

  int64_t blocks = (steps + kThreads - 1) / kThreads;
  int64_t cap = wide ? int64_t(1) << 31 : static_cast<int64_t>(profile.smCount) * (2048 / kThreads);
  spec.grid = static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, cap)));
  spec.block = kThreads;
  spec.text.body = src;
  spec.schedule = std::string(flat ? "flat " : "") + "vec " + std::to_string(vec) + ", " +
                  std::to_string(kThreads) + " threads x " + std::to_string(spec.grid) +
                  " blocks over " + std::to_string(steps) + " steps" +
                  (tail ? " + " + std::to_string(tail) + " tail" : "");
  return spec;
}

} // namespace fusec::codegen::detail
