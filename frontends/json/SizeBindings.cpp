//===- SizeBindings.cpp - a graph's named dims and the sizes given them ---===//
//
// `"shape": ["B", "S", 4096]` names dims; --bind (and the API's sizes) give
// them sizes, which replace the names before the graph is read. A size
// given for a name the graph does not use is an error, as is a name left
// unbound.
//
//===----------------------------------------------------------------------===//
#include "frontends/json/SizeBindings.h"
#include "compiler/support/Printable.h"
#include "compiler/support/StrictJson.h"

#include <set>

namespace fusec {
namespace json {
namespace {

/// Calls f(shape, place, field) on every shape the graph states (inputs,
/// parameters, a node's stated shape, a `shape` attribute).
template <typename F> void forEachShape(Json &doc, F &&f) {
  if (!doc.is_object())
    return;
  for (const char *key : {"inputs", "parameters"}) {
    Json *list = doc.contains(key) ? &doc[key] : nullptr;
    if (!list || !list->is_array())
      continue;
    for (size_t i = 0; i < list->size(); ++i) {
      Json &spec = (*list)[i];
      if (!spec.is_object() || !spec.contains("shape"))
        continue;
      std::string label = std::string(key) + "[" + std::to_string(i) + "]";
      if (spec.contains("name") && spec["name"].is_string())
        label += " " + singleQuoted(spec["name"].get<std::string>());
      f(spec["shape"], Place(label), "shape");
    }
  }
  if (!doc.contains("nodes") || !doc["nodes"].is_array())
    return;
  Json &nodes = doc["nodes"];
  for (size_t i = 0; i < nodes.size(); ++i) {
    Json &node = nodes[i];
    if (!node.is_object())
      continue;
    std::string label = "node ";
    if (node.contains("name") && node["name"].is_string())
      label += singleQuoted(node["name"].get<std::string>()) + " ";
    Place at(label + "(nodes[" + std::to_string(i) + "])");
    if (node.contains("shape"))
      f(node["shape"], at, "shape");
    if (node.contains("attrs") && node["attrs"].is_object() && node["attrs"].contains("shape"))
      f(node["attrs"]["shape"], at, "attrs.shape");
  }
}

/// Replaces the named dims of every shape the graph states by their bound
/// sizes. A size given for a name no shape uses is an error (a typo is
/// reported as one, before the unbound name it leaves), and so is an
/// unbound name, at its place.
} // namespace

void bindSizes(Json &doc, const SizeBindings &sizes) {
  std::set<std::string> named;
  forEachShape(doc, [&](Json &shape, const Place &at, const std::string &field) {
    if (!shape.is_array())
      return;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (!shape[d].is_string())
        continue;
      const std::string name = shape[d].get<std::string>();
      if (std::string problem = sizeNameProblem(name); !problem.empty())
        at.fail(field, "dim " + std::to_string(d) + " is the size " + singleQuoted(name) +
                           ", which cannot be given with --bind: " + problem);
      named.insert(name);
    }
  });
  if (std::string e = unknownSizeError(sizes, named); !e.empty())
    Place().fail(e);
  forEachShape(doc, [&](Json &shape, const Place &at, const std::string &field) {
    if (!shape.is_array())
      return;  // the reader reports it
    for (size_t d = 0; d < shape.size(); ++d) {
      if (!shape[d].is_string())
        continue;
      const std::string name = shape[d].get<std::string>();
      auto it = sizes.find(name);
      if (it == sizes.end())
        at.fail(field, "dim " + std::to_string(d) + " is the size " + singleQuoted(name) +
                           ", which is not bound: give it with --bind " + printable(name) +
                           "=N");
      shape[d] = it->second;
    }
  });
}

} // namespace json

llvm::Expected<NamedDims> namedDimsOfGraphText(llvm::StringRef text, llvm::StringRef fileName) {
  NamedDims out;
  std::string ignored;
  json::Json doc = parseStrictJsonOrDiscard(text.begin(), text.end(), ignored);
  if (!doc.is_object())
    return out;  // reading the graph reports what is wrong with it
  for (const char *key : {"inputs", "parameters"}) {
    if (!doc.contains(key) || !doc[key].is_array())
      continue;
    for (const json::Json &spec : doc[key]) {
      if (!spec.is_object() || !spec.contains("name") || !spec["name"].is_string() ||
          !spec.contains("shape") || !spec["shape"].is_array())
        continue;
      std::vector<std::string> dims;
      bool named = false;
      // A name no --bind can give is left out: binding the graph reports it.
      for (const json::Json &d : spec["shape"]) {
        bool name = d.is_string() && sizeNameProblem(d.get<std::string>()).empty();
        dims.push_back(name ? d.get<std::string>() : "");
        named |= name;
      }
      if (named)
        out[spec["name"].get<std::string>()] = dims;
    }
  }
  (void)fileName;
  return out;
}

std::string sizeNameProblem(const std::string &name) {
  if (name.empty())
    return "it is empty";
  if (std::optional<size_t> at = firstControlByte(name))
    return "it holds a control character at byte " + std::to_string(*at);
  if (name.find_first_of(",=") != std::string::npos)
    return "it holds a ',' or an '=' (--bind takes NAME=N, several separated by commas)";
  if (name.front() == ' ' || name.back() == ' ')
    return "it starts or ends with a space (--bind trims them)";
  return "";
}

std::string unknownSizeError(const SizeBindings &sizes, const std::set<std::string> &named) {
  for (const auto &entry : sizes) {
    if (named.count(entry.first))
      continue;
    std::string list;
    for (const std::string &n : named)
      list += (list.empty() ? "" : ", ") + json::singleQuoted(n);
    return "a size is given for " + json::singleQuoted(entry.first) +
           ", but no dim of the graph is named so (" +
           (list.empty() ? std::string("it has no named dims") : "its named dims: " + list) + ")";
  }
  return "";
}

llvm::Expected<SizeBindings> parseSizeBindings(const std::vector<std::string> &texts,
                                               llvm::StringRef flag) {
  SizeBindings out;
  for (const std::string &text : texts) {
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(text).split(parts, ',', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef part : parts) {
      auto [name, value] = part.split('=');
      unsigned long long v = 0;
      name = name.trim();
      if (name.empty() || value.trim().getAsInteger(10, v) || v > (1ull << 40))
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "%s %s: expected NAME=N with N a size (0 to 2^40)",
                                       flag.str().c_str(), printable(part.str()).c_str());
      if (!out.emplace(name.str(), static_cast<int64_t>(v)).second)
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "%s: the size '%s' is given twice", flag.str().c_str(),
                                       printable(name.str()).c_str());
    }
  }
  return out;
}

} // namespace fusec
