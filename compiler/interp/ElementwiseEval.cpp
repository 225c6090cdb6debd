//===- ElementwiseEval.cpp - unary, binary, compare, where, cast, constant -===//
//
// Every elementwise op is a scalar function applied through one broadcasting
// loop (mapInto). Operands are loaded in the compute type (float, double in
// fp64 mode, int64_t for integers and bool), the function runs per element,
// and the result rounds to its dtype once on store. The functions live in
// small tables keyed by op type: adding an op is adding a row.
//
//===----------------------------------------------------------------------===//
#include "compiler/interp/EvalSupport.h"

#include "compiler/dialect/FusecDialect.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace fusec::interp {
namespace {

//===----------------------------------------------------------------------===//
// Scalar functions
//===----------------------------------------------------------------------===//

// Float: instantiated for float (the fp32 reference) and double (fp64 mode);
// std:: overloads pick expf, erff, ... for float.
template <typename T> T negF(T x) { return -x; }
template <typename T> T absF(T x) { return std::fabs(x); }
template <typename T> T reluF(T x) { return x > 0 || std::isnan(x) ? x : T(0); }
template <typename T> T expF(T x) { return std::exp(x); }
template <typename T> T logF(T x) { return std::log(x); }
template <typename T> T sqrtF(T x) { return std::sqrt(x); }
template <typename T> T rsqrtF(T x) { return T(1) / std::sqrt(x); }
template <typename T> T reciprocalF(T x) { return T(1) / x; }
template <typename T> T tanhF(T x) { return std::tanh(x); }
template <typename T> T sigmoidF(T x) { return T(1) / (T(1) + std::exp(-x)); }
template <typename T> T siluF(T x) { return x * sigmoidF(x); }
template <typename T> T sinF(T x) { return std::sin(x); }
template <typename T> T cosF(T x) { return std::cos(x); }
template <typename T> T erfF(T x) { return std::erf(x); }
/// 0.5 x (1 + erf(x / sqrt 2))
template <typename T> T geluErfF(T x) {
  return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
}
/// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
template <typename T> T geluTanhF(T x) {
  const T sqrt2OverPi = T(0.79788456080286535588);
  return T(0.5) * x * (T(1) + std::tanh(sqrt2OverPi * (x + T(0.044715) * x * x * x)));
}

template <typename T> T addF(T a, T b) { return a + b; }
template <typename T> T subF(T a, T b) { return a - b; }
template <typename T> T mulF(T a, T b) { return a * b; }
template <typename T> T divF(T a, T b) { return a / b; }
template <typename T> T powF(T a, T b) { return std::pow(a, b); }
template <typename T> T maximumF(T a, T b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<T>::quiet_NaN();
  return a > b ? a : b;
}
template <typename T> T minimumF(T a, T b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<T>::quiet_NaN();
  return a < b ? a : b;
}

// Integer: int64 arithmetic that wraps (through uint64_t, where signed
// overflow would be undefined); i32 results wrap again on store.
int64_t wrap(uint64_t v) { return static_cast<int64_t>(v); }
int64_t negI(int64_t x) { return wrap(0 - static_cast<uint64_t>(x)); }
int64_t absI(int64_t x) { return x < 0 ? negI(x) : x; }
int64_t reluI(int64_t x) { return x > 0 ? x : 0; }
int64_t addI(int64_t a, int64_t b) { return wrap(uint64_t(a) + uint64_t(b)); }
int64_t subI(int64_t a, int64_t b) { return wrap(uint64_t(a) - uint64_t(b)); }
int64_t mulI(int64_t a, int64_t b) { return wrap(uint64_t(a) * uint64_t(b)); }
/// Truncates toward zero; x / 0 = 0 (docs/graph-format.md); INT64_MIN / -1 wraps.
int64_t divI(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  if (b == -1)
    return negI(a);
  return a / b;
}
int64_t maximumI(int64_t a, int64_t b) { return a > b ? a : b; }
int64_t minimumI(int64_t a, int64_t b) { return a < b ? a : b; }

// Comparisons, for every compute type; NaN compares unequal to everything.
template <typename T> T eqC(T a, T b) { return a == b ? T(1) : T(0); }
template <typename T> T neC(T a, T b) { return a != b ? T(1) : T(0); }
template <typename T> T ltC(T a, T b) { return a < b ? T(1) : T(0); }
template <typename T> T leC(T a, T b) { return a <= b ? T(1) : T(0); }
template <typename T> T gtC(T a, T b) { return a > b ? T(1) : T(0); }
template <typename T> T geC(T a, T b) { return a >= b ? T(1) : T(0); }

//===----------------------------------------------------------------------===//
// Tables
//===----------------------------------------------------------------------===//

/// One op's scalar function per compute type; i64 is null for float-only ops.
struct UnaryFns {
  TypeID op;
  float (*f32)(float);
  double (*f64)(double);
  int64_t (*i64)(int64_t);
};
struct BinaryFns {
  TypeID op;
  float (*f32)(float, float);
  double (*f64)(double, double);
  int64_t (*i64)(int64_t, int64_t);
};

const UnaryFns *findUnary(TypeID id) {
  static const UnaryFns table[] = {
      {TypeID::get<NegOp>(), negF<float>, negF<double>, negI},
      {TypeID::get<AbsOp>(), absF<float>, absF<double>, absI},
      {TypeID::get<ReluOp>(), reluF<float>, reluF<double>, reluI},
      {TypeID::get<ExpOp>(), expF<float>, expF<double>, nullptr},
      {TypeID::get<LogOp>(), logF<float>, logF<double>, nullptr},
      {TypeID::get<SqrtOp>(), sqrtF<float>, sqrtF<double>, nullptr},
      {TypeID::get<RsqrtOp>(), rsqrtF<float>, rsqrtF<double>, nullptr},
      {TypeID::get<ReciprocalOp>(), reciprocalF<float>, reciprocalF<double>, nullptr},
      {TypeID::get<TanhOp>(), tanhF<float>, tanhF<double>, nullptr},
      {TypeID::get<SigmoidOp>(), sigmoidF<float>, sigmoidF<double>, nullptr},
      {TypeID::get<SiluOp>(), siluF<float>, siluF<double>, nullptr},
      {TypeID::get<SinOp>(), sinF<float>, sinF<double>, nullptr},
      {TypeID::get<CosOp>(), cosF<float>, cosF<double>, nullptr},
      {TypeID::get<ErfOp>(), erfF<float>, erfF<double>, nullptr},
  };
  for (const UnaryFns &fns : table)
    if (fns.op == id)
      return &fns;
  return nullptr;
}

/// Arithmetic ops (result dtype = operand dtype) and comparisons (bool result)
/// share one table: their loops are identical.
const BinaryFns *findBinary(TypeID id) {
  static const BinaryFns table[] = {
      {TypeID::get<AddOp>(), addF<float>, addF<double>, addI},
      {TypeID::get<SubOp>(), subF<float>, subF<double>, subI},
      {TypeID::get<MulOp>(), mulF<float>, mulF<double>, mulI},
      {TypeID::get<DivOp>(), divF<float>, divF<double>, divI},
      {TypeID::get<PowOp>(), powF<float>, powF<double>, nullptr},
      {TypeID::get<MaximumOp>(), maximumF<float>, maximumF<double>, maximumI},
      {TypeID::get<MinimumOp>(), minimumF<float>, minimumF<double>, minimumI},
      {TypeID::get<EqOp>(), eqC<float>, eqC<double>, eqC<int64_t>},
      {TypeID::get<NeOp>(), neC<float>, neC<double>, neC<int64_t>},
      {TypeID::get<LtOp>(), ltC<float>, ltC<double>, ltC<int64_t>},
      {TypeID::get<LeOp>(), leC<float>, leC<double>, leC<int64_t>},
      {TypeID::get<GtOp>(), gtC<float>, gtC<double>, gtC<int64_t>},
      {TypeID::get<GeOp>(), geC<float>, geC<double>, geC<int64_t>},
  };
  for (const BinaryFns &fns : table)
    if (fns.op == id)
      return &fns;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// The broadcasting loop
//===----------------------------------------------------------------------===//

/// out[i] = fn(in_0[i], ..., in_{N-1}[i]) with every input broadcast to the
/// shape of `out`, computed in T and rounded to out's dtype on store.
template <typename T, size_t N, typename Fn>
void mapInto(HostTensor &out, const std::array<const HostTensor *, N> &ins, Fn fn) {
  const Shape &shape = out.shape();
  std::array<std::vector<T>, N> values;
  std::array<Shape, N> strides;
  std::array<const int64_t *, N> stridePtrs;
  for (size_t k = 0; k < N; ++k) {
    values[k] = loadAs<T>(*ins[k]);
    strides[k] = broadcastStrides(ins[k]->shape(), shape.size());
    stridePtrs[k] = strides[k].data();
  }
  std::vector<T> result(static_cast<size_t>(out.numel()));
  parallelFor(out.numel(), kElementGrain, [&](int64_t begin, int64_t end) {
    forEachStrided<N>(shape, stridePtrs, {}, begin, end,
                      [&](int64_t i, const std::array<int64_t, N> &o) {
                        if constexpr (N == 1)
                          result[i] = fn(values[0][o[0]]);
                        else if constexpr (N == 2)
                          result[i] = fn(values[0][o[0]], values[1][o[1]]);
                        else
                          result[i] = fn(values[0][o[0]], values[1][o[1]], values[2][o[2]]);
                      });
  });
  storeAll<T>(out, result.data());
}

enum class ComputeType { F32, F64, I64 };

/// Floats compute in float (double with opts.fp64), integers and bool in int64.
ComputeType computeTypeOf(DType operand, const InterpOptions &opts) {
  if (!isFloat(operand))
    return ComputeType::I64;
  return opts.fp64 ? ComputeType::F64 : ComputeType::F32;
}

/// Applies a row of a function table in the compute type of `in[0]`.
template <typename Fns, size_t N>
llvm::Error applyFns(Operation *op, const Fns &fns, const std::array<const HostTensor *, N> &in,
                     HostTensor &out, const InterpOptions &opts) {
  switch (computeTypeOf(in[0]->dtype(), opts)) {
  case ComputeType::F32: mapInto<float, N>(out, in, fns.f32); break;
  case ComputeType::F64: mapInto<double, N>(out, in, fns.f64); break;
  case ComputeType::I64:
    if (!fns.i64)
      return opError(op, llvm::Twine("no integer form for dtype ") +
                             std::string(dtypeName(in[0]->dtype())));
    mapInto<int64_t, N>(out, in, fns.i64);
    break;
  }
  return llvm::Error::success();
}

void evalWhere(Operands in, HostTensor &out, const InterpOptions &opts) {
  std::array<const HostTensor *, 3> ins{in[0], in[1], in[2]};
  auto select = [](auto c, auto a, auto b) { return c != 0 ? a : b; };
  switch (computeTypeOf(in[1]->dtype(), opts)) {
  case ComputeType::F32: return mapInto<float, 3>(out, ins, select);
  case ComputeType::F64: return mapInto<double, 3>(out, ins, select);
  case ComputeType::I64: return mapInto<int64_t, 3>(out, ins, select);
  }
}

/// Conversion by HostTensor's rules, which are cast's rules: floats go
/// through double (exact), everything else through int64 (exact).
void evalCast(const HostTensor &in, HostTensor &out) {
  if (in.dtype() == out.dtype()) {
    std::copy(in.data(), in.data() + in.nbytes(), out.data());
    return;
  }
  bool fromFloat = isFloat(in.dtype());
  parallelFor(in.numel(), kElementGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if (fromFloat)
        out.set(i, in.get(i));
      else
        out.setInt(i, in.getInt(i));
    }
  });
}

void evalConstant(ConstantOp op, HostTensor &out) {
  if (out.numel() == 0)
    return;
  out.set(0, op.getValue().convertToDouble());
  // Every element equals the first: replicate its bytes.
  int64_t size = dtypeBytes(out.dtype());
  for (int64_t i = 1, n = out.numel(); i < n; ++i)
    std::memcpy(out.data() + i * size, out.data(), size);
}

/// Element (i_0, ..., i_n) = i_dim: the walk's offset with stride 1 on `dim`.
void evalIota(IotaOp op, HostTensor &out) {
  Shape strides(out.shape().size(), 0);
  strides[op.getDim()] = 1;
  std::array<const int64_t *, 1> stridePtrs{strides.data()};
  parallelFor(out.numel(), kElementGrain, [&](int64_t begin, int64_t end) {
    forEachStrided<1>(out.shape(), stridePtrs, {}, begin, end,
                      [&](int64_t i, const std::array<int64_t, 1> &o) { out.setInt(i, o[0]); });
  });
}

} // namespace

llvm::Expected<HostTensor> evalElementwise(Operation *op, Operands in,
                                           const InterpOptions &opts) {
  llvm::Expected<HostTensor> out = makeResult(op);
  if (!out)
    return out.takeError();
  TypeID id = op->getName().getTypeID();
  if (auto gelu = dyn_cast<GeluOp>(op)) {
    bool tanhForm = gelu.getApproximate() == "tanh";
    UnaryFns fns{id, tanhForm ? geluTanhF<float> : geluErfF<float>,
                 tanhForm ? geluTanhF<double> : geluErfF<double>, nullptr};
    if (llvm::Error err = applyFns<UnaryFns, 1>(op, fns, {in[0]}, *out, opts))
      return std::move(err);
  } else if (const UnaryFns *unary = findUnary(id)) {
    if (llvm::Error err = applyFns<UnaryFns, 1>(op, *unary, {in[0]}, *out, opts))
      return std::move(err);
  } else if (const BinaryFns *binary = findBinary(id)) {
    if (llvm::Error err = applyFns<BinaryFns, 2>(op, *binary, {in[0], in[1]}, *out, opts))
      return std::move(err);
  } else if (isa<WhereOp>(op)) {
    evalWhere(in, *out, opts);
  } else if (isa<CastOp>(op)) {
    evalCast(*in[0], *out);
  } else if (auto constant = dyn_cast<ConstantOp>(op)) {
    evalConstant(constant, *out);
  } else if (auto iota = dyn_cast<IotaOp>(op)) {
    evalIota(iota, *out);
  } else {
    return opError(op, "the interpreter does not support this op");
  }
  return out;
}

} // namespace fusec::interp
