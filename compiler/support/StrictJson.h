//===- StrictJson.h - JSON as fusec reads every file ----------------------===//
//
// Graphs, safetensors headers and cache files are JSON that fusec does not
// control. nlohmann/json keeps the last of two equal keys (a second "nodes"
// array would silently replace the first) and its copies, dumps and frees
// recurse once per level (a file of 100,000 '[' overflows the stack). Every
// such file is parsed here: a duplicate key and nesting past kMaxJsonDepth are
// errors before any value is built.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

namespace fusec {

/// No file fusec reads nests deeper than a few levels; 64 leaves room.
constexpr int kMaxJsonDepth = 64;

/// What parseStrictJson throws for a duplicate key or nesting too deep (a
/// parse error of the text itself is nlohmann's parse_error, as usual).
struct StrictJsonError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Parses [begin, end) as nlohmann::json::parse does, and throws
/// StrictJsonError where an object repeats a key or values nest deeper than
/// kMaxJsonDepth.
nlohmann::json parseStrictJson(const char *begin, const char *end);

/// The same without exceptions: a discarded value (is_discarded()) on any
/// error, `error` saying which.
nlohmann::json parseStrictJsonOrDiscard(const char *begin, const char *end, std::string &error);

} // namespace fusec
