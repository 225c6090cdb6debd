//===- CompositeEval.cpp - composites evaluated from their own formulas ---===//
//
// softmax, log_softmax, layer_norm, rms_norm, linear and attention are
// computed directly, not through their decompositions: comparing the two on
// random inputs is how the tests check -fusec-decompose. Elementwise math runs
// in the compute type T (float, or double in fp64 mode), statistics and
// softmax denominators accumulate in double, and each result rounds to its
// dtype once on store.
//
//===----------------------------------------------------------------------===//
#include "compiler/interp/EvalSupport.h"

#include "compiler/dialect/FusecDialect.h"
#include "compiler/shape/ShapeRules.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

using namespace mlir;

namespace fusec::interp {
namespace {

template <typename T> T negInf() { return -std::numeric_limits<T>::infinity(); }

/// max that lets NaN win, as the max reduction does.
template <typename T> T maxNaN(T a, T b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<T>::quiet_NaN()
                                        : std::max(a, b);
}

/// Softmax (or log-softmax) of `len` values x[0], x[stride], ... into y.
template <typename T>
void softmaxLine(const T *x, T *y, int64_t len, int64_t stride, bool log) {
  T m = negInf<T>();
  for (int64_t j = 0; j < len; ++j)
    m = maxNaN(m, x[j * stride]);
  double sum = 0;
  for (int64_t j = 0; j < len; ++j)
    sum += static_cast<double>(std::exp(x[j * stride] - m));
  const T denom = static_cast<T>(sum), logDenom = std::log(denom);
  for (int64_t j = 0; j < len; ++j) {
    T d = x[j * stride] - m;
    y[j * stride] = log ? d - logDenom : std::exp(d) / denom;
  }
}

template <typename T>
void evalSoftmax(const HostTensor &in, HostTensor &out, int64_t axis, bool log) {
  std::vector<T> x = loadAs<T>(in), y(x.size());
  llvm::ArrayRef<int64_t> s = in.shape();
  int64_t len = s[axis], inner = numElements(s.drop_front(axis + 1));
  int64_t lines = numElements(s.take_front(axis)) * inner;
  parallelFor(lines, std::max<int64_t>(1, kElementGrain / std::max<int64_t>(1, len)),
              [&](int64_t begin, int64_t end) {
                for (int64_t r = begin; r < end; ++r) {
                  int64_t base = (r / inner) * len * inner + r % inner;
                  softmaxLine(x.data() + base, y.data() + base, len, inner, log);
                }
              });
  storeAll<T>(out, y.data());
}

/// Mean and biased variance of n contiguous values, in double.
std::pair<double, double> moments(const double *x, int64_t n) {
  double sum = 0;
  for (int64_t j = 0; j < n; ++j)
    sum += x[j];
  double mean = sum / static_cast<double>(n), sq = 0;
  for (int64_t j = 0; j < n; ++j)
    sq += (x[j] - mean) * (x[j] - mean);
  return {mean, sq / static_cast<double>(n)};
}

/// Normalizes rows of `cols` values: layer_norm subtracts the mean and divides
/// by the standard deviation; rms_norm divides by the root mean square.
/// Optional `weight` and `bias` have `cols` elements.
template <typename T>
void normalizeRows(const HostTensor &in, HostTensor &out, int64_t cols, double eps, bool rms,
                   const HostTensor *weight, const HostTensor *bias) {
  std::vector<double> x = loadAs<double>(in);
  std::vector<T> w = weight ? loadAs<T>(*weight) : std::vector<T>();
  std::vector<T> b = bias ? loadAs<T>(*bias) : std::vector<T>();
  std::vector<T> y(x.size());
  int64_t rows = cols == 0 ? 0 : in.numel() / cols;
  parallelFor(rows, std::max<int64_t>(1, kElementGrain / std::max<int64_t>(1, cols)),
              [&](int64_t begin, int64_t end) {
                for (int64_t r = begin; r < end; ++r) {
                  const double *xr = x.data() + r * cols;
                  double center = 0, var = 0;
                  if (rms) {
                    for (int64_t j = 0; j < cols; ++j)
                      var += xr[j] * xr[j];
                    var /= static_cast<double>(cols);
                  } else {
                    std::tie(center, var) = moments(xr, cols);
                  }
                  const T mu = static_cast<T>(center);
                  const T scale = T(1) / std::sqrt(static_cast<T>(var) + static_cast<T>(eps));
                  for (int64_t j = 0; j < cols; ++j) {
                    T v = (static_cast<T>(xr[j]) - mu) * scale;
                    if (weight)
                      v *= w[j];
                    if (bias)
                      v += b[j];
                    y[r * cols + j] = v;
                  }
                }
              });
  storeAll<T>(out, y.data());
}

/// x [..., K] @ weight[N, K]^T + bias[N]: the weight is transposed once into
/// K x N so the shared GEMM kernel runs along rows.
template <typename T>
void evalLinear(const HostTensor &x, const HostTensor &weight, const HostTensor *bias,
                HostTensor &out) {
  int64_t n = weight.shape()[0], k = weight.shape()[1];
  int64_t m = numElements(llvm::ArrayRef<int64_t>(x.shape()).drop_back());
  std::vector<T> vx = loadAs<T>(x), vw = loadAs<T>(weight);
  std::vector<T> packed(static_cast<size_t>(n * k));
  // Bands of 64 weight columns: each writes 64 rows of the packed matrix, a
  // working set small enough for the TLB however large the weight is.
  constexpr int64_t kBand = 64;
  parallelFor((k + kBand - 1) / kBand, 1, [&](int64_t begin, int64_t end) {
    for (int64_t band = begin; band < end; ++band) {
      int64_t c0 = band * kBand, cols = std::min(kBand, k - c0);
      transposeMatrix(n, cols, vw.data() + c0, k, packed.data() + c0 * n, n);
    }
  });
  std::vector<T> y(static_cast<size_t>(m * n));
  gemm<T>(m, n, k, vx.data(), k, packed.data(), n, y.data(), n, /*parallel=*/true);
  if (bias) {
    std::vector<T> vb = loadAs<T>(*bias);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        y[i * n + j] += vb[j];
  }
  storeAll<T>(out, y.data());
}

/// The batched problem of one attention op: q [..., L, E], k [..., S, E],
/// v [..., S, Ev], an optional mask broadcast to [..., L, S].
struct AttentionShape {
  int64_t l, s, e, ev;
  Shape batch;
  /// Per batch dim, element offsets of the next q, k, v matrix and mask slice.
  Shape strideQ, strideK, strideV, strideMask;
  int64_t maskRow = 0, maskCol = 0;
};

llvm::Expected<AttentionShape> attentionShape(Operation *op, Operands in) {
  const Shape &q = in[0]->shape(), &k = in[1]->shape(), &v = in[2]->shape();
  if (q.size() < 2 || k.size() < 2 || v.size() < 2)
    return opError(op, "query, key and value need rank >= 2");
  AttentionShape a{q[q.size() - 2], k[k.size() - 2], q.back(), v.back(), {}, {}, {}, {}, {}};
  Shape bq(q.begin(), q.end() - 2), bk(k.begin(), k.end() - 2), bv(v.begin(), v.end() - 2);
  if (std::string err = shape::broadcast({bq, bk, bv}, a.batch); !err.empty())
    return opError(op, "batch dims: " + err);
  size_t rank = a.batch.size();
  auto scaled = [rank](const Shape &batchShape, int64_t matrixSize) {
    Shape strides = broadcastStrides(batchShape, rank);
    for (int64_t &st : strides)
      st *= matrixSize;
    return strides;
  };
  a.strideQ = scaled(bq, a.l * a.e);
  a.strideK = scaled(bk, a.s * a.e);
  a.strideV = scaled(bv, a.s * a.ev);
  a.strideMask.assign(rank, 0);
  if (in.size() > 3) {
    Shape scores = a.batch;
    scores.push_back(a.l);
    scores.push_back(a.s);
    if (std::string err = shape::broadcastTo(in[3]->shape(), scores); !err.empty())
      return opError(op, "mask: " + err);
    Shape ms = broadcastStrides(in[3]->shape(), rank + 2);
    a.strideMask.assign(ms.begin(), ms.begin() + rank);
    a.maskRow = ms[rank];
    a.maskCol = ms[rank + 1];
  }
  return a;
}

/// One (batch) problem: o = softmax(q k^T * scale + mask) v, L x Ev.
template <typename T>
void attendOne(const AttentionShape &a, const T *q, const T *k, const T *v, const T *mask,
               bool boolMask, bool causal, T scale, T *o) {
  std::vector<T> p(static_cast<size_t>(a.s));
  for (int64_t i = 0; i < a.l; ++i) {
    for (int64_t j = 0; j < a.s; ++j) {
      T dot = 0;
      for (int64_t e = 0; e < a.e; ++e)
        dot += q[i * a.e + e] * k[j * a.e + e];
      T score = dot * scale;
      if (mask) {
        T m = mask[i * a.maskRow + j * a.maskCol];
        // A bool mask selects (false = masked out); a float mask is added.
        score = boolMask ? (m != 0 ? score : negInf<T>()) : score + m;
      }
      if (causal && j > i)
        score = negInf<T>();
      p[j] = score;
    }
    softmaxLine(p.data(), p.data(), a.s, 1, /*log=*/false);
    T *row = o + i * a.ev;
    std::fill(row, row + a.ev, T(0));
    for (int64_t j = 0; j < a.s; ++j)
      for (int64_t e = 0; e < a.ev; ++e)
        row[e] += p[j] * v[j * a.ev + e];
  }
}

template <typename T>
llvm::Error evalAttention(AttentionOp op, Operands in, HostTensor &out) {
  llvm::Expected<AttentionShape> a = attentionShape(op, in);
  if (!a)
    return a.takeError();
  if (numElements(a->batch) * a->l * a->ev != out.numel())
    return opError(op, "result shape does not match the operands");
  std::vector<T> q = loadAs<T>(*in[0]), k = loadAs<T>(*in[1]), v = loadAs<T>(*in[2]);
  const bool hasMask = in.size() > 3;
  std::vector<T> mask = hasMask ? loadAs<T>(*in[3]) : std::vector<T>();
  const bool boolMask = hasMask && in[3]->dtype() == DType::Bool;
  double scale = op.getScale() ? op.getScale()->convertToDouble()
                               : 1.0 / std::sqrt(static_cast<double>(a->e));
  std::vector<T> o(static_cast<size_t>(out.numel()));
  std::array<const int64_t *, 4> strides{a->strideQ.data(), a->strideK.data(),
                                         a->strideV.data(), a->strideMask.data()};
  parallelFor(numElements(a->batch), 1, [&](int64_t begin, int64_t end) {
    forEachStrided<4>(a->batch, strides, {}, begin, end,
                      [&](int64_t b, const std::array<int64_t, 4> &off) {
                        attendOne<T>(*a, q.data() + off[0], k.data() + off[1],
                                     v.data() + off[2], hasMask ? mask.data() + off[3] : nullptr,
                                     boolMask, op.getCausal(), static_cast<T>(scale),
                                     o.data() + b * a->l * a->ev);
                      });
  });
  storeAll<T>(out, o.data());
  return llvm::Error::success();
}

} // namespace

llvm::Expected<HostTensor> evalComposite(Operation *op, Operands in, const InterpOptions &opts) {
  llvm::Expected<HostTensor> out = makeResult(op);
  if (!out)
    return out.takeError();
  // Calls fn with a value of the compute type: float, or double in fp64 mode.
  auto withComputeType = [&](auto fn) { opts.fp64 ? fn(double()) : fn(float()); };
  if (auto softmax = dyn_cast<SoftmaxOp>(op)) {
    withComputeType([&](auto t) {
      evalSoftmax<decltype(t)>(*in[0], *out, softmax.getAxis(), /*log=*/false);
    });
  } else if (auto logSoftmax = dyn_cast<LogSoftmaxOp>(op)) {
    withComputeType([&](auto t) {
      evalSoftmax<decltype(t)>(*in[0], *out, logSoftmax.getAxis(), /*log=*/true);
    });
  } else if (auto norm = dyn_cast<LayerNormOp>(op)) {
    // Operands: input, then weight and bias where present.
    const HostTensor *w = norm.getWeight() ? in[1] : nullptr;
    const HostTensor *b = norm.getBias() ? in[norm.getWeight() ? 2 : 1] : nullptr;
    int64_t cols = numElements(llvm::ArrayRef<int64_t>(in[0]->shape()).drop_front(norm.getAxis()));
    double eps = norm.getEps().convertToDouble();
    withComputeType([&](auto t) {
      normalizeRows<decltype(t)>(*in[0], *out, cols, eps, /*rms=*/false, w, b);
    });
  } else if (auto norm = dyn_cast<RmsNormOp>(op)) {
    const HostTensor *w = norm.getWeight() ? in[1] : nullptr;
    if (in[0]->shape().empty())
      return opError(op, "input must have rank >= 1");
    int64_t cols = in[0]->shape().back();
    double eps = norm.getEps().convertToDouble();
    withComputeType([&](auto t) {
      normalizeRows<decltype(t)>(*in[0], *out, cols, eps, /*rms=*/true, w, nullptr);
    });
  } else if (auto am = dyn_cast<ArgMaxOp>(op)) {
    // Rows along the axis: outer x n x inner; the first NaN, else the first maximum.
    llvm::ArrayRef<int64_t> s(in[0]->shape());
    const int64_t axis = am.getAxis(), n = s[size_t(axis)];
    const int64_t inner = numElements(s.drop_front(axis + 1));
    const int64_t outer = numElements(s.take_front(axis));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t best = 0, firstNan = -1;
        for (int64_t k = 0; k < n; ++k) {
          double v = in[0]->get((o * n + k) * inner + i);
          if (std::isnan(v)) {
            firstNan = k;
            break;
          }
          if (v > in[0]->get((o * n + best) * inner + i))
            best = k;
        }
        out->setInt(o * inner + i, firstNan >= 0 ? firstNan : best);
      }
  } else if (auto topk = dyn_cast<TopKOp>(op)) {
    // Each row along the axis ordered NaN first, then larger first, equal
    // values in index order; the first k kept.
    llvm::ArrayRef<int64_t> s(in[0]->shape());
    const int64_t axis = topk.getAxis(), n = s[size_t(axis)], k = topk.getK();
    const int64_t inner = numElements(s.drop_front(axis + 1));
    const int64_t outer = numElements(s.take_front(axis));
    // Integers compare exactly (past 2^53 a double would not).
    const bool integer = in[0]->dtype() == DType::I32 || in[0]->dtype() == DType::I64;
    std::vector<int64_t> order(static_cast<size_t>(n)), ints(static_cast<size_t>(n));
    std::vector<double> row(static_cast<size_t>(n));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          order[size_t(j)] = j;
          const int64_t at = (o * n + j) * inner + i;
          if (integer)
            ints[size_t(j)] = in[0]->getInt(at);
          else
            row[size_t(j)] = in[0]->get(at);
        }
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          if (integer)
            return ints[size_t(a)] > ints[size_t(b)];
          double x = row[size_t(a)], y = row[size_t(b)];
          if (std::isnan(x) || std::isnan(y))
            return std::isnan(x) && !std::isnan(y);
          return x > y;
        });
        for (int64_t r = 0; r < k; ++r) {
          const int64_t at = (o * k + r) * inner + i, from = order[size_t(r)];
          if (topk.getIndices())
            out->setInt(at, from);
          else if (integer)
            out->setInt(at, ints[size_t(from)]);
          else
            out->set(at, row[size_t(from)]);
        }
      }
  } else if (isa<LinearOp>(op)) {
    const HostTensor *bias = in.size() > 2 ? in[2] : nullptr;
    withComputeType([&](auto t) { evalLinear<decltype(t)>(*in[0], *in[1], bias, *out); });
  } else if (auto attention = dyn_cast<AttentionOp>(op)) {
    llvm::Error err = opts.fp64 ? evalAttention<double>(attention, in, *out)
                                : evalAttention<float>(attention, in, *out);
    if (err)
      return std::move(err);
  } else {
    return opError(op, "the interpreter does not support this composite op");
  }
  return out;
}

} // namespace fusec::interp
