//===- PointwiseTranspose.cpp - pointwise groups that read a transpose ----===//
//
// An input contiguous along a domain dim P other than the last (the one the
// outputs are contiguous along, L) is a transpose: read per element, the
// lanes of a warp touch one element each of 32 different rows of it, and the
// plain pointwise kernel moves such a copy at a fraction of the copy rate
// (docs/kernels.md, "Layout ops"). Here a block owns a 64 x 64 tile of (P, L)
// for one index of the other dims. It first reads each such input's tile with
// the lanes along P, 16-byte vectors where the input's rows allow, into shared
// memory; then each thread computes VL consecutive outputs along L, taking
// those inputs from the tile (a padded row: at most 2-way bank conflicts), and
// stores them as one vector. The group's other inputs are read as the plain
// pointwise kernel reads them (HoistedLoads: vectors along L where they can).
// transpose(x) + b at 8192^2 bf16 runs at 91% of the copy rate.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/ElementEmitter.h"
#include "compiler/codegen/KernelSpec.h"
#include "compiler/codegen/ScalarOps.h"
#include "compiler/shape/ShapeRules.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

using namespace mlir;

namespace fusec::codegen::detail {
namespace {

constexpr int64_t kTile = 64, kThreads = 256, kRowsPerPass = kThreads / kTile;
/// Static shared memory the tiles may take (the 48 KB static limit, less room).
constexpr int64_t kTileBudget = 40 * 1024;

std::string str(int64_t v) { return std::to_string(v); }

/// The identifiers in a C++ index expression, in order (a literal's suffix,
/// "LL" of "0LL", counts as one).
std::vector<std::string> identifiers(const std::string &expr) {
  auto part = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::vector<std::string> words;
  for (size_t i = 0; i < expr.size();) {
    if (!std::isalpha(static_cast<unsigned char>(expr[i])) && expr[i] != '_') {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < expr.size() && part(expr[j]))
      ++j;
    words.push_back(expr.substr(i, j - i));
    i = j;
  }
  return words;
}

/// Whether every identifier in `expr` is a domain index variable (or a cast or
/// clamp the index arithmetic writes): its offset can then be evaluated again
/// in the tile-loading pass, which defines only those.
bool onlyDomainVars(const std::string &expr, int rank) {
  static const std::set<std::string> words = {"min", "max", "int", "long"};
  for (const std::string &w : identifiers(expr)) {
    bool domainVar = w.size() > 1 && w[0] == 'i' &&
                     std::all_of(w.begin() + 1, w.end(), [](char c) { return std::isdigit(c); }) &&
                     std::stoi(w.substr(1)) < rank;
    if (!domainVar && !words.count(w))
      return false;
  }
  return true;
}

/// The domain dim along which `arg` read at `idx` is contiguous (its last
/// non-unit dim moves with it one element per step), or -1.
int contiguousDim(ArrayRef<int64_t> shape, const Index &idx) {
  for (int i = (int)shape.size() - 1; i >= 0; --i) {
    if (shape[i] == 1)
      continue;
    const IndexExpr &e = idx[i];
    return e.text.empty() && e.dom >= 0 && e.mul == 1 ? e.dom : -1;
  }
  return -1;
}

/// Whether `idx` moves with domain dim `d` (a per-row value broadcast along
/// L does not, and is cheap to read per element: it stays in L1).
bool movesWith(ArrayRef<int64_t> shape, const Index &idx, int d) {
  std::string var = "i" + std::to_string(d);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1)
      continue;
    const IndexExpr &e = idx[i];
    if (e.text.empty() ? e.dom == d : llvm::is_contained(identifiers(e.text), var))
      return true;
  }
  return false;
}

/// Whether `arg` read at `idx` is a transpose worth a tile: contiguous along
/// a dim P other than `last`, moving along `last` too, with an offset the
/// tile-loading pass can evaluate.
int transposedDim(ElementEmitter &em, mlir::BlockArgument arg, const Index &idx, int last,
                  ArrayRef<int64_t> domain) {
  ArrayRef<int64_t> shape = shapeOf(arg);
  int c = contiguousDim(shape, idx);
  if (c < 0 || c == last || domain[c] < 32 || !movesWith(shape, idx, last) ||
      !onlyDomainVars(em.offset(shape, idx), domain.size()))
    return -1;
  return c;
}

struct Tile {
  std::string name, type, storage, ptr;
  std::string offset;  ///< of the input's element, with dim P at the chunk's start "ip"
  int64_t vp = 1;      ///< elements per load along P
};

} // namespace

std::optional<KernelSpec> generateTransposedPointwise(FusionOp fusion) {
  ArrayRef<int64_t> domain = fusion->getAttrOfType<DenseI64ArrayAttr>("domain").asArrayRef();
  int rank = domain.size();
  if (rank < 2 || domain.back() < kTile / 2 || shape::numElements(domain) == 0)
    return std::nullopt;
  int last = rank - 1;

  // Which dim P the transposed inputs are contiguous along: the first one's.
  std::vector<std::string> vars;
  for (int d = 0; d < rank; ++d)
    vars.push_back("i" + str(d));
  int p = -1;
  {
    ElementEmitter probe(fusion, vars);
    probe.load = [&](ElementEmitter &em, BlockArgument arg, const Index &idx) -> std::string {
      if (p < 0)
        p = transposedDim(em, arg, idx, last, domain);
      return "0";
    };
    for (Value v : fusion.getYield().getValues())
      probe.emit(v, ElementEmitter::identity(rank));
  }
  if (p < 0)
    return std::nullopt;

  // The compute pass: each thread VL consecutive elements along L (one vector
  // store); inputs contiguous along P come from their tiles, the others
  // through the pointwise kernel's loads (vectors along L where they allow).
  int64_t vl = 16 / maxElementBytes(fusion);
  while (vl > 1 && domain[last] % vl != 0)
    vl /= 2;
  std::vector<Tile> tiles;
  std::map<std::string, std::string> tileByKey;
  int64_t tileBytes = 0;
  ElementEmitter e(fusion, vars, "      ");
  HoistedLoads hoist{last, vl, "ib", "    "};
  e.load = [&](ElementEmitter &em, BlockArgument arg, const Index &idx) -> std::string {
    ArrayRef<int64_t> shape = shapeOf(arg);
    std::string ptr = ElementEmitter::argName(arg.getArgNumber());
    std::string off = em.offset(shape, idx);
    std::string key = ptr + "@" + off;
    if (!tileByKey.count(key)) {
      std::string type = computeType(dtypeOf(arg));
      int64_t bytes = kTile * (kTile + 1) * (type == "long long" ? 8 : 4);
      if (transposedDim(em, arg, idx, last, domain) != p || tileBytes + bytes > kTileBudget)
        return hoist.load(em, arg, idx);
      // The tile is read VP elements at a time along P where they are
      // aligned vectors of the input.
      int64_t vp = 16 / dtypeBytes(dtypeOf(arg));
      while (vp > 1 && !(domain[p] % vp == 0 && em.vectorizable(shape, idx, p, vp)))
        vp /= 2;
      tileBytes += bytes;
      tileByKey[key] = "fz_tile" + str(tiles.size());
      tiles.push_back({tileByKey[key], type, storageType(dtypeOf(arg)), ptr,
                       em.offsetAt(shape, idx, p, "ip"), vp});
    }
    return tileByKey[key] + "[i" + str(last) + " - fz_l0][i" + str(p) + " - fz_p0]";
  };
  Index id = ElementEmitter::identity(rank);
  std::vector<std::string> results;
  for (Value v : fusion.getYield().getValues())
    results.push_back(e.emit(v, id));
  std::string body = e.takeCode();
  if (tiles.empty())
    return std::nullopt;

  // Block -> (L tile, P tile, the other dims), L tiles fastest.
  int64_t tilesL = (domain[last] + kTile - 1) / kTile, tilesP = (domain[p] + kTile - 1) / kTile;
  int64_t others = 1;
  for (int d = 0; d < rank; ++d)
    if (d != last && d != p)
      others *= domain[d];
  KernelSpec spec;
  spec.name = fusion->getAttrOfType<StringAttr>("name").str();
  spec.family = "pointwise";
  std::string P = "i" + str(p), L = "i" + str(last);
  spec.text.qualifiers = "__launch_bounds__(" + str(kThreads) + ")";
  spec.text.params = parameters(fusion);
  spec.text.staticShared = !tiles.empty();
  std::string src = "  typedef " + std::string(indexType(fusion)) + " fz_idx;\n";
  for (const Tile &t : tiles)
    src += "  __shared__ " + t.type + " " + t.name + "[" + str(kTile) + "][" + str(kTile + 1) +
           "];\n";
  src += "  fz_idx fz_b = blockIdx.x;\n";
  src += "  const fz_idx fz_l0 = (fz_b % " + str(tilesL) + ") * " + str(kTile) + ";\n";
  src += "  fz_b /= " + str(tilesL) + ";\n";
  src += "  const fz_idx fz_p0 = (fz_b % " + str(tilesP) + ") * " + str(kTile) + ";\n";
  src += "  fz_b /= " + str(tilesP) + ";\n";
  for (int d = last; d >= 0; --d)
    if (d != last && d != p) {
      src += "  const fz_idx i" + str(d) + " = fz_b % " + str(domain[d]) + ";\n";
      src += "  fz_b /= " + str(domain[d]) + ";\n";
    }
  // Pass 1, per tile: lanes along P, VP elements each, so the reads are
  // whole runs of the input's rows.
  for (const Tile &t : tiles) {
    int64_t chunks = kTile / t.vp, rows = kThreads / chunks;
    src += "  #pragma unroll\n  for (int k = 0; k < " + str(kTile / rows) + "; ++k) {\n";
    src += "    const fz_idx ip = fz_p0 + threadIdx.x % " + str(chunks) + " * " + str(t.vp) +
           ";\n";
    src += "    const fz_idx " + L + " = fz_l0 + threadIdx.x / " + str(chunks) + " + k * " +
           str(rows) + ";\n";
    src += "    if (ip < " + str(domain[p]) + " && " + L + " < " + str(domain[last]) + ") {\n";
    src += "      " + t.type + " fz_v[" + str(t.vp) + "];\n";
    src += "      fz_load<" + t.storage + ", " + str(t.vp) + ">(" + t.ptr + ", " + t.offset +
           ", fz_v);\n";
    src += "      #pragma unroll\n      for (int j = 0; j < " + str(t.vp) + "; ++j) " + t.name +
           "[" + L + " - fz_l0][ip - fz_p0 + j] = fz_v[j];\n";
    src += "    }\n  }\n";
  }
  src += "  __syncthreads();\n";
  // Pass 2: lanes along L, VL elements each; outputs laid out like the domain.
  std::string lin, stride = "1";
  for (int d = last; d >= 0; --d) {
    std::string v = d == last ? "ib" : "i" + str(d);
    lin = v + (stride == "1" ? "" : " * " + stride) + (lin.empty() ? "" : " + " + lin);
    stride = str(std::stoll(stride) * domain[d]);
  }
  int64_t chunks = kTile / vl, rows = kThreads / chunks;
  src += "  #pragma unroll\n  for (int k = 0; k < " + str(kTile / rows) + "; ++k) {\n";
  src += "    const fz_idx ib = fz_l0 + threadIdx.x % " + str(chunks) + " * " + str(vl) + ";\n";
  src += "    const fz_idx " + P + " = fz_p0 + threadIdx.x / " + str(chunks) + " + k * " +
         str(rows) + ";\n";
  src += "    if (" + P + " >= " + str(domain[p]) + " || ib >= " + str(domain[last]) +
         ") continue;\n";
  src += "    const fz_idx fz_o = " + lin + ";\n";
  for (unsigned o = 0; o < results.size(); ++o)
    src += "    " + std::string(computeType(dtypeOf(fusion.getResult(o)))) + " r" + str(o) + "[" +
           str(vl) + "];\n";
  src += hoist.pre;
  src += "    #pragma unroll\n    for (int l = 0; l < " + str(vl) + "; ++l) {\n";
  src += "      const fz_idx " + L + " = ib + l;\n" + body;
  for (unsigned o = 0; o < results.size(); ++o)
    src += "      r" + str(o) + "[l] = " + results[o] + ";\n";
  src += "    }\n";
  for (unsigned o = 0; o < results.size(); ++o)
    src += "    fz_store<" + std::string(storageType(dtypeOf(fusion.getResult(o)))) + ", " +
           str(vl) + ">(out" + str(o) + ", fz_o, r" + str(o) + ");\n";
  src += "  }\n";

  spec.grid = static_cast<unsigned>(tilesL * tilesP * others);
  spec.block = kThreads;
  spec.text.body = src;
  spec.schedule = "transposed: " + str(tiles.size()) + " input(s) contiguous along dim " +
                  str(p) + " staged through " + str(kTile) + " x " + str(kTile) +
                  " shared-memory tiles, read " + str(tiles[0].vp) + " and written " + str(vl) +
                  " elements at a time; " + str(kThreads) + " threads x " + str(spec.grid) +
                  " blocks";
  return spec;
}

} // namespace fusec::codegen::detail
