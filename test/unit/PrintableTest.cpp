//===- PrintableTest.cpp - names made safe for other languages -----------===//
#include "compiler/support/Printable.h"

#include <gtest/gtest.h>

namespace fusec {
namespace {

TEST(Printable, ControlBytesAndBackslashesBecomeHexEscapes) {
  EXPECT_EQ(printable("attn.q_proj/0"), "attn.q_proj/0");
  EXPECT_EQ(printable("a\nb"), "a\\x0ab");
  EXPECT_EQ(printable("\x1b[31mred"), "\\x1b[31mred");
  EXPECT_EQ(printable("tail\\"), "tail\\x5c");
  EXPECT_EQ(printable(std::string_view("\0x", 2)), "\\x00x");
  EXPECT_EQ(printable("\x7f"), "\\x7f");
  EXPECT_EQ(printable("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 stays
  EXPECT_EQ(firstControlByte("plain"), std::nullopt);
  EXPECT_EQ(firstControlByte("ab\tc"), std::optional<size_t>(2));
}

} // namespace
} // namespace fusec
