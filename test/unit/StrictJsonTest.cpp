//===- StrictJsonTest.cpp - duplicate keys and deep nesting refused ------===//
#include "compiler/support/StrictJson.h"

#include <gtest/gtest.h>

namespace fusec {
namespace {

nlohmann::json parse(const std::string &text, std::string &error) {
  error.clear();
  return parseStrictJsonOrDiscard(text.data(), text.data() + text.size(), error);
}

TEST(StrictJson, DuplicateKeysAndDeepNestingAreErrors) {
  std::string error;
  nlohmann::json ok = parse(R"({"a": {"b": 1, "c": [1, {"b": 2}]}, "b": 3})", error);
  ASSERT_FALSE(ok.is_discarded()) << error;
  EXPECT_EQ(ok["a"]["c"][1]["b"], 2);  // the same key in different objects is fine

  EXPECT_TRUE(parse(R"({"a": 1, "a": 2})", error).is_discarded());
  EXPECT_EQ(error, "duplicate key 'a' in one object");
  EXPECT_TRUE(parse(R"({"x": {"k\n": 1, "k\n": 2}})", error).is_discarded());
  EXPECT_EQ(error, "duplicate key 'k\\x0a' in one object");

  const std::string deep = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_FALSE(parse(deep, error).is_discarded()) << error;
  const std::string deeper = "[" + deep + "]";
  EXPECT_TRUE(parse(deeper, error).is_discarded());
  EXPECT_NE(error.find("deeper than 64"), std::string::npos) << error;
  EXPECT_TRUE(parse(std::string(1000000, '['), error).is_discarded());

  EXPECT_TRUE(parse("{\"a\": ", error).is_discarded());  // nlohmann's own errors too
  EXPECT_NE(error.find("parse error"), std::string::npos) << error;
}

} // namespace
} // namespace fusec
