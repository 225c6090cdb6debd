//===- KnownValues.cpp - values the ONNX importer computes at import ------===//
#include "frontends/onnx/KnownValues.h"
#include "compiler/support/Float16.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

namespace fusec::onnx_import {
namespace {

/// The row-major strides of `s`.
shape::Shape stridesOf(const shape::Shape &s) {
  shape::Shape st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;)
    st[d - 1] = st[d] * s[d];
  return st;
}

/// Calls f(out index, its coordinates) for every element of `s`.
void eachIndex(const shape::Shape &s, const std::function<void(int64_t, const shape::Shape &)> &f) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  shape::Shape c(s.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    f(i, c);
    for (size_t d = s.size(); d-- > 0;) {
      if (++c[d] < s[d])
        break;
      c[d] = 0;
    }
  }
}

/// Element of `k` at the coordinates `c` of a result it broadcasts to.
double broadcastAt(const Known &k, const shape::Shape &st, const shape::Shape &c) {
  if (k.fill())
    return k.values[0];
  int64_t off = 0, lead = static_cast<int64_t>(c.size() - k.shape.size());
  for (size_t d = 0; d < k.shape.size(); ++d)
    if (k.shape[d] != 1)
      off += c[size_t(lead) + d] * st[d];
  return k.values[size_t(off)];
}

bool tooLarge(const shape::Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > kMaxFoldedElements)
      return true;
  return false;
}

/// `v` as a value of `dtype` holds it: floats rounded to their precision
/// (a fold must give what the graph's op would), integers truncated and an
/// i32 wrapped as ONNX runtimes wrap (Cast of 3e9, INT32_MAX + 1).
double roundTo(const std::string &dtype, double v) {
  if (dtype == "bool")
    return v != 0 ? 1 : 0;
  if (dtype == "f32")
    return static_cast<double>(static_cast<float>(v));
  if (dtype == "f16")
    return halfToFloat(doubleToHalf(v));
  if (dtype == "bf16")
    return bf16ToFloat(doubleToBF16(v));
  if (dtype == "i64" || dtype == "i32") {
    if (std::isnan(v))
      return 0;
    double t = std::trunc(v);
    if (dtype == "i64")
      return t;
    const int64_t whole = t >= 9.2e18 ? std::numeric_limits<int64_t>::max()
                          : t <= -9.2e18 ? std::numeric_limits<int64_t>::min()
                                         : static_cast<int64_t>(t);
    return static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(whole)));
  }
  return v;
}

} // namespace

int64_t Known::numel() const {
  // Saturates: a fill's shape comes from the model (ConstantOfShape of any
  // size), and a product past int64 is as unreadable as a large one.
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d > 0 && n > std::numeric_limits<int64_t>::max() / d)
      return std::numeric_limits<int64_t>::max();
    n *= d;
  }
  return n;
}

std::optional<std::vector<int64_t>> Known::ints() const {
  // A fill is one value however large its shape; spelled out, a fill of
  // 10^10 elements (ConstantOfShape) would exhaust memory.
  if (!integral() || (fill() && numel() > kMaxFoldedElements))
    return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i = 0, n = numel(); i < n; ++i) {
    // Exporters write INT64_MAX for "to the end"; a double holds it rounded
    // up, past what a cast can take.
    double v = at(i);
    out.push_back(v >= 9223372036854775807.0    ? std::numeric_limits<int64_t>::max()
                  : v <= -9223372036854775808.0 ? std::numeric_limits<int64_t>::min()
                                                : static_cast<int64_t>(v));
  }
  return out;
}

std::optional<Known> foldElementwise(const std::string &op, const std::vector<Known> &in,
                                     std::string &error) {
  using Fn = std::function<double(const std::vector<double> &)>;
  auto isInt = [&](size_t i) { return in.at(i).integral(); };
  static const std::map<std::string, std::pair<size_t, bool>> arity = {
      // inputs, result is bool
      {"Add", {2, false}},   {"Sub", {2, false}},          {"Mul", {2, false}},
      {"Div", {2, false}},   {"Mod", {2, false}},          {"Max", {2, false}},
      {"Min", {2, false}},   {"Neg", {1, false}},          {"Abs", {1, false}},
      {"Equal", {2, true}},  {"Less", {2, true}},          {"Greater", {2, true}},
      {"LessOrEqual", {2, true}}, {"GreaterOrEqual", {2, true}}, {"Not", {1, true}},
      {"And", {2, true}},    {"Or", {2, true}},            {"Where", {3, false}}};
  auto it = arity.find(op);
  if (it == arity.end() || in.size() != it->second.first)
    return std::nullopt;
  Fn f;
  bool integerDiv = op == "Div" && isInt(0);
  if (op == "Add") f = [](auto &v) { return v[0] + v[1]; };
  else if (op == "Sub") f = [](auto &v) { return v[0] - v[1]; };
  else if (op == "Mul") f = [](auto &v) { return v[0] * v[1]; };
  else if (op == "Div") f = [integerDiv](auto &v) { return integerDiv ? std::trunc(v[0] / v[1]) : v[0] / v[1]; };
  else if (op == "Mod") f = [](auto &v) { return v[0] - v[1] * std::floor(v[0] / v[1]); };
  // NaN wins either way round, as the graph's maximum and minimum give it.
  else if (op == "Max") f = [](auto &v) { return std::isnan(v[0]) || std::isnan(v[1]) ? NAN : std::max(v[0], v[1]); };
  else if (op == "Min") f = [](auto &v) { return std::isnan(v[0]) || std::isnan(v[1]) ? NAN : std::min(v[0], v[1]); };
  else if (op == "Neg") f = [](auto &v) { return -v[0]; };
  else if (op == "Abs") f = [](auto &v) { return std::fabs(v[0]); };
  else if (op == "Equal") f = [](auto &v) { return double(v[0] == v[1]); };
  else if (op == "Less") f = [](auto &v) { return double(v[0] < v[1]); };
  else if (op == "Greater") f = [](auto &v) { return double(v[0] > v[1]); };
  else if (op == "LessOrEqual") f = [](auto &v) { return double(v[0] <= v[1]); };
  else if (op == "GreaterOrEqual") f = [](auto &v) { return double(v[0] >= v[1]); };
  else if (op == "Not") f = [](auto &v) { return double(v[0] == 0); };
  else if (op == "And") f = [](auto &v) { return double(v[0] != 0 && v[1] != 0); };
  else if (op == "Or") f = [](auto &v) { return double(v[0] != 0 || v[1] != 0); };
  else f = [](auto &v) { return v[0] != 0 ? v[1] : v[2]; };  // Where
  if (integerDiv || op == "Mod") {
    const std::vector<double> &divisors = in[1].values;
    if (std::find(divisors.begin(), divisors.end(), 0.0) != divisors.end()) {
      error = "divides by a zero it computes at import";
      return std::nullopt;
    }
  }
  std::vector<shape::Shape> shapes;
  for (const Known &k : in)
    shapes.push_back(k.shape);
  Known out;
  if (std::string e = shape::broadcast(shapes, out.shape); !e.empty()) {
    error = e;
    return std::nullopt;
  }
  out.dtype = it->second.second ? "bool" : in.at(op == "Where" ? 1 : 0).dtype;
  bool allFill = std::all_of(in.begin(), in.end(), [](const Known &k) { return k.fill(); });
  std::vector<double> args(in.size());
  if (allFill) {
    for (size_t i = 0; i < in.size(); ++i)
      args[i] = in[i].values[0];
    out.values = {roundTo(out.dtype, f(args))};
    return out;
  }
  if (tooLarge(out.shape))
    return std::nullopt;
  std::vector<shape::Shape> st;
  for (const Known &k : in)
    st.push_back(stridesOf(k.shape));
  out.values.resize(size_t(out.numel()));
  eachIndex(out.shape, [&](int64_t i, const shape::Shape &c) {
    for (size_t k = 0; k < in.size(); ++k)
      args[k] = broadcastAt(in[k], st[k], c);
    out.values[size_t(i)] = roundTo(out.dtype, f(args));
  });
  return out;
}

std::optional<Known> foldGather(const Known &data, const Known &indices, int64_t axis,
                                std::string &error) {
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  int64_t a = 0;
  if (std::string e = shape::normalizeAxis(axis, rank, a); !e.empty()) {
    error = e;
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> idx = indices.ints();
  if (!idx) {
    error = "gathers with indices that are not integers";
    return std::nullopt;
  }
  Known out;
  out.dtype = data.dtype;
  out.shape.assign(data.shape.begin(), data.shape.begin() + a);
  out.shape.insert(out.shape.end(), indices.shape.begin(), indices.shape.end());
  out.shape.insert(out.shape.end(), data.shape.begin() + a + 1, data.shape.end());
  if (tooLarge(out.shape))
    return std::nullopt;
  const int64_t n = data.shape[size_t(a)];
  for (int64_t &i : *idx) {
    if (i < -n || i >= n) {
      error = "gathers index " + std::to_string(i) + " of a dim of " + std::to_string(n);
      return std::nullopt;
    }
    if (i < 0)
      i += n;
  }
  shape::Shape st = stridesOf(data.shape);
  const size_t ir = indices.shape.size();
  out.values.resize(size_t(out.numel()));
  eachIndex(out.shape, [&](int64_t i, const shape::Shape &c) {
    int64_t flat = 0;  // the index tensor's element at c[a .. a + ir)
    for (size_t d = 0; d < ir; ++d)
      flat = flat * indices.shape[d] + c[size_t(a) + d];
    int64_t off = (*idx)[size_t(flat)] * st[size_t(a)];
    for (int64_t d = 0; d < a; ++d)
      off += c[size_t(d)] * st[size_t(d)];
    for (int64_t d = a + 1; d < rank; ++d)
      off += c[size_t(d) - 1 + ir] * st[size_t(d)];
    out.values[size_t(i)] = data.at(off);
  });
  return out;
}

std::optional<Known> foldCumSum(const Known &x, int64_t axis, bool exclusive, bool reverse,
                                std::string &error) {
  int64_t a = 0;
  if (std::string e = shape::normalizeAxis(axis, int64_t(x.shape.size()), a); !e.empty()) {
    error = e;
    return std::nullopt;
  }
  if (tooLarge(x.shape))
    return std::nullopt;
  Known out = x;
  if (x.dtype == "bool")
    out.dtype = "i64";
  const int64_t n = x.numel();
  out.values.resize(size_t(n));
  const shape::Shape st = stridesOf(x.shape);
  const int64_t len = x.shape[size_t(a)], stride = st[size_t(a)];
  // Each line along the axis: its first element's index has 0 there.
  for (int64_t i = 0; i < n; ++i) {
    if ((i / stride) % len != 0)
      continue;
    double sum = 0;
    for (int64_t k = 0; k < len; ++k) {
      const int64_t j = i + (reverse ? len - 1 - k : k) * stride;
      const double v = x.at(j);
      if (!exclusive)
        sum += v;
      out.values[size_t(j)] = sum;
      if (exclusive)
        sum += v;
    }
  }
  return out;
}

std::optional<Known> foldGatherND(const Known &data, const Known &indices, int64_t batchDims,
                                  std::string &error) {
  const int64_t r = int64_t(data.shape.size()), q = int64_t(indices.shape.size());
  std::optional<std::vector<int64_t>> idx = indices.ints();
  if (!idx || q < 1 || batchDims < 0 || batchDims >= std::min(r, q)) {
    error = "takes integer indices of rank 1 or more and batch_dims below both ranks";
    return std::nullopt;
  }
  const int64_t m = indices.shape.back();
  if (m < 1 || batchDims + m > r) {
    error = "index tuples of " + std::to_string(m) + " exceed the data's rank " + std::to_string(r);
    return std::nullopt;
  }
  for (int64_t d = 0; d < batchDims; ++d)
    if (indices.shape[size_t(d)] != data.shape[size_t(d)]) {
      error = "batch dim " + std::to_string(d) + " differs between data and indices";
      return std::nullopt;
    }
  Known out;
  out.dtype = data.dtype;
  out.shape.assign(indices.shape.begin(), indices.shape.end() - 1);
  out.shape.insert(out.shape.end(), data.shape.begin() + batchDims + m, data.shape.end());
  if (tooLarge(out.shape))
    return std::nullopt;
  const shape::Shape st = stridesOf(data.shape);
  int64_t slice = 1;  // elements of one gathered slice
  for (int64_t d = batchDims + m; d < r; ++d)
    slice *= data.shape[size_t(d)];
  int64_t inner = 1;  // index tuples per batch entry
  for (int64_t d = batchDims; d + 1 < q; ++d)
    inner *= indices.shape[size_t(d)];
  const int64_t tuples = indices.numel() / m;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = 0, b = t / std::max<int64_t>(inner, 1);
    for (int64_t d = batchDims; d-- > 0;) {  // the batch entry's offset
      off += (b % data.shape[size_t(d)]) * st[size_t(d)];
      b /= data.shape[size_t(d)];
    }
    for (int64_t k = 0; k < m; ++k) {
      const int64_t n = data.shape[size_t(batchDims + k)];
      int64_t i = (*idx)[size_t(t * m + k)];
      if (i < -n || i >= n) {
        error = "gathers index " + std::to_string(i) + " of a dim of " + std::to_string(n);
        return std::nullopt;
      }
      off += (i < 0 ? i + n : i) * st[size_t(batchDims + k)];
    }
    for (int64_t e = 0; e < slice; ++e)
      out.values.push_back(data.at(off + e));
  }
  if (out.values.empty())
    out.values = {0};
  return out;
}

std::optional<Known> foldGatherElements(const Known &data, const Known &indices, int64_t axis,
                                        std::string &error) {
  const int64_t r = int64_t(data.shape.size());
  int64_t a = 0;
  if (std::string e = shape::normalizeAxis(axis, r, a); !e.empty()) {
    error = e;
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> idx = indices.ints();
  if (!idx || int64_t(indices.shape.size()) != r) {
    error = "takes integer indices of the data's rank";
    return std::nullopt;
  }
  for (int64_t d = 0; d < r; ++d)
    if (d != a && indices.shape[size_t(d)] > data.shape[size_t(d)]) {
      error = "its indices are " + std::to_string(indices.shape[size_t(d)]) + " along dim " +
              std::to_string(d) + ", where the data is " + std::to_string(data.shape[size_t(d)]);
      return std::nullopt;
    }
  if (tooLarge(indices.shape))
    return std::nullopt;
  Known out;
  out.dtype = data.dtype;
  out.shape = indices.shape;
  const shape::Shape st = stridesOf(data.shape);
  const int64_t n = data.shape[size_t(a)];
  bool bad = false;
  eachIndex(indices.shape, [&](int64_t i, const shape::Shape &c) {
    int64_t j = (*idx)[size_t(i)];
    if (j < -n || j >= n) {
      bad = true;
      return;
    }
    int64_t off = 0;
    for (int64_t d = 0; d < r; ++d)
      off += (d == a ? (j < 0 ? j + n : j) : c[size_t(d)]) * st[size_t(d)];
    out.values.push_back(data.at(off));
  });
  if (bad) {
    error = "gathers an index outside a dim of " + std::to_string(n);
    return std::nullopt;
  }
  if (out.values.empty())
    out.values = {0};
  return out;
}

std::optional<Known> foldConcat(const std::vector<Known> &in, int64_t axis, std::string &error) {
  std::vector<shape::Shape> shapes;
  for (const Known &k : in)
    shapes.push_back(k.shape);
  Known out;
  int64_t a = 0;
  if (std::string e = shapes.empty() ? "concat needs at least one input"
                                     : shape::normalizeAxis(axis, int64_t(shapes[0].size()), a);
      !e.empty()) {
    error = e;
    return std::nullopt;
  }
  if (std::string e = shape::concat(shapes, a, out.shape); !e.empty()) {
    error = e;
    return std::nullopt;
  }
  if (tooLarge(out.shape))
    return std::nullopt;
  out.dtype = in.at(0).dtype;
  out.values.resize(size_t(out.numel()));
  eachIndex(out.shape, [&](int64_t i, const shape::Shape &c) {
    shape::Shape local = c;
    for (const Known &k : in) {
      if (local[size_t(a)] < k.shape[size_t(a)]) {
        shape::Shape st = stridesOf(k.shape);
        int64_t off = 0;
        for (size_t d = 0; d < local.size(); ++d)
          off += local[d] * st[d];
        out.values[size_t(i)] = k.at(off);
        return;
      }
      local[size_t(a)] -= k.shape[size_t(a)];
    }
  });
  return out;
}

std::optional<Known> foldSlice(const Known &x, const std::vector<int64_t> &starts,
                               const std::vector<int64_t> &ends, std::vector<int64_t> axes,
                               std::vector<int64_t> steps, std::string &error) {
  shape::SliceSpec spec;
  Known out;
  if (std::string e = shape::normalizeSlice(x.shape, starts, ends, axes, steps, spec); !e.empty()) {
    error = e;
    return std::nullopt;
  }
  if (std::string e = shape::slice(x.shape, spec, out.shape); !e.empty()) {
    error = e;
    return std::nullopt;
  }
  out.dtype = x.dtype;
  if (x.fill()) {
    out.values = x.values;
    return out;
  }
  shape::Shape st = stridesOf(x.shape);
  out.values.resize(size_t(out.numel()));
  eachIndex(out.shape, [&](int64_t i, const shape::Shape &c) {
    int64_t off = 0;
    for (size_t d = 0; d < c.size(); ++d)
      off += (spec.starts[d] + c[d] * spec.steps[d]) * st[d];
    out.values[size_t(i)] = x.at(off);
  });
  return out;
}

std::optional<Known> foldExpand(const Known &x, const shape::Shape &target, std::string &error) {
  Known out;
  if (std::string e = shape::broadcast({x.shape, target}, out.shape); !e.empty()) {
    error = e;
    return std::nullopt;
  }
  out.dtype = x.dtype;
  if (x.fill()) {
    out.values = x.values;
    return out;
  }
  if (tooLarge(out.shape))
    return std::nullopt;
  shape::Shape st = stridesOf(x.shape);
  out.values.resize(size_t(out.numel()));
  eachIndex(out.shape, [&](int64_t i, const shape::Shape &c) {
    out.values[size_t(i)] = broadcastAt(x, st, c);
  });
  return out;
}

Known castKnown(const Known &x, const std::string &dtype) {
  Known out = x;
  out.dtype = dtype;
  for (double &v : out.values)
    v = roundTo(dtype, v);
  return out;
}

std::optional<Known> foldRange(const Known &start, const Known &limit, const Known &delta,
                               std::string &error) {
  if (start.numel() != 1 || limit.numel() != 1 || delta.numel() != 1) {
    error = "takes scalar start, limit and delta";
    return std::nullopt;
  }
  double s = start.at(0), l = limit.at(0), d = delta.at(0);
  if (d == 0) {
    error = "has a delta of 0";
    return std::nullopt;
  }
  double count = std::max(0.0, std::ceil((l - s) / d));
  if (count > double(kMaxFoldedElements))
    return std::nullopt;
  Known out;
  out.dtype = start.dtype;
  out.shape = {static_cast<int64_t>(count)};
  for (int64_t i = 0; i < out.shape[0]; ++i)
    out.values.push_back(roundTo(out.dtype, s + double(i) * d));
  if (out.values.empty())
    out.values = {0};  // no elements: any fill
  return out;
}

std::optional<shape::Shape> reshapeTarget(const shape::Shape &in, std::vector<int64_t> target,
                                          bool allowZero, std::string &error) {
  if (!allowZero)
    for (size_t d = 0; d < target.size(); ++d)
      if (target[d] == 0) {
        if (d >= in.size()) {
          error = "a 0 in the target shape at dim " + std::to_string(d) +
                  " copies a dim the input does not have";
          return std::nullopt;
        }
        target[d] = in[d];
      }
  shape::Shape out;
  if (std::string e = shape::reshape(in, target, out); !e.empty()) {
    error = e;
    return std::nullopt;
  }
  return out;
}

std::optional<Progression> progressionOf(const Known &k) {
  if (k.fill() || k.dtype == "bool")
    return std::nullopt;
  shape::Shape st = stridesOf(k.shape);
  for (size_t d = 0; d < k.shape.size(); ++d) {
    if (k.shape[d] < 2)
      continue;
    Progression p{k.values[0], k.values[size_t(st[d])] - k.values[0], static_cast<int64_t>(d)};
    bool holds = true;
    eachIndex(k.shape, [&](int64_t i, const shape::Shape &c) {
      holds = holds && k.values[size_t(i)] == p.start + p.step * double(c[d]);
    });
    if (holds)
      return p;
  }
  return std::nullopt;
}

} // namespace fusec::onnx_import
