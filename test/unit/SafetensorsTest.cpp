//===- SafetensorsTest.cpp - safetensors round trips and every bad file ---===//
#include "runtime/Safetensors.h"

#include "TempDir.h"

#include <gtest/gtest.h>

using namespace fusec;
using fusec::testing::TempDir;

namespace {

/// A file with the given header text and data region.
std::string fileBytes(const std::string &header, const std::string &data) {
  std::string out;
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  return out + header + data;
}

class SafetensorsTest : public ::testing::Test {
protected:
  /// Writes `bytes` as bad.safetensors and returns the read error's message
  /// (empty if the read succeeded).
  std::string readError(const std::string &bytes) {
    tmp.write("bad.safetensors", bytes);
    llvm::Expected<TensorMap> r = readSafetensors(path());
    if (r)
      return "";
    return llvm::toString(r.takeError());
  }
  std::string path() const { return tmp.path("bad.safetensors"); }
  /// Expects the read to fail with exactly "<path>: <message>".
  void expectError(const std::string &bytes, const std::string &message) {
    EXPECT_EQ(readError(bytes), path() + ": " + message);
  }

  TempDir tmp;
};

TEST_F(SafetensorsTest, RoundTripsEveryDtype) {
  TensorMap tensors;
  uint64_t seed = 1;
  for (DType t : kAllDTypes)
    tensors["t_" + std::string(dtypeName(t))] = randomTensor(t, {3, 5}, seed++);
  tensors["scalar"] = randomTensor(DType::F32, {}, 9);
  tensors["empty"] = HostTensor(DType::BF16, {0, 4});
  SafetensorsMetadata meta{{"format", "pt"}, {"producer", "fusec"}};
  std::string file = tmp.path("all.safetensors");
  llvm::Error err = writeSafetensors(file, tensors, meta);
  ASSERT_FALSE(err) << llvm::toString(std::move(err));

  SafetensorsMetadata readMeta;
  llvm::Expected<TensorMap> back = readSafetensors(file, &readMeta);
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(*back, tensors);
  EXPECT_EQ(readMeta, meta);
  EXPECT_EQ(tmp.entries(), std::vector<std::string>{"all.safetensors"});
}

// --inputs and --expect read only the tensors a graph takes: the header
// first, then each wanted tensor's bytes; the others are named, not read.
TEST_F(SafetensorsTest, ReadsOnlyTheSelectedTensors) {
  TensorMap tensors;
  tensors["x"] = randomTensor(DType::F32, {4, 3}, 1);
  tensors["y"] = randomTensor(DType::BF16, {2}, 2);
  tensors["z"] = randomTensor(DType::I64, {5}, 3);
  std::string file = tmp.path("three.safetensors");
  llvm::Error err = writeSafetensors(file, tensors);
  ASSERT_FALSE(err) << llvm::toString(std::move(err));
  std::vector<std::string> others;
  auto back = readSafetensorsSelected(
      file, [](const std::string &n) { return n == "y" || n == "z"; }, &others);
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  ASSERT_EQ(back->size(), 2u);
  EXPECT_TRUE(back->at("y") == tensors["y"]);
  EXPECT_TRUE(back->at("z") == tensors["z"]);
  EXPECT_EQ(others, std::vector<std::string>{"x"});
}

TEST_F(SafetensorsTest, LayoutIsSortedAlignedAndPadded) {
  TensorMap tensors;
  tensors["b"] = HostTensor(DType::I32, {2});
  tensors["a"] = HostTensor(DType::Bool, {3});
  tensors["b"].setInt(0, 7);
  llvm::Expected<std::string> bytes = serializeSafetensors(tensors);
  ASSERT_TRUE(static_cast<bool>(bytes)) << llvm::toString(bytes.takeError());
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | static_cast<uint8_t>((*bytes)[i]);
  EXPECT_EQ((8 + n) % 8, 0u);
  std::string header = bytes->substr(8, n);
  std::string json = R"({"a":{"data_offsets":[0,3],"dtype":"BOOL","shape":[3]},)"
                     R"("b":{"data_offsets":[3,11],"dtype":"I32","shape":[2]}})";
  EXPECT_EQ(header.substr(0, json.size()), json);
  EXPECT_EQ(header.find_first_not_of(' ', json.size()), std::string::npos);
  EXPECT_EQ(bytes->size(), 8 + n + 11);
  EXPECT_EQ(static_cast<uint8_t>((*bytes)[8 + n + 3]), 7); // b[0], little-endian
}

TEST_F(SafetensorsTest, ReadsAFileWrittenByHand) {
  // Unsorted keys, a gap-free data region, values 1.0f and bf16 -2.
  std::string data("\x00\x00\x80\x3F\x00\xC0", 6);
  std::string header = R"({"y":{"dtype":"BF16","shape":[],"data_offsets":[4,6]},)"
                       R"("x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  tmp.write("hand.safetensors", fileBytes(header, data));
  llvm::Expected<TensorMap> r = readSafetensors(tmp.path("hand.safetensors"));
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ(r->at("x").get(0), 1.0);
  EXPECT_EQ(r->at("y").get(0), -2.0);
  EXPECT_TRUE(r->at("y").shape().empty());
}

TEST_F(SafetensorsTest, MissingFile) {
  std::string missing = tmp.path("missing.safetensors");
  llvm::Expected<TensorMap> r = readSafetensors(missing);
  ASSERT_FALSE(static_cast<bool>(r));
  EXPECT_EQ(llvm::toString(r.takeError()),
            "cannot read tensors file '" + missing + "': No such file or directory");
}

TEST_F(SafetensorsTest, TooShortForTheHeaderLength) {
  expectError("abcde", "not a safetensors file: it is 5 bytes, too short for the 8-byte header length");
}

TEST_F(SafetensorsTest, HeaderLengthPastTheFile) {
  std::string bytes = fileBytes("{}", "");
  bytes[0] = 100;
  expectError(bytes, "not a safetensors file: its header length 100 exceeds the file size (10 bytes)");
}

TEST_F(SafetensorsTest, HeaderLengthOverTheLimit) {
  std::string bytes = fileBytes("{}", "");
  bytes[3] = 0x07; // 0x07000002 bytes > 100 MiB
  expectError(bytes, "not a safetensors file: its header length 117440514 exceeds the 100 MiB limit");
}

TEST_F(SafetensorsTest, InvalidJson) {
  std::string message = readError(fileBytes(R"({"a": )", ""));
  EXPECT_EQ(message.rfind(path() + ": not a safetensors file: invalid JSON header: ", 0), 0u) << message;
  EXPECT_NE(message.find("parse error"), std::string::npos) << message;
}

TEST_F(SafetensorsTest, HeaderNotAnObject) {
  expectError(fileBytes("[1, 2]", ""), "header is not a JSON object (found array)");
}

TEST_F(SafetensorsTest, EntryNotAnObject) {
  expectError(fileBytes(R"({"w": 5})", ""), "tensor 'w': entry is not an object (found number)");
}

TEST_F(SafetensorsTest, UnknownDtype) {
  expectError(fileBytes(R"({"w": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]}})",
                        std::string(8, '\0')),
              "tensor 'w': field 'dtype': unsupported dtype 'F64' (expected one of F32, F16, "
              "BF16, I32, I64, BOOL)");
  expectError(fileBytes(R"({"w": {"shape": [1], "data_offsets": [0, 4]}})", std::string(4, '\0')),
              "tensor 'w': field 'dtype': expected a string");
}

TEST_F(SafetensorsTest, BadShape) {
  const std::string data(8, '\0');
  expectError(fileBytes(R"({"w": {"dtype": "F32", "shape": [2, -1], "data_offsets": [0, 8]}})",
                        data),
              "tensor 'w': field 'shape': expected an array of non-negative integers, found "
              "[2,-1]");
  expectError(fileBytes(R"({"w": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 8]}})",
                        data),
              "tensor 'w': field 'shape': expected an array of non-negative integers, found "
              "[1.5]");
  expectError(fileBytes(R"({"w": {"dtype": "F32", "shape": "2", "data_offsets": [0, 8]}})", data),
              "tensor 'w': field 'shape': expected an array of non-negative integers");
}

TEST_F(SafetensorsTest, BadDataOffsets) {
  const std::string data(16, '\0');
  expectError(fileBytes(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]}})",
                        data),
              "tensor 'w': field 'data_offsets': expected [begin, end] with non-negative "
              "integers, found [0,4,8]");
  expectError(fileBytes(R"({"w": {"dtype": "F32", "shape": [1]}})", data),
              "tensor 'w': field 'data_offsets': expected [begin, end] with non-negative "
              "integers, found nothing");
  expectError(fileBytes(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}})",
                        data),
              "tensor 'w': field 'data_offsets': begin 8 is after end 4");
  expectError(fileBytes(R"({"w": {"dtype": "F32", "shape": [16], "data_offsets": [0, 64]}})",
                        data),
              "tensor 'w': field 'data_offsets': end 64 is past the end of the data region "
              "(16 bytes)");
}

TEST_F(SafetensorsTest, ByteSizeMismatch) {
  expectError(fileBytes(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}})",
                        std::string(8, '\0')),
              "tensor 'w': data_offsets span 4 bytes but dtype F32 and shape [2] need 8");
}

TEST_F(SafetensorsTest, OverlappingTensors) {
  expectError(fileBytes(R"({"a": {"dtype": "I32", "shape": [2], "data_offsets": [0, 8]},)"
                        R"( "b": {"dtype": "I32", "shape": [2], "data_offsets": [4, 12]}})",
                        std::string(12, '\0')),
              "tensors 'a' (bytes [0, 8)) and 'b' (bytes [4, 12)) overlap");
  // Empty tensors occupy no bytes, so they overlap nothing.
  std::string ok = readError(
      fileBytes(R"({"a": {"dtype": "I32", "shape": [2], "data_offsets": [0, 8]},)"
                R"( "e": {"dtype": "I32", "shape": [0], "data_offsets": [4, 4]}})",
                std::string(8, '\0')));
  EXPECT_EQ(ok, "");
}

TEST_F(SafetensorsTest, BadMetadata) {
  expectError(fileBytes(R"({"__metadata__": {"n": 3}})", ""),
              "field '__metadata__': key 'n': expected a string, found 3");
  expectError(fileBytes(R"({"__metadata__": [1]})", ""),
              "field '__metadata__': expected an object of strings, found [1]");
}

TEST_F(SafetensorsTest, WritingAReservedNameFails) {
  TensorMap tensors;
  tensors["__metadata__"] = HostTensor(DType::F32, {1});
  std::string file = tmp.path("reserved.safetensors");
  llvm::Error err = writeSafetensors(file, tensors);
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_EQ(llvm::toString(std::move(err)),
            file + ": tensor name '__metadata__' is reserved");
  EXPECT_TRUE(tmp.entries().empty());
}

} // namespace

namespace {

// The header is strict JSON: a tensor named twice, or nesting past 64 levels,
// is refused, not read as the last of the two or recursed into.
TEST_F(SafetensorsTest, HeaderIsStrictJson) {
  const std::string t = R"({"dtype": "F32", "shape": [1], "data_offsets": [0, 4]})";
  expectError(fileBytes("{\"x\": " + t + ", \"x\": " + t + "}", std::string(4, '\0')),
              "not a safetensors file: invalid JSON header: duplicate key 'x' in one object");
  std::string deep = "{\"__metadata__\": " + std::string(100, '[') + std::string(100, ']') + "}";
  expectError(fileBytes(deep, ""),
              "not a safetensors file: invalid JSON header: values nest deeper than 64 levels");
}

} // namespace
