//===- PaddedGraphTest.cpp - one padded compile exact at every size --------===//
#include "compiler/dialect/FusecDialect.h"
#include "compiler/interp/Interpreter.h"
#include "compiler/pipeline/PaddedGraph.h"
#include "frontends/json/GraphReader.h"
#include "frontends/onnx/OnnxReader.h"
#include "runtime/Safetensors.h"
#include "fusec/fusec.h"
#include "runtime/TensorCompare.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace fusec {
namespace {

TEST(PaddedSize, PowersOfTwoAndOneAndAHalfTimesThem) {
  const int64_t want[] = {1, 2, 3, 4, 6, 6, 8, 8, 12, 12, 12, 12, 16};
  for (int64_t n = 1; n <= 13; ++n)
    EXPECT_EQ(paddedSize(n, 1 << 20), want[n - 1]) << n;
  EXPECT_EQ(paddedSize(1000, 4096), 1024);
  EXPECT_EQ(paddedSize(1025, 4096), 1536);
  EXPECT_EQ(paddedSize(4096, 4096), 4096);
  EXPECT_EQ(paddedSize(3000, 3100), 3072);
  EXPECT_EQ(paddedSize(3073, 3100), 3100);  // the bound, never past it
  // At most a third of a padded size is padding.
  for (int64_t n = 1; n <= 5000; ++n)
    EXPECT_LE(paddedSize(n, 1 << 20) * 2, n * 3) << n;
}

mlir::OwningOpRef<mlir::ModuleOp> read(mlir::MLIRContext &ctx, const std::string &text,
                                       const SizeMap &sizes) {
  auto m = importGraphText(text, "padded.json", ctx, sizes);
  if (!m) {
    ADD_FAILURE() << llvm::toString(m.takeError());
    return {};
  }
  return std::move(*m);
}

/// Every op that combines positions along S: reductions (sum, mean, max,
/// argmax), a softmax over S, a product contracting S, attention over S
/// keys (not causal; causal), and ops that only move or make positions
/// (reshape, transpose, an iota over S; S merged into one dim with 16 and
/// back, exp's 1s in the padding carried through). And what the padding
/// must not leak into: 0 times log(0) (not 0), a join of a zero operand with
/// one that is not zero past S, keys that are -inf past S under an added
/// float mask.
const char *kGraph = R"({"fusec": 1, "name": "padded",
 "inputs": [{"name": "x", "dtype": "f32", "shape": ["S", 16]},
            {"name": "w", "dtype": "f32", "shape": [16, 16]},
            {"name": "y2", "dtype": "f32", "shape": ["S", "S"]}],
 "nodes": [
  {"name": "h", "op": "matmul", "inputs": ["x", "w"]},
  {"name": "row", "op": "iota", "attrs": {"shape": ["S", 16], "dim": 0, "dtype": "f32"}},
  {"name": "tenth", "op": "constant", "attrs": {"value": 0.1, "dtype": "f32", "shape": []}},
  {"name": "pos", "op": "mul", "inputs": ["row", "tenth"]},
  {"name": "e", "op": "exp", "inputs": ["h"]},
  {"name": "hp", "op": "add", "inputs": ["e", "pos"]},
  {"name": "total", "op": "sum", "inputs": ["hp"], "attrs": {"axes": [0]}},
  {"name": "avg", "op": "mean", "inputs": ["hp"], "attrs": {"axes": [0]}},
  {"name": "top", "op": "max", "inputs": ["hp"], "attrs": {"axes": [0]}},
  {"name": "where_top", "op": "argmax", "inputs": ["hp"], "attrs": {"axis": 0}},
  {"name": "col", "op": "softmax", "inputs": ["hp"], "attrs": {"axis": 0}},
  {"name": "ht", "op": "transpose", "inputs": ["hp"], "attrs": {"perm": [1, 0]}},
  {"name": "gram", "op": "matmul", "inputs": ["ht", "e"]},
  {"name": "q", "op": "reshape", "inputs": ["hp"], "attrs": {"shape": [1, "S", 16]}},
  {"name": "att", "op": "scaled_dot_product_attention", "inputs": ["q", "q", "q"]},
  {"name": "causal", "op": "scaled_dot_product_attention", "inputs": ["q", "q", "q"], "attrs": {"causal": true}},
  {"name": "flat", "op": "reshape", "inputs": ["e"], "attrs": {"shape": [-1]}},
  {"name": "g", "op": "gelu", "inputs": ["flat"]},
  {"name": "back", "op": "reshape", "inputs": ["g"], "attrs": {"shape": ["S", 16]}},
  {"name": "total2", "op": "sum", "inputs": ["back"], "attrs": {"axes": [0]}},
  {"name": "ax", "op": "abs", "inputs": ["x"]},
  {"name": "lx", "op": "log", "inputs": ["ax"]},
  {"name": "xl", "op": "mul", "inputs": ["x", "lx"]},
  {"name": "total3", "op": "sum", "inputs": ["xl"], "attrs": {"axes": [0]}},
  {"name": "rs", "op": "sum", "inputs": ["x"], "attrs": {"axes": [1], "keepdims": true}},
  {"name": "ers", "op": "exp", "inputs": ["rs"]},
  {"name": "cg", "op": "concat", "inputs": ["y2", "ers"], "attrs": {"axis": 1}},
  {"name": "total4", "op": "sum", "inputs": ["cg"], "attrs": {"axes": [0, 1]}},
  {"name": "lk", "op": "reshape", "inputs": ["lx"], "attrs": {"shape": [1, "S", 16]}},
  {"name": "pos1", "op": "iota", "attrs": {"shape": [1, "S"], "dim": 1, "dtype": "f32"}},
  {"name": "am", "op": "mul", "inputs": ["pos1", "tenth"]},
  {"name": "q2", "op": "reshape", "inputs": ["x"], "attrs": {"shape": [1, "S", 16]}},
  {"name": "att2", "op": "scaled_dot_product_attention", "inputs": ["q2", "lk", "q2", "am"]}
 ],
 "outputs": ["total", "avg", "top", "where_top", "col", "gram", "att", "causal", "total2",
             "total3", "total4", "att2"]})";

std::vector<HostTensor> inputsAt(int64_t s, uint64_t seed) {
  std::vector<HostTensor> in = {randomTensor(DType::F32, {s, 16}, seed),
                                randomTensor(DType::F32, {16, 16}, seed + 1),
                                randomTensor(DType::F32, {s, s}, seed + 2)};
  scaleFloatValues(in[0], 0.25);
  scaleFloatValues(in[1], 0.25);
  return in;
}

// One graph compiled at S = 12 gives, at every size from 1 to 12, what the
// graph read at that size gives.
TEST(PaddedGraph, OneCompileIsExactAtEverySizeUpToIt) {
  mlir::MLIRContext ctx;
  auto padded = readPadded([&](const SizeMap &at) -> llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> {
    return importGraphText(kGraph, "padded.json", ctx, at);
  }, {{"S", 12}}, {{"S", 64}});
  ASSERT_TRUE(bool(padded)) << llvm::toString(padded.takeError());
  mlir::func::FuncOp f = graphFunction(**padded);
  PaddedSignature sig = paddedSignature(f);
  ASSERT_TRUE(sig.padded());
  EXPECT_EQ(sig.sizeArgs.back(), "S");
  EXPECT_EQ(sig.argShapes[0], (std::vector<int64_t>{12, 16}));
  for (int64_t s : {1, 5, 11, 12}) {
    auto exact = read(ctx, kGraph, {{"S", s}});
    ASSERT_TRUE(exact);
    std::vector<HostTensor> in = inputsAt(s, 7 * s);
    auto want = interpret(graphFunction(*exact), in);
    ASSERT_TRUE(bool(want)) << llvm::toString(want.takeError());
    auto got = interpretPadded(f, in, {{"S", s}});
    ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
    std::vector<HostTensor> &cropped = *got;
    ASSERT_EQ(cropped.size(), want->size());
    for (size_t i = 0; i < cropped.size(); ++i) {
      ASSERT_EQ(cropped[i].shape(), (*want)[i].shape()) << "S=" << s << " output " << i;
      CheckResult c = compareTensors(cropped[i], (*want)[i], 1e-5);
      EXPECT_TRUE(c.pass) << "S=" << s << " output " << i << ": " << c.describe();
    }
  }
  // A size past the padded one, or inputs of another size than the call's,
  // are errors.
  auto past = padInputs(sig, inputsAt(13, 1), {{"S", 13}});
  ASSERT_FALSE(bool(past));
  EXPECT_NE(past.takeError().message().find("past the 12"), std::string::npos);
  auto wrong = padInputs(sig, inputsAt(5, 1), {{"S", 6}});
  ASSERT_FALSE(bool(wrong));
  EXPECT_NE(wrong.takeError().message().find("expected [6, 16]"), std::string::npos);
}

/// A decode step: a query against a cache of T rows joined with this
/// step's row, grouped-query heads (2 K/V heads, 8 query heads) by a repeat.
const char *kDecode = R"({"fusec": 1, "name": "decode",
 "inputs": [{"name": "x", "dtype": "f32", "shape": [1, 64]},
            {"name": "w_q", "dtype": "f32", "shape": [64, 64]},
            {"name": "w_k", "dtype": "f32", "shape": [16, 64]},
            {"name": "w_v", "dtype": "f32", "shape": [16, 64]},
            {"name": "cache_k", "dtype": "f32", "shape": [1, 2, "T", 8]},
            {"name": "cache_v", "dtype": "f32", "shape": [1, 2, "T", 8]}],
 "nodes": [
  {"name": "q", "op": "linear", "inputs": ["x", "w_q"]},
  {"name": "k", "op": "linear", "inputs": ["x", "w_k"]},
  {"name": "v", "op": "linear", "inputs": ["x", "w_v"]},
  {"name": "q_heads", "op": "reshape", "inputs": ["q"], "attrs": {"shape": [1, 8, 1, 8]}},
  {"name": "k_new", "op": "reshape", "inputs": ["k"], "attrs": {"shape": [1, 2, 1, 8]}},
  {"name": "v_new", "op": "reshape", "inputs": ["v"], "attrs": {"shape": [1, 2, 1, 8]}},
  {"name": "k_all", "op": "concat", "inputs": ["cache_k", "k_new"], "attrs": {"axis": 2}},
  {"name": "v_all", "op": "concat", "inputs": ["cache_v", "v_new"], "attrs": {"axis": 2}},
  {"name": "k1", "op": "reshape", "inputs": ["k_all"], "attrs": {"shape": [1, 2, 1, -1, 8]}},
  {"name": "k4", "op": "broadcast_to", "inputs": ["k1"], "attrs": {"shape": [1, 2, 4, -1, 8]}},
  {"name": "kh", "op": "reshape", "inputs": ["k4"], "attrs": {"shape": [1, 8, -1, 8]}},
  {"name": "v1", "op": "reshape", "inputs": ["v_all"], "attrs": {"shape": [1, 2, 1, -1, 8]}},
  {"name": "v4", "op": "broadcast_to", "inputs": ["v1"], "attrs": {"shape": [1, 2, 4, -1, 8]}},
  {"name": "vh", "op": "reshape", "inputs": ["v4"], "attrs": {"shape": [1, 8, -1, 8]}},
  {"name": "a", "op": "scaled_dot_product_attention", "inputs": ["q_heads", "kh", "vh"]},
  {"name": "af", "op": "reshape", "inputs": ["a"], "attrs": {"shape": [1, 64]}},
  {"name": "out", "op": "add", "inputs": ["x", "af"]}
 ],
 "outputs": ["out", "k_new", "v_new"]})";

// The cache joined with this step's row: compiled at T = 12, exact at every
// cache length up to it (the keys past T masked, this step's kept).
TEST(PaddedGraph, ADecodeStepOverACacheOfAnyLength) {
  mlir::MLIRContext ctx;
  auto padded = readPadded(
      [&](const SizeMap &at) { return importGraphText(kDecode, "decode.json", ctx, at); },
      {{"T", 12}}, {{"T", 64}});
  ASSERT_TRUE(bool(padded)) << llvm::toString(padded.takeError());
  mlir::func::FuncOp f = graphFunction(**padded);
  for (int64_t t : {1, 5, 11, 12}) {
    auto exact = read(ctx, kDecode, {{"T", t}});
    ASSERT_TRUE(exact);
    mlir::func::FuncOp e = graphFunction(*exact);
    std::vector<HostTensor> in;
    for (unsigned i = 0; i < e.getNumArguments(); ++i) {
      llvm::ArrayRef<int64_t> shape = shapeOf(e.getArgument(i));
      in.push_back(randomTensor(DType::F32, std::vector<int64_t>(shape.begin(), shape.end()), 31 * t + i));
      scaleFloatValues(in.back(), 0.25);
    }
    auto want = interpret(e, in);
    ASSERT_TRUE(bool(want)) << llvm::toString(want.takeError());
    auto got = interpretPadded(f, in, {{"T", t}});
    ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
    for (size_t i = 0; i < got->size(); ++i) {
      CheckResult c = compareTensors((*got)[i], (*want)[i], 1e-5);
      EXPECT_TRUE(c.pass) << "T=" << t << " output " << i << ": " << c.describe();
    }
  }
}

std::string refusal(const std::string &nodes, const std::string &inputShape = "[\"S\", 16]") {
  mlir::MLIRContext ctx;
  std::string text = R"({"fusec": 1, "name": "r", "inputs": [{"name": "x", "dtype": "f32", "shape": )" +
                     inputShape + R"(}], "nodes": [)" + nodes + R"(], "outputs": ["y"]})";
  auto m = readPadded([&](const SizeMap &at) { return importGraphText(text, "r.json", ctx, at); },
                      {{"S", 8}}, {{"S", 8}});
  if (m)
    return "";
  return llvm::toString(m.takeError());
}

// Ops the padding cannot make exact are errors naming the node and why.
TEST(PaddedGraph, RefusesWhatPaddingWouldChange) {
  EXPECT_NE(refusal(R"({"name": "y", "op": "concat", "inputs": ["x", "x"], "attrs": {"axis": 0}})")
                .find("node 'y' (concat): it joins along a padded dim"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"name": "f", "op": "reshape", "inputs": ["x"], "attrs": {"shape": [-1]}},
                       {"name": "y", "op": "sum", "inputs": ["f"], "attrs": {"axes": [0]}})")
                .find("node 'y' (sum): it combines along a dim that merges a padded size with others"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"name": "y", "op": "reshape", "inputs": ["x"], "attrs": {"shape": [2, "S", 8]}})")
                .find("node 'y' (reshape): it splits padded dim 0 across dims"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"name": "y", "op": "reshape", "inputs": ["x"], "attrs": {"shape": [-1]}})")
                .find("output 0 merges a padded size with other dims in dim 0"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"name": "r", "op": "reshape", "inputs": ["x"], "attrs": {"shape": [1, "S", 16]}},
                       {"name": "one", "op": "slice", "inputs": ["x"], "attrs": {"starts": [0], "ends": [1], "axes": [0]}},
                       {"name": "o3", "op": "reshape", "inputs": ["one"], "attrs": {"shape": [1, 1, 16]}},
                       {"name": "c", "op": "concat", "inputs": ["r", "o3"], "attrs": {"axis": 1}},
                       {"name": "y", "op": "argmax", "inputs": ["c"], "attrs": {"axis": 1}})")
                .find("node 'y' (argmax): its index along a padded dim with fixed positions after it"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"name": "r", "op": "reshape", "inputs": ["x"], "attrs": {"shape": [1, "S", 16]}},
                       {"name": "one", "op": "slice", "inputs": ["x"], "attrs": {"starts": [0], "ends": [1], "axes": [0]}},
                       {"name": "o3", "op": "reshape", "inputs": ["one"], "attrs": {"shape": [1, 1, 16]}},
                       {"name": "c", "op": "concat", "inputs": ["r", "o3"], "attrs": {"axis": 1}},
                       {"name": "y", "op": "scaled_dot_product_attention", "inputs": ["c", "c", "c"], "attrs": {"causal": true}})")
                .find("node 'y' (scaled_dot_product_attention): it is causal over keys with fixed positions"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"name": "y", "op": "layer_norm", "inputs": ["x"], "attrs": {"axis": 0}})")
                .find("node 'y' (layer_norm): it normalizes over a padded dim"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"name": "y", "op": "slice", "inputs": ["x"], "attrs": {"starts": [1], "ends": [1000], "axes": [0]}})")
                .find("'S' cannot vary"),
            std::string::npos);
  // Positional ops pass.
  EXPECT_EQ(refusal(R"({"name": "y", "op": "gelu", "inputs": ["x"]})"), "");
}

} // namespace
} // namespace fusec

namespace fusec {
namespace {

// The API: one program with Options::maxSizes serves every size up to the
// bound, compiling a padded size on its first use only, and gives at each
// size what a program compiled for that size gives.
TEST(PaddedProgram, ResizeCompilesEachPaddedSizeOnce) {
  Options options;
  options.maxSizes = {{"S", 64}};
  options.sizes = {{"S", 5}};
  std::unique_ptr<Program> p;
  Status s = Program::compileText(kGraph, "padded.json", options, p);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(p->compiles(), 1);
  EXPECT_EQ(p->paddedSizes(), (std::map<std::string, int64_t>{{"S", 6}}));
  EXPECT_EQ(p->inputs()[0].shape, (std::vector<int64_t>{5, 16}));
  const std::pair<int64_t, int> steps[] = {{6, 1}, {11, 2}, {12, 2}, {5, 2}, {64, 3}, {1, 4}};
  for (auto [size, compiles] : steps) {
    ASSERT_TRUE(p->resize({{"S", size}})) << size;
    EXPECT_EQ(p->compiles(), compiles) << "S=" << size;
    EXPECT_EQ(p->sizes().at("S"), size);
    ASSERT_EQ(p->inputs().size(), 3u);  // x, w and y2; the size argument is the program's own
    EXPECT_EQ(p->inputs()[0].shape, (std::vector<int64_t>{size, 16}));
    EXPECT_EQ(p->outputs()[4].shape, (std::vector<int64_t>{size, 16}));  // col
    std::vector<HostTensor> in = p->randomInputs(uint64_t(size)), got, want;
    ASSERT_TRUE(p->evaluateReference(in, got));
    Options exact;
    exact.sizes = {{"S", size}};
    std::unique_ptr<Program> q;
    ASSERT_TRUE(Program::compileText(kGraph, "padded.json", exact, q));
    ASSERT_TRUE(q->evaluateReference(in, want));
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      CheckResult c = compareTensors(got[i], want[i], 1e-5);
      EXPECT_TRUE(c.pass) << "S=" << size << " output " << i << ": " << c.describe();
    }
  }
  // The shape a caller keeping an input in the padded layout passes it at.
  ASSERT_TRUE(p->resize({{"S", 9}}));
  EXPECT_EQ(p->paddedShape(0), (std::vector<int64_t>{12, 16}));
  EXPECT_EQ(p->paddedShape(1), (std::vector<int64_t>{16, 16}));
  EXPECT_TRUE(p->setInputPadded(0));
  EXPECT_EQ(p->setInputPadded(3).code(), ErrorCode::InvalidArgument);  // x, w and y2 only
  Status past = p->resize({{"S", 65}});
  EXPECT_EQ(past.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(past.message().find("S=65 is outside 1..64"), std::string::npos) << past.message();
  Status fixed = p->resize({{"T", 3}});
  EXPECT_EQ(fixed.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(fixed.message().find("'T' is not a size that varies"), std::string::npos);
  // A program without maxSizes has nothing to resize.
  std::unique_ptr<Program> plain;
  ASSERT_TRUE(Program::compileText(kGraph, "padded.json", Options{.sizes = {{"S", 4}}}, plain));
  EXPECT_EQ(plain->resize({{"S", 3}}).code(), ErrorCode::InvalidArgument);
}

} // namespace
} // namespace fusec

namespace fusec {
namespace {

// The Llama, GPT-2 and BERT test models (test/models: onnxruntime's outputs
// at sequence lengths 7 and 33), read once at a padded length of 48, and the
// ViT (batches 1 and 3) once at a padded batch of 4: the one padded graph
// gives onnxruntime's outputs at both sizes.
TEST(PaddedGraph, TestModelsAtTwoSizesFromOnePaddedGraph) {
  struct Case {
    const char *model, *dim, *prefix;
    SizeMap readAt;
    int64_t sizes[2];
  };
  const Case cases[] = {
      {"llama", "sequence", "s", {{"batch", 2}, {"sequence", 48}}, {7, 33}},
      {"gpt2", "sequence", "s", {{"batch", 2}, {"sequence", 48}}, {7, 33}},
      {"bert", "sequence", "s", {{"batch", 2}, {"sequence", 48}}, {7, 33}},
      {"vit", "batch", "b", {{"batch", 4}}, {1, 3}},
  };
  for (const Case &k : cases) {
    const std::string dir = std::string(FUSEC_SOURCE_DIR) + "/test/models/" + k.model;
    mlir::MLIRContext ctx;
    auto padded = readPadded(
        [&](const SizeMap &at) { return importModelFile(dir + "/model.onnx", ctx, at); },
        k.readAt, {{k.dim, 64}});
    ASSERT_TRUE(bool(padded)) << k.model << ": " << llvm::toString(padded.takeError());
    mlir::func::FuncOp f = graphFunction(**padded);
    PaddedSignature sig = paddedSignature(f);
    ASSERT_TRUE(sig.padded()) << k.model;
    std::set<std::string> params;
    std::vector<std::string> names;
    for (unsigned i = 0; i < f.getNumArguments(); ++i) {
      names.push_back(f.getArgAttrOfType<mlir::StringAttr>(i, "fusec.name").str());
      if (isParameter(f, i))
        params.insert(names.back());
    }
    auto weights = onnxFileWeights(dir + "/model.onnx", params);
    ASSERT_TRUE(bool(weights)) << llvm::toString(weights.takeError());
    for (int64_t s : k.sizes) {
      const std::string tag = k.prefix + std::to_string(s);
      const std::string label = std::string(k.model) + " at " + tag;
      auto given = readSafetensors(dir + "/inputs_" + tag + ".safetensors");
      auto expected = readSafetensors(dir + "/expected_" + tag + ".safetensors");
      ASSERT_TRUE(bool(given) && bool(expected)) << label;
      std::vector<HostTensor> in;
      for (size_t i = 0; i < names.size(); ++i) {
        if (!sig.sizeArgs[i].empty())
          continue;
        in.push_back(params.count(names[i]) ? weights->at(names[i]) : given->at(names[i]));
      }
      auto out = interpretPadded(f, in, {{k.dim, s}});
      ASSERT_TRUE(bool(out)) << label << ": " << llvm::toString(out.takeError());
      ASSERT_EQ(out->size(), 1u) << label;
      CheckResult c = compareTensors((*out)[0], expected->at("hidden"), 1e-4);
      EXPECT_TRUE(c.pass) << label << ": " << c.describe();
    }
  }
}

} // namespace
} // namespace fusec
