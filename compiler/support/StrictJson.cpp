//===- StrictJson.cpp - JSON as fusec reads every file --------------------===//
#include "compiler/support/StrictJson.h"

#include "compiler/support/Printable.h"

#include <set>
#include <vector>

namespace fusec {

nlohmann::json parseStrictJson(const char *begin, const char *end) {
  using Json = nlohmann::json;
  std::vector<std::set<std::string>> keys;  // of each object being read
  auto check = [&](int depth, Json::parse_event_t event, Json &parsed) {
    switch (event) {
    case Json::parse_event_t::object_start:
    case Json::parse_event_t::array_start:
      if (depth >= kMaxJsonDepth)
        throw StrictJsonError("values nest deeper than " + std::to_string(kMaxJsonDepth) +
                              " levels");
      if (event == Json::parse_event_t::object_start)
        keys.emplace_back();
      break;
    case Json::parse_event_t::object_end:
      if (!keys.empty())
        keys.pop_back();
      break;
    case Json::parse_event_t::key:
      if (!keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
        throw StrictJsonError("duplicate key '" + printable(parsed.get<std::string>()) +
                              "' in one object");
      break;
    default:
      break;
    }
    return true;
  };
  return Json::parse(begin, end, check);
}

nlohmann::json parseStrictJsonOrDiscard(const char *begin, const char *end, std::string &error) {
  try {
    return parseStrictJson(begin, end);
  } catch (const StrictJsonError &e) {
    error = e.what();
  } catch (const nlohmann::json::exception &e) {
    error = e.what();
  }
  return nlohmann::json(nlohmann::json::value_t::discarded);
}

} // namespace fusec
