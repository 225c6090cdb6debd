//===- InterpTestUtil.cpp - building and running small fusec functions ----===//
#include "InterpTestUtil.h"

#include "compiler/dialect/FusecDialect.h"

#include "mlir/Parser/Parser.h"

#include <cmath>

namespace fusec::testing {

HostTensor tensor(DType dtype, std::vector<int64_t> shape, const Values &values) {
  HostTensor t(dtype, std::move(shape));
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel()) << "test data has the wrong size";
  for (int64_t i = 0; i < t.numel() && i < static_cast<int64_t>(values.size()); ++i)
    t.set(i, values[i]);
  return t;
}

Values values(const HostTensor &t) {
  Values v;
  for (int64_t i = 0; i < t.numel(); ++i)
    v.push_back(t.get(i));
  return v;
}

std::string tensorType(DType dtype, const std::vector<int64_t> &shape) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + (dtype == DType::Bool ? "i1" : std::string(dtypeName(dtype))) + ">";
}

void expectTensor(const HostTensor &t, DType dtype, const std::vector<int64_t> &shape,
                  const Values &expected, double tol, double floor) {
  ASSERT_EQ(t.dtype(), dtype) << dtypeName(t.dtype()) << " vs " << dtypeName(dtype);
  ASSERT_EQ(t.shape(), shape);
  ASSERT_EQ(static_cast<size_t>(t.numel()), expected.size());
  for (int64_t i = 0; i < t.numel(); ++i) {
    double got = t.get(i), want = expected[i];
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "element " << i << ": got " << got << ", want NaN";
    } else if (std::isinf(want) || tol == 0) {
      EXPECT_EQ(got, want) << "element " << i;
    } else {
      EXPECT_NEAR(got, want, tol * std::max(floor, std::fabs(want))) << "element " << i;
    }
  }
}

InterpTest::InterpTest() {
  context.loadDialect<FusecDialect, mlir::func::FuncDialect>();
}

mlir::OwningOpRef<mlir::ModuleOp> InterpTest::parse(const std::string &text) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  EXPECT_TRUE(module) << "cannot parse:\n" << text;
  return module;
}

std::vector<HostTensor> InterpTest::run(const std::string &text,
                                        const std::vector<HostTensor> &args,
                                        const InterpOptions &opts) {
  mlir::OwningOpRef<mlir::ModuleOp> module = parse(text);
  if (!module)
    return {};
  auto f = module->lookupSymbol<mlir::func::FuncOp>("f");
  EXPECT_TRUE(f) << "no @f in:\n" << text;
  if (!f)
    return {};
  llvm::Expected<std::vector<HostTensor>> results = interpret(f, args, opts);
  if (!results) {
    ADD_FAILURE() << llvm::toString(results.takeError()) << "\nin:\n" << text;
    return {};
  }
  return std::move(*results);
}

std::string InterpTest::runError(const std::string &text, const std::vector<HostTensor> &args) {
  mlir::OwningOpRef<mlir::ModuleOp> module = parse(text);
  if (!module)
    return "<parse error>";
  llvm::Expected<std::vector<HostTensor>> results =
      interpret(module->lookupSymbol<mlir::func::FuncOp>("f"), args);
  if (results)
    return "";
  return llvm::toString(results.takeError());
}

HostTensor InterpTest::nary(const std::string &op, const std::vector<HostTensor> &args,
                            DType resultType, const std::vector<int64_t> &resultShape,
                            const std::string &attrs, const InterpOptions &opts) {
  std::string params, operands, types;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string t = tensorType(args[i].dtype(), args[i].shape());
    std::string sep = i ? ", " : "";
    params += sep + "%a" + std::to_string(i) + ": " + t;
    operands += sep + "%a" + std::to_string(i);
    types += sep + t;
  }
  std::string result = tensorType(resultType, resultShape);
  std::string text = "func.func @f(" + params + ") -> " + result + " {\n  %0 = fusec." + op +
                     " " + operands + (attrs.empty() ? "" : " {" + attrs + "}") + " : (" +
                     types + ") -> " + result + "\n  return %0 : " + result + "\n}\n";
  std::vector<HostTensor> r = run(text, args, opts);
  return r.empty() ? HostTensor(DType::F32, {0}) : r[0];
}

HostTensor InterpTest::unary(const std::string &op, const HostTensor &x, DType resultType,
                             const std::vector<int64_t> &resultShape, const std::string &attrs,
                             const InterpOptions &opts) {
  return nary(op, {x}, resultType, resultShape, attrs, opts);
}

HostTensor InterpTest::unary(const std::string &op, const HostTensor &x,
                             const std::string &attrs, const InterpOptions &opts) {
  return nary(op, {x}, x.dtype(), x.shape(), attrs, opts);
}

HostTensor InterpTest::binary(const std::string &op, const HostTensor &a, const HostTensor &b,
                              DType resultType, const std::vector<int64_t> &resultShape,
                              const std::string &attrs, const InterpOptions &opts) {
  return nary(op, {a, b}, resultType, resultShape, attrs, opts);
}

HostTensor InterpTest::nullary(const std::string &op, const std::string &attrs,
                               DType resultType, const std::vector<int64_t> &resultShape) {
  std::string result = tensorType(resultType, resultShape);
  std::string text = "func.func @f() -> " + result + " {\n  %0 = fusec." + op + " {" + attrs +
                     "} : " + result + "\n  return %0 : " + result + "\n}\n";
  std::vector<HostTensor> r = run(text, {});
  return r.empty() ? HostTensor(DType::F32, {0}) : r[0];
}

} // namespace fusec::testing
