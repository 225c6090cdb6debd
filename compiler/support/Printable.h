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

/// `s` with bytes below 0x20, 0x7f and backslashes written as \xNN.
std::string printable(std::string_view s);

/// The offset of the first control byte (below 0x20, or 0x7f) in `s`.
std::optional<size_t> firstControlByte(std::string_view s);

} // namespace fusec
