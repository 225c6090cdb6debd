//===- InterpTestUtil.h - building and running small fusec functions ------===//
#pragma once

#include "compiler/interp/Interpreter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace fusec::testing {

using Values = std::vector<double>;

/// A tensor holding `values` (row-major), stored with HostTensor::set.
HostTensor tensor(DType dtype, std::vector<int64_t> shape, const Values &values);
/// All elements of `t` as doubles.
Values values(const HostTensor &t);
/// "tensor<2x3xf32>", "tensor<i1>".
std::string tensorType(DType dtype, const std::vector<int64_t> &shape);

/// Expects `t` to have `dtype` and `shape` and to hold `expected` within
/// |got - expected| <= tol * max(floor, |expected|); NaN matches NaN, Inf
/// matches Inf of the same sign; tol = 0 asks for exact equality.
void expectTensor(const HostTensor &t, DType dtype, const std::vector<int64_t> &shape,
                  const Values &expected, double tol = 0, double floor = 1);

/// Parses MLIR text and runs its function `@f`.
class InterpTest : public ::testing::Test {
protected:
  InterpTest();

  mlir::OwningOpRef<mlir::ModuleOp> parse(const std::string &text);
  /// Runs @f of `text`; a failed parse or interpretation fails the test and
  /// returns no results.
  std::vector<HostTensor> run(const std::string &text, const std::vector<HostTensor> &args,
                              const InterpOptions &opts = {});
  /// The error message of running @f, or "" when it succeeds.
  std::string runError(const std::string &text, const std::vector<HostTensor> &args);

  /// `%0 = fusec.<op> %x {attrs} : (T) -> R` applied to `x`.
  HostTensor unary(const std::string &op, const HostTensor &x, DType resultType,
                   const std::vector<int64_t> &resultShape, const std::string &attrs = "",
                   const InterpOptions &opts = {});
  /// Same-dtype, same-shape unary op.
  HostTensor unary(const std::string &op, const HostTensor &x, const std::string &attrs = "",
                   const InterpOptions &opts = {});
  /// `%0 = fusec.<op> %a, %b ... : (A, B) -> R`.
  HostTensor binary(const std::string &op, const HostTensor &a, const HostTensor &b,
                    DType resultType, const std::vector<int64_t> &resultShape,
                    const std::string &attrs = "", const InterpOptions &opts = {});
  /// Any op over `args`, written `fusec.<op> %a0, %a1, ... {attrs}`.
  HostTensor nary(const std::string &op, const std::vector<HostTensor> &args, DType resultType,
                  const std::vector<int64_t> &resultShape, const std::string &attrs = "",
                  const InterpOptions &opts = {});
  /// An op with no operands (constant, iota).
  HostTensor nullary(const std::string &op, const std::string &attrs, DType resultType,
                     const std::vector<int64_t> &resultShape);

  mlir::MLIRContext context;
};

} // namespace fusec::testing
