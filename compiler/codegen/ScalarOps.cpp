//===- ScalarOps.cpp - one C++ expression per elementwise op --------------===//
#include "compiler/codegen/ScalarOps.h"

#include "compiler/dialect/FusecDialect.h"
#include "compiler/support/Float16.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

using namespace mlir;

namespace fusec::codegen {

const char *computeType(DType t) {
  switch (t) {
  case DType::F32: case DType::F16: case DType::BF16: return "float";
  case DType::I32: return "int";
  case DType::I64: return "long long";
  case DType::Bool: return "bool";
  }
  return "?";
}

const char *storageType(DType t) {
  switch (t) {
  case DType::F32: return "float";
  case DType::F16: return "fz_f16";
  case DType::BF16: return "fz_bf16";
  case DType::I32: return "int";
  case DType::I64: return "long long";
  case DType::Bool: return "fz_u8";
  }
  return "?";
}

namespace {

std::string floatLiteral(float f) {
  if (std::isnan(f) || std::isinf(f)) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    char buf[40];
    std::snprintf(buf, sizeof buf, "__int_as_float(0x%08x)", bits);
    return buf;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9gf", f);
  std::string s = buf;
  // "1f" is not a float literal in C++; "1.f" is.
  if (s.find_first_of(".eE") == std::string::npos)
    s.insert(s.size() - 1, ".");
  return s;
}

int64_t saturate(double v, int64_t lo, int64_t hi) {
  if (std::isnan(v))
    return 0;
  if (v <= static_cast<double>(lo))
    return lo;
  if (v >= static_cast<double>(hi))
    return hi;
  return static_cast<int64_t>(std::trunc(v));
}

} // namespace

std::string literal(double value, DType t) {
  switch (t) {
  case DType::F32: return floatLiteral(static_cast<float>(value));
  case DType::BF16: return floatLiteral(bf16ToFloat(doubleToBF16(value)));
  case DType::F16: return floatLiteral(halfToFloat(doubleToHalf(value)));
  case DType::I32:
    return "(" + std::to_string(saturate(value, INT32_MIN, INT32_MAX)) + ")";
  case DType::I64: {
    int64_t v = saturate(value, INT64_MIN, INT64_MAX);
    // INT64_MIN has no literal; spell it as an expression.
    return v == INT64_MIN ? "(-9223372036854775807LL - 1)" : "(" + std::to_string(v) + "LL)";
  }
  case DType::Bool: return value != 0.0 || std::isnan(value) ? "true" : "false";
  }
  return "0";
}

namespace {

/// Conversion of a compute value of dtype `from` to dtype `to` (cast semantics).
std::string castExpr(const std::string &a, DType from, DType to) {
  bool fromFloat = isFloat(from);
  switch (to) {
  case DType::F32: return fromFloat ? a : "((float)(" + a + "))";
  case DType::BF16:
    return "fz_round_bf16(" + (fromFloat ? a : "(float)(" + a + ")") + ")";
  case DType::F16:
    return "fz_round_f16(" + (fromFloat ? a : "(float)(" + a + ")") + ")";
  case DType::I32: return fromFloat ? "fz_f2i(" + a + ")" : "((int)(" + a + "))";
  case DType::I64: return fromFloat ? "fz_f2ll(" + a + ")" : "((long long)(" + a + "))";
  case DType::Bool: return "((" + a + ") != 0)";
  }
  return a;
}

std::string call(const char *fn, const std::string &a) { return std::string(fn) + "(" + a + ")"; }

} // namespace

std::string scalarExpr(Operation *op, const std::vector<std::string> &x) {
  DType t = dtypeOf(op->getResult(0));
  bool f = isFloat(t);
  // Results stored in 16 bits take the fast hardware approximations (see the prelude).
  bool fast = t == DType::BF16 || t == DType::F16;
  auto expf = [&](const std::string &a) { return call(fast ? "__expf" : "expf", a); };
  auto sigmoid = [&](const std::string &a) {
    return fast ? "__fdividef(1.f, 1.f + __expf(-" + a + "))"
                : "(1.f / (1.f + expf(-" + a + ")))";
  };
  auto tanhf = [&](const std::string &a) { return call(fast ? "fz_tanh_fast" : "tanhf", a); };
  auto bin = [&](const char *o) { return "(" + x[0] + " " + o + " " + x[1] + ")"; };
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case([&](NegOp) { return "(-" + x[0] + ")"; })
      .Case([&](AbsOp) {
        return f ? call("fabsf", x[0]) : "(" + x[0] + " < 0 ? -" + x[0] + " : " + x[0] + ")";
      })
      .Case([&](ExpOp) { return expf(x[0]); })
      .Case([&](LogOp) { return call(fast ? "__logf" : "logf", x[0]); })
      .Case([&](SqrtOp) { return call("sqrtf", x[0]); })
      .Case([&](RsqrtOp) { return call("rsqrtf", x[0]); })
      .Case([&](ReciprocalOp) { return "(1.f / " + x[0] + ")"; })
      .Case([&](TanhOp) { return tanhf(x[0]); })
      .Case([&](SigmoidOp) { return sigmoid(x[0]); })
      .Case([&](ReluOp) {
        // NaN < 0 is false, so NaN passes through as in the reference.
        return "(" + x[0] + " < 0 ? " + (f ? "0.f" : "0") + " : " + x[0] + ")";
      })
      .Case([&](SiluOp) { return "(" + x[0] + " * " + sigmoid(x[0]) + ")"; })
      .Case([&](SinOp) { return call(fast ? "fz_sin_fast" : "sinf", x[0]); })
      .Case([&](CosOp) { return call(fast ? "fz_cos_fast" : "cosf", x[0]); })
      .Case([&](ErfOp) { return call("erff", x[0]); })
      .Case([&](GeluOp g) {
        const std::string &a = x[0];
        if (g.getApproximate() == "tanh")
          return "(0.5f * " + a + " * (1.f + " +
                 tanhf("0.7978845608f * (" + a + " + 0.044715f * " + a + " * " + a + " * " + a +
                       ")") +
                 "))";
        return fast ? call("fz_gelu_fast", a)
                    : "(0.5f * " + a + " * (1.f + erff(" + a + " * 0.70710678118f)))";
      })
      .Case([&](CastOp c) { return castExpr(x[0], dtypeOf(c.getInput()), t); })
      .Case([&](AddOp) { return bin("+"); })
      .Case([&](SubOp) { return bin("-"); })
      .Case([&](MulOp) { return bin("*"); })
      .Case([&](DivOp) {
        if (fast)
          return "__fdividef(" + x[0] + ", " + x[1] + ")";
        return f ? bin("/")
                 : "(" + x[1] + " == 0 ? 0 : " + x[0] + " / " + x[1] + ")";
      })
      .Case([&](PowOp) { return std::string(fast ? "__powf(" : "powf(") + x[0] + ", " + x[1] + ")"; })
      .Case([&](MaximumOp) { return "fz_max(" + x[0] + ", " + x[1] + ")"; })
      .Case([&](MinimumOp) { return "fz_min(" + x[0] + ", " + x[1] + ")"; })
      .Case([&](EqOp) { return bin("=="); })
      .Case([&](NeOp) { return bin("!="); })
      .Case([&](LtOp) { return bin("<"); })
      .Case([&](LeOp) { return bin("<="); })
      .Case([&](GtOp) { return bin(">"); })
      .Case([&](GeOp) { return bin(">="); })
      .Case([&](WhereOp) { return "(" + x[0] + " ? " + x[1] + " : " + x[2] + ")"; })
      .Default([](Operation *) { return std::string(); });
}

ReductionRule reductionRule(Operation *op) {
  DType t = dtypeOf(op->getOperand(0));
  bool f = isFloat(t);
  ReductionRule r;
  r.accType = f ? "float" : "long long";
  std::string inf = "__int_as_float(0x7f800000)";
  if (isa<SumOp, MeanOp>(op)) {
    r.identity = f ? "0.f" : "0LL";
    r.functor = "fz_sum_op()";
    r.isMean = isa<MeanOp>(op);
  } else if (isa<MaxOp>(op)) {
    r.identity = f ? "(-" + inf + ")" : (t == DType::I32 ? "(-2147483647LL - 1)"
                                                          : "(-9223372036854775807LL - 1)");
    r.functor = "fz_max_op()";
  } else {
    r.identity = f ? inf : (t == DType::I32 ? "2147483647LL" : "9223372036854775807LL");
    r.functor = "fz_min_op()";
  }
  return r;
}

} // namespace fusec::codegen
