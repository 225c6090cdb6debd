//===- ConvertGatherElements.cpp - GatherElements at indices of the run ---===//
//
// GatherElements picks, for each position of its indices, the data's
// element at that index along `axis` and at the same place along the other
// dims: out[.., j, ..] = data[.., idx[.., j, ..], ..]. With indices known
// only when the model runs (the tokens whose log-probabilities a scoring or
// RLHF model reads, `logp.gather(-1, tokens)`), each pick is a sum along the
// axis of where(iota == index, data, 0): one term, so exact. One index a
// row (the common case) compares over the data's own shape, which is the
// form -fusec-pick-early moves through a log-softmax and a product's
// streamed row statistics take (docs/kernels.md, "Picks"); k indices a row
// compare over k copies of the row.
//
//===----------------------------------------------------------------------===//
#include "frontends/onnx/Converter.h"

namespace fusec::onnx_import {

namespace {
/// The most elements the comparison of k indices a row may take (k copies
/// of the data): 2^28, a gather far past what a pick is for.
constexpr int64_t kMaxPickElements = int64_t(1) << 28;
} // namespace

void Converter::gatherElements(const onnx::NodeProto &n) {
  allowAttrs(n, {"axis"});
  if (n.input_size() < 2 || n.input(1).empty())
    failNode(n, "needs 2 input(s)");
  const std::string out = n.output(0);
  const std::string data = n.input(0), indices = n.input(1);
  const std::vector<int64_t> s = knownShape(n, data), is = knownShape(n, indices);
  const int64_t rank = static_cast<int64_t>(s.size());
  int64_t a = 0;
  if (std::string e = shape::normalizeAxis(intAttr(n, "axis", 0), rank, a); !e.empty())
    failNode(n, e);
  if (is.size() != s.size())
    failNode(n, "takes indices of the data's rank (" + std::to_string(rank) + "), not " +
                    std::to_string(is.size()));
  for (int64_t d = 0; d < rank; ++d)
    if (d != a && is[size_t(d)] != s[size_t(d)])
      failNode(n, "its indices are " + std::to_string(is[size_t(d)]) + " along dim " +
                      std::to_string(d) + ", where the data is " + std::to_string(s[size_t(d)]) +
                      ": indices of the data's extent along every dim but the axis are supported");
  const std::string it = dtypeOf(indices), dt = dtypeOf(data);
  if (it != "i32" && it != "i64")
    failNode(n, "takes i32 or i64 indices, not " + it);
  if (dt == "bool")
    failNode(n, "gathers from numbers, not bool");
  for (size_t d = 0; d < s.size(); ++d)
    if (s[d] == 0 || is[d] == 0)
      failNode(n, "gathers from or into an empty tensor (a dim of size 0), which fusec does "
                  "not take");
  const int64_t extent = s[size_t(a)], k = is[size_t(a)];
  // Negative indices count from the end; any other index outside the dim
  // (which ONNX leaves undefined) picks 0.
  emit(fresh(out, "zero_index"), "constant", {}, {{"value", 0}, {"dtype", it}});
  emit(fresh(out, "extent"), "constant", {}, {{"value", extent}, {"dtype", it}});
  emit(fresh(out, "from_end"), "lt", {indices, fresh(out, "zero_index")});
  emit(fresh(out, "wrapped"), "add", {indices, fresh(out, "extent")});
  emit(fresh(out, "index"), "where", {fresh(out, "from_end"), fresh(out, "wrapped"), indices});
  emit(fresh(out, "zero"), "constant", {}, {{"value", 0}, {"dtype", dt}});
  if (k == 1)  // one index a row: the indices' shape is the pick's
    return emitPick(out, out, data, s, fresh(out, "index"), a, it, fresh(out, "zero"));
  // k indices a row: the data with a dim of 1 before the axis, the indices
  // with one after it, compared over [.., k, extent, ..] and summed along
  // the extent.
  std::vector<int64_t> wide = is;
  wide.insert(wide.begin() + a + 1, extent);
  int64_t elements = 1;
  for (int64_t e : wide) {
    // Divided before multiplied: the product of dims may overflow.
    if (e > kMaxPickElements / elements)
      failNode(n, "picks " + std::to_string(k) + " indices from each row of " +
                      std::to_string(extent) + ", compared over more than 2^28 elements: too "
                      "large (one index a row, or a few, is what is supported)");
    elements *= e;
  }
  std::vector<int64_t> dataWide = s, indicesWide = is;
  dataWide.insert(dataWide.begin() + a, 1);
  indicesWide.insert(indicesWide.begin() + a + 1, 1);
  emit(fresh(out, "data_wide"), "reshape", {data}, {{"shape", dataWide}});
  emit(fresh(out, "index_wide"), "reshape", {fresh(out, "index")}, {{"shape", indicesWide}});
  emit(fresh(out, "positions"), "iota", {}, {{"shape", wide}, {"dim", a + 1}, {"dtype", it}});
  emit(fresh(out, "hit"), "eq", {fresh(out, "positions"), fresh(out, "index_wide")});
  emit(fresh(out, "picked"), "where", {fresh(out, "hit"), fresh(out, "data_wide"), fresh(out, "zero")});
  emit(out, "sum", {fresh(out, "picked")}, {{"axes", std::vector<int64_t>{a + 1}}, {"keepdims", false}});
}

void Converter::emitPick(const std::string &name, const std::string &base,
                         const std::string &data, const std::vector<int64_t> &shape,
                         const std::string &index, int64_t axis, const std::string &indexDtype,
                         const std::string &zero) {
  emit(fresh(base, "positions"), "iota", {},
       {{"shape", shape}, {"dim", axis}, {"dtype", indexDtype}});
  emit(fresh(base, "hit"), "eq", {fresh(base, "positions"), index});
  emit(fresh(base, "picked"), "where", {fresh(base, "hit"), data, zero});
  emit(name, "sum", {fresh(base, "picked")},
       {{"axes", std::vector<int64_t>{axis}}, {"keepdims", true}});
}

} // namespace fusec::onnx_import
