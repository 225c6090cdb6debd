//===- Printable.h - names from a graph, safe in any language -------------===//
//
// Names come from files fusec does not control. Before one reaches another
// language (a comment of generated CUDA, a Graphviz label) or a terminal, its
// control bytes and backslashes become \xNN escapes: it can then end no line,
// escape no quote and move no cursor. The graph reader also refuses control
// characters in a graph's strings outright (frontends/json/GraphError.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fusec {

/// `s` with its control characters (bytes below 0x20 and 0x7f, the C1
/// controls, the bidirectional formatting characters) and backslashes
/// written as \xNN, byte by byte.
std::string printable(std::string_view s);

/// The offset of the first control character (as printable() escapes) in `s`.
std::optional<size_t> firstControlByte(std::string_view s);

} // namespace fusec
