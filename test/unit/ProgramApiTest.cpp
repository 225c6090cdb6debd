//===- ProgramApiTest.cpp - the public API's statuses and defaults -------===//
#include "fusec/fusec.h"

#include <gtest/gtest.h>

namespace fusec {
namespace {

const char *kSoftmax = R"({"fusec": 1, "name": "s", "inputs": [
    {"name": "x", "dtype": "f32", "shape": [4, 8]}],
  "nodes": [{"name": "y", "op": "softmax", "inputs": ["x"], "attrs": {"axis": -1}}],
  "outputs": ["y"]})";

// Each failure carries a code beside its message: a graph that cannot be read
// is InvalidGraph, inputs that do not match InvalidArgument.
TEST(ProgramApi, FailuresCarryACode) {
  std::unique_ptr<Program> p;
  Status bad = Program::compileText("{\"fusec\": 1, \"nodes\": 3}", "bad.json", Options(), p);
  EXPECT_FALSE(bad);
  EXPECT_EQ(bad.code(), ErrorCode::InvalidGraph);
  EXPECT_NE(bad.message().find("bad.json"), std::string::npos) << bad.message();

  Status ok = Program::compileText(kSoftmax, "s.json", Options(), p);
  ASSERT_TRUE(ok) << ok.message();
  EXPECT_EQ(ok.code(), ErrorCode::Ok);
  std::vector<HostTensor> out;
  Status wrong = p->evaluateReference({}, out);
  EXPECT_FALSE(wrong);
  EXPECT_EQ(wrong.code(), ErrorCode::InvalidArgument);
  Status right = p->evaluateReference(p->randomInputs(1), out);
  ASSERT_TRUE(right) << right.message();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{4, 8}));
}

// Without a GPU, load() says so with NoGpu; with one, the kernels were built
// for it (the default target is the GPU's), so it loads.
TEST(ProgramApi, LoadTargetsTheGpuOrSaysThereIsNone) {
  std::unique_ptr<Program> p;
  ASSERT_TRUE(Program::compileText(kSoftmax, "s.json", Options(), p));
  Status s = p->load();
  if (!s)
    EXPECT_EQ(s.code(), ErrorCode::NoGpu) << s.message();
  // A target fusec does not compile for is refused at compile time.
  Options old;
  old.arch = "sm_52";
  Status unknown = Program::compileText(kSoftmax, "s.json", old, p);
  EXPECT_EQ(unknown.code(), ErrorCode::CompileFailed);
  EXPECT_NE(unknown.message().find("sm_52"), std::string::npos) << unknown.message();
  // A target the GPU does not run is refused by load() with WrongArchitecture
  // where a GPU is present, NoGpu where none is.
  Options other;
  other.arch = "sm_100a";
  ASSERT_TRUE(Program::compileText(kSoftmax, "s.json", other, p));
  Status refused = p->load();
  EXPECT_FALSE(refused);
  EXPECT_TRUE(refused.code() == ErrorCode::WrongArchitecture || refused.code() == ErrorCode::NoGpu)
      << refused.message();
}

const char *kColumnParallel = R"({"fusec": 1, "name": "cp",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [4, 8]}],
  "parameters": [{"name": "w", "dtype": "f32", "shape": [6, 8]}],
  "nodes": [{"name": "y", "op": "linear", "inputs": ["x", "w"]}],
  "outputs": ["y"]})";

// Options::ranks and Options::shards split a graph as --ranks and --shard do:
// the program is one rank's (its blocks of the split weight), and what stops
// it joining a group is said before any GPU or NCCL is needed.
TEST(ProgramApi, ASplitProgramIsOneRanksAndSaysWhatItsGroupNeeds) {
  std::unique_ptr<Program> whole, split;
  ASSERT_TRUE(Program::compileText(kColumnParallel, "cp.json", Options(), whole));
  EXPECT_EQ(whole->ranks(), 1);
  EXPECT_EQ(whole->rank(), -1);
  Status notSplit = whole->joinGroup(0, std::string(128, 'x'));
  EXPECT_EQ(notSplit.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(notSplit.message().find("not split"), std::string::npos) << notSplit.message();

  Options o;
  o.ranks = 2;
  o.shards = {"w=0"};
  ASSERT_TRUE(Program::compileText(kColumnParallel, "cp.json", o, split));
  EXPECT_EQ(split->ranks(), 2);
  ASSERT_EQ(split->inputs().size(), 2u);
  EXPECT_EQ(split->inputs()[1].shape, (std::vector<int64_t>{3, 8}));  // its rows of w
  Status outOfRange = split->joinGroup(2, std::string(128, 'x'));
  EXPECT_EQ(outOfRange.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(outOfRange.message().find("rank 2 is not one of the 2 ranks"), std::string::npos)
      << outOfRange.message();
  Status shortId = split->joinGroup(0, "abc");
  EXPECT_EQ(shortId.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(shortId.message().find("128 bytes"), std::string::npos) << shortId.message();
  EXPECT_EQ(split->rank(), -1);

  Options bad = o;
  bad.shards = {"nothing=0"};
  Status unnamed = Program::compileText(kColumnParallel, "cp.json", bad, split);
  EXPECT_EQ(unnamed.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(unnamed.message().find("Options::shards 'nothing=0'"), std::string::npos)
      << unnamed.message();
  bad = o;
  bad.ranks = 65;
  EXPECT_EQ(Program::compileText(kColumnParallel, "cp.json", bad, split).code(),
            ErrorCode::InvalidArgument);
}

} // namespace
} // namespace fusec
