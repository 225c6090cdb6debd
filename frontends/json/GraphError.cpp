//===- GraphError.cpp - located errors and typed field access for JSON ----===//
#include "frontends/json/GraphError.h"

#include "compiler/shape/ShapeRules.h"
#include "compiler/support/Printable.h"

#include "llvm/ADT/StringRef.h"

#include <cstdio>

namespace fusec::json {

void Place::fail(const std::string &field, const std::string &msg) const {
  std::string s = where;
  if (!field.empty())
    s += (s.empty() ? "" : ": ") + std::string("field '") + field + "'";
  throw GraphError(s.empty() ? msg : s + ": " + msg);
}

std::string jsonTypeName(const Json &v) {
  switch (v.type()) {
  case Json::value_t::null: return "null";
  case Json::value_t::object: return "an object";
  case Json::value_t::array: return "an array";
  case Json::value_t::string: return "a string";
  case Json::value_t::boolean: return "a boolean";
  case Json::value_t::number_integer:
  case Json::value_t::number_unsigned: return "an integer";
  case Json::value_t::number_float: return "a number";
  default: return "an unsupported JSON value";
  }
}

const Json *find(const Json &obj, const char *key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

const Json &require(const Place &at, const Json &obj, const char *key,
                    const std::string &field) {
  if (const Json *v = find(obj, key))
    return *v;
  at.fail(field, "missing required field");
}

std::string asString(const Place &at, const Json &v, const std::string &field) {
  if (!v.is_string())
    at.fail(field, "expected a string, got " + jsonTypeName(v));
  std::string s = v.get<std::string>();
  // A name with a newline or an escape sequence would end a comment of the
  // generated code or drive a terminal: a graph's strings are printable.
  if (std::optional<size_t> at_ = firstControlByte(s)) {
    char code[8];
    std::snprintf(code, sizeof code, "0x%02x", static_cast<unsigned char>(s[*at_]));
    at.fail(field, std::string("contains the control character ") + code + " at byte " +
                       std::to_string(*at_) + ": a graph's names and strings are printable text");
  }
  return s;
}

int64_t asInt(const Place &at, const Json &v, const std::string &field) {
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))
    at.fail(field, "integer " + v.dump() + " is too large");
  if (!v.is_number_integer())
    at.fail(field, "expected an integer, got " + jsonTypeName(v) +
                       (v.is_primitive() ? " (" + v.dump() + ")" : ""));
  return v.get<int64_t>();
}

double asNumber(const Place &at, const Json &v, const std::string &field) {
  if (!v.is_number())
    at.fail(field, "expected a number, got " + jsonTypeName(v));
  return v.get<double>();
}

bool asBool(const Place &at, const Json &v, const std::string &field) {
  if (!v.is_boolean())
    at.fail(field, "expected true or false, got " + jsonTypeName(v));
  return v.get<bool>();
}

std::vector<int64_t> asIntList(const Place &at, const Json &v, const std::string &field,
                               bool allowScalar) {
  if (allowScalar && v.is_number())
    return {asInt(at, v, field)};
  if (!v.is_array())
    at.fail(field, std::string("expected an array of integers") +
                       (allowScalar ? " or an integer" : "") + ", got " + jsonTypeName(v));
  std::vector<int64_t> out;
  for (size_t i = 0; i < v.size(); ++i)
    out.push_back(asInt(at, v[i], field + "[" + std::to_string(i) + "]"));
  return out;
}

DType asDType(const Place &at, const Json &v, const std::string &field) {
  std::string name = asString(at, v, field);
  if (auto t = parseDType(name))
    return *t;
  at.fail(field, "unsupported dtype '" + name +
                     "' (expected one of f32, f16, bf16, i32, i64, bool)");
}

std::vector<int64_t> asShape(const Place &at, const Json &v, const std::string &field) {
  std::vector<int64_t> s = asIntList(at, v, field);
  if (std::string err = shape::checkDims(s); !err.empty())
    at.fail(field, err);
  return s;
}

std::string singleQuoted(const std::string &s) {
  // A quote inside is escaped too: 'a\'b' is one name, not two.
  std::string out = "'";
  for (char c : printable(s))
    out += c == '\'' ? std::string("\\'") : std::string(1, c);
  return out + "'";
}

std::string suggest(const std::string &word, const std::vector<std::string> &candidates) {
  std::string best;
  unsigned bestDist = 3;
  for (const std::string &c : candidates) {
    unsigned d = llvm::StringRef(word).edit_distance(c, true, bestDist);
    if (d < bestDist) {
      bestDist = d;
      best = c;
    }
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

void rejectUnknownKeys(const Place &at, const Json &obj,
                       const std::vector<std::string> &allowed, const std::string &what) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string &key = it.key();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end())
      continue;
    std::string list;
    for (const std::string &a : allowed)
      list += (list.empty() ? "" : ", ") + a;
    at.fail(what + key, "unknown field" + suggest(key, allowed) +
                            (list.empty() ? " (none are accepted)" : " (accepted: " + list + ")"));
  }
}

} // namespace fusec::json
