//===- GraphError.h - located errors and typed field access for JSON ------===//
//
// The frontend's own target may throw: a GraphError travels up to
// importGraphText, which turns it into an llvm::Error. Nothing throws
// through MLIR code.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/support/DType.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace fusec::json {

using Json = nlohmann::json;

/// A user error in a graph file; `what()` is the text after "file: ".
struct GraphError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Where in the graph we are: "node 'h' (nodes[0])", "inputs[1] 'bias'", "".
/// Fields are appended with `field()`, producing "node 'h' (nodes[0]): attrs.axes: ...".
class Place {
public:
  Place() = default;
  explicit Place(std::string where) : where(std::move(where)) {}
  [[noreturn]] void fail(const std::string &field, const std::string &msg) const;
  [[noreturn]] void fail(const std::string &msg) const { fail("", msg); }
  const std::string &describe() const { return where; }

private:
  std::string where;
};

/// "a JSON string", "an array", ... for messages about wrong JSON types.
std::string jsonTypeName(const Json &v);

/// Typed access to `obj[key]`. `field` is the name used in messages (e.g. "attrs.axes").
const Json *find(const Json &obj, const char *key);
const Json &require(const Place &at, const Json &obj, const char *key, const std::string &field);
std::string asString(const Place &at, const Json &v, const std::string &field);
int64_t asInt(const Place &at, const Json &v, const std::string &field);
double asNumber(const Place &at, const Json &v, const std::string &field);
bool asBool(const Place &at, const Json &v, const std::string &field);
/// An array of integers; with `allowScalar` a lone integer reads as [n].
std::vector<int64_t> asIntList(const Place &at, const Json &v, const std::string &field,
                               bool allowScalar = false);
DType asDType(const Place &at, const Json &v, const std::string &field);
/// A shape: integers >= 0 with at most 2^40 elements in all.
std::vector<int64_t> asShape(const Place &at, const Json &v, const std::string &field);
/// Rejects keys of `obj` not in `allowed` (typos), naming the closest allowed key.
void rejectUnknownKeys(const Place &at, const Json &obj, const std::vector<std::string> &allowed,
                       const std::string &what);
/// A name in a message, in single quotes, printable() (it may hold any byte
/// until checked).
std::string singleQuoted(const std::string &s);
/// "did you mean 'gelu'?" when a candidate is within two edits, else "".
std::string suggest(const std::string &word, const std::vector<std::string> &candidates);

} // namespace fusec::json
