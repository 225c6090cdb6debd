//===- Printable.cpp - names from a graph, safe in any language -----------===//
#include "compiler/support/Printable.h"

namespace fusec {
namespace {
/// The bytes of the control character at `i`, or 0: ASCII controls and
/// DEL; the C1 controls (U+0080-U+009F, which terminals take as escape
/// sequences: U+009B is CSI); and the bidirectional formatting characters
/// (U+200E-U+200F, U+202A-U+202E, U+2066-U+2069), which reorder what a
/// terminal or an editor shows.
size_t controlAt(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  unsigned c = byte(i);
  if (c < 0x20 || c == 0x7f)
    return 1;
  if (c == 0xc2 && byte(i + 1) >= 0x80 && byte(i + 1) <= 0x9f)
    return 2;
  if (c == 0xe2) {
    unsigned b1 = byte(i + 1), b2 = byte(i + 2);
    if (b1 == 0x80 && (b2 == 0x8e || b2 == 0x8f || (b2 >= 0xaa && b2 <= 0xae)))
      return 3;
    if (b1 == 0x81 && b2 >= 0xa6 && b2 <= 0xa9)
      return 3;
  }
  return 0;
}
} // namespace

std::optional<size_t> firstControlByte(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i)
    if (controlAt(s, i))
      return i;
  return std::nullopt;
}

std::string printable(std::string_view s) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = controlAt(s, i);
    if (n == 0 && s[i] != '\\') {
      out += s[i++];
      continue;
    }
    for (size_t k = 0; k < (n ? n : 1); ++k, ++i) {
      unsigned char c = static_cast<unsigned char>(s[i]);
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

} // namespace fusec
