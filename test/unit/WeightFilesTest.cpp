//===- WeightFilesTest.cpp - parameters matched to safetensors files ------===//
//
// The binding rules of every path that takes weights (the CLI's --weights,
// Program::bindWeights, an artifact's embedded weights): each parameter
// found once with its dtype and shape, nothing else in the files, the data
// read in place from the file's header offsets.
//
//===----------------------------------------------------------------------===//
#include "runtime/WeightFiles.h"
#include "runtime/Safetensors.h"

#include "TempDir.h"

#include <gtest/gtest.h>

#include <cstring>
#include <sys/stat.h>

using namespace fusec;
using fusec::testing::TempDir;

namespace {

HostTensor filled(DType dtype, std::vector<int64_t> shape, uint8_t seed) {
  HostTensor t(dtype, std::move(shape));
  auto *bytes = reinterpret_cast<uint8_t *>(t.data());
  for (int64_t i = 0; i < t.nbytes(); ++i)
    bytes[i] = uint8_t(seed + 7 * i);
  return t;
}

std::string messageOf(rt::Error e) { return e ? e.message() : ""; }

class WeightFilesTest : public ::testing::Test {
protected:
  void SetUp() override {
    TensorMap a{{"w", filled(DType::F32, {4, 3}, 1)}};
    TensorMap b{{"b", filled(DType::BF16, {3}, 50)}};
    ASSERT_FALSE(bool(writeSafetensors(tmp.path("a.safetensors"), a)));
    ASSERT_FALSE(bool(writeSafetensors(tmp.path("b.safetensors"), b)));
    expected = {a.at("w"), b.at("b")};
  }
  std::vector<TensorSpec> inputs() const {
    return {{"x", DType::F32, {2, 4}}, {"w", DType::F32, {4, 3}}, {"b", DType::BF16, {3}}};
  }
  const std::vector<bool> parameters{false, true, true};
  TempDir tmp;
  std::vector<HostTensor> expected;
};

TEST_F(WeightFilesTest, ShardsBindEachParameterAndReadItsBytesInPlace) {
  auto files = WeightFiles::open({tmp.path("a.safetensors"), tmp.path("b.safetensors")});
  ASSERT_TRUE(bool(files)) << files.takeError().message();
  EXPECT_EQ(files->size(), 2u);
  auto refs = files->bind(inputs(), parameters);
  ASSERT_TRUE(bool(refs)) << refs.takeError().message();
  ASSERT_EQ(refs->size(), 3u);
  EXPECT_FALSE((*refs)[0].has_value());  // x is passed per call
  for (size_t i = 1; i < 3; ++i) {
    const HostTensor &want = expected[i - 1];
    ASSERT_TRUE((*refs)[i].has_value());
    ASSERT_EQ((*refs)[i]->bytes, uint64_t(want.nbytes()));
    EXPECT_EQ(files->sourceName((*refs)[i]->source),
              tmp.path(i == 1 ? "a.safetensors" : "b.safetensors"));
    std::string got(want.nbytes(), '\0');
    ASSERT_EQ(messageOf(files->read(*(*refs)[i], 0, got.size(), got.data())), "");
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size()));
    // A piece from the middle, as the upload's staging reads it.
    char piece[4];
    ASSERT_EQ(messageOf(files->read(*(*refs)[i], 2, 4, piece)), "");
    EXPECT_EQ(0, std::memcmp(piece, got.data() + 2, 4));
  }
  EXPECT_NE(messageOf(files->read(*(*refs)[1], 40, 16, nullptr)), "");  // past the tensor
}

TEST_F(WeightFilesTest, AnImageInMemoryBindsAsAFileDoes) {
  auto image = serializeSafetensors({{"w", expected[0]}, {"b", expected[1]}});
  ASSERT_TRUE(bool(image));
  auto files = WeightFiles::inMemory("m.fusec (embedded weights)", *image);
  ASSERT_TRUE(bool(files)) << files.takeError().message();
  auto refs = files->bind(inputs(), parameters);
  ASSERT_TRUE(bool(refs)) << refs.takeError().message();
  std::string got(expected[1].nbytes(), '\0');
  ASSERT_EQ(messageOf(files->read(*(*refs)[2], 0, got.size(), got.data())), "");
  EXPECT_EQ(0, std::memcmp(got.data(), expected[1].data(), got.size()));
  auto damaged = WeightFiles::inMemory("m", image->substr(0, 20));
  EXPECT_FALSE(bool(damaged));
}

TEST_F(WeightFilesTest, MissingMismatchedExtraAndRepeatedWeightsAreErrors) {
  auto only = WeightFiles::open({tmp.path("a.safetensors")});
  ASSERT_TRUE(bool(only));
  EXPECT_EQ(messageOf(only->bind(inputs(), parameters).takeError()),
            "missing weight for parameter 'b' (bf16 [3]) in " + tmp.path("a.safetensors"));

  auto both = WeightFiles::open({tmp.path("a.safetensors"), tmp.path("b.safetensors")});
  ASSERT_TRUE(bool(both));
  std::vector<TensorSpec> other = inputs();
  other[1].shape = {3, 4};
  EXPECT_EQ(messageOf(both->bind(other, parameters).takeError()),
            tmp.path("a.safetensors") + ": tensor 'w' is f32 [4, 3] but the parameter is f32 [3, 4]");
  // b is in the files but the graph takes it per call.
  EXPECT_EQ(messageOf(both->bind(inputs(), {false, true, false}).takeError()),
            tmp.path("b.safetensors") + ": weight 'b' is not a parameter of the graph");

  auto twice = WeightFiles::open({tmp.path("a.safetensors"), tmp.path("a.safetensors")});
  EXPECT_EQ(messageOf(twice.takeError()), tmp.path("a.safetensors") + ": weight 'w' is also in " +
                                              tmp.path("a.safetensors"));
}

TEST_F(WeightFilesTest, FilesThatAreNoWeightsAreRefusedWithoutBlocking) {
  EXPECT_NE(messageOf(WeightFiles::open({tmp.path("none.safetensors")}).takeError()).find(
                "cannot read weights file"),
            std::string::npos);
  ASSERT_EQ(::mkfifo(tmp.path("fifo").c_str(), 0600), 0);
  EXPECT_NE(messageOf(WeightFiles::open({tmp.path("fifo")}).takeError()).find("not a regular file"),
            std::string::npos);
  tmp.write("short.safetensors", "abc");
  EXPECT_NE(messageOf(WeightFiles::open({tmp.path("short.safetensors")}).takeError())
                .find("too short for the 8-byte header length"),
            std::string::npos);
  // The header says more data than the file holds: found from the header
  // alone, before any tensor is read.
  auto image = serializeSafetensors({{"w", expected[0]}});
  ASSERT_TRUE(bool(image));
  tmp.write("cut.safetensors", image->substr(0, image->size() - 4));
  EXPECT_NE(messageOf(WeightFiles::open({tmp.path("cut.safetensors")}).takeError())
                .find("past the end of the data region"),
            std::string::npos);
}

} // namespace

// One rank of a split program binds its block of each split weight from
// files that hold the weights whole: along the first dim (one run), a middle
// one and the last (a run a row of the dims before it), read in pieces that
// cross the runs; the bytes are what rankBlock cuts from the whole tensor.
TEST(WeightFileBlocks, EachRankReadsItsBlockOfTheWholeWeight) {
  TempDir tmp;
  TensorMap whole{{"a", filled(DType::F32, {6, 5}, 3)},
                  {"m", filled(DType::BF16, {2, 8, 3}, 9)},
                  {"l", filled(DType::F16, {3, 2, 4}, 17)},
                  {"r", filled(DType::F32, {5}, 23)}};
  ASSERT_FALSE(bool(writeSafetensors(tmp.path("w.safetensors"), whole)));
  auto files = WeightFiles::open({tmp.path("w.safetensors")});
  ASSERT_TRUE(bool(files)) << files.takeError().message();
  const std::vector<int64_t> axes{0, 1, 2, -1};  // r is whole on every rank
  for (int ranks : {1, 2}) {
    for (int rank = 0; rank < ranks; ++rank) {
      std::vector<TensorSpec> specs;
      std::vector<HostTensor> want;
      for (const char *name : {"a", "m", "l", "r"}) {
        const HostTensor &t = whole.at(name);
        const int64_t axis = axes[specs.size()];
        HostTensor block = axis >= 0 ? rankBlock(t, axis, rank, ranks) : t;
        specs.push_back({name, t.dtype(), block.shape()});
        want.push_back(std::move(block));
      }
      RankBlocks blocks{axes, rank, ranks};
      auto refs = files->bind(specs, {true, true, true, true}, &blocks);
      ASSERT_TRUE(bool(refs)) << refs.takeError().message();
      for (size_t i = 0; i < specs.size(); ++i) {
        const HostTensor &w = want[i];
        ASSERT_TRUE((*refs)[i].has_value());
        ASSERT_EQ((*refs)[i]->bytes, uint64_t(w.nbytes())) << specs[i].name;
        // Whole, and in pieces of 3 bytes (across the runs' ends).
        std::vector<char> got(size_t(w.nbytes()), 0), pieces(size_t(w.nbytes()), 0);
        ASSERT_EQ(messageOf(files->read(*(*refs)[i], 0, w.nbytes(), got.data())), "");
        for (int64_t at = 0; at < w.nbytes(); at += 3)
          ASSERT_EQ(messageOf(files->read(*(*refs)[i], at, std::min<int64_t>(3, w.nbytes() - at),
                                          pieces.data() + at)),
                    "");
        EXPECT_EQ(std::memcmp(got.data(), w.data(), got.size()), 0)
            << specs[i].name << " rank " << rank << " of " << ranks;
        EXPECT_EQ(got, pieces) << specs[i].name;
      }
    }
  }
}

// The files must hold the whole weight: a block-sized tensor (a weights
// file already cut for one rank) is an error that says how the parameter is
// split.
TEST(WeightFileBlocks, ABlockSizedFileTensorIsAnErrorNamingTheSplit) {
  TempDir tmp;
  TensorMap cut{{"w", filled(DType::F32, {3, 4}, 1)}};
  ASSERT_FALSE(bool(writeSafetensors(tmp.path("w.safetensors"), cut)));
  auto files = WeightFiles::open({tmp.path("w.safetensors")});
  ASSERT_TRUE(bool(files)) << files.takeError().message();
  RankBlocks blocks{{0}, 1, 2};
  auto refs = files->bind({{"w", DType::F32, {3, 4}}}, {true}, &blocks);
  ASSERT_FALSE(bool(refs));
  std::string m = refs.takeError().message();
  EXPECT_NE(m.find("is f32 [3, 4] but the parameter is f32 [6, 4]"), std::string::npos) << m;
  EXPECT_NE(m.find("split along dim 0 into 2 blocks"), std::string::npos) << m;
}
