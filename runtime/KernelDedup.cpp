//===- KernelDedup.cpp - one compile per distinct kernel body -------------===//
#include "runtime/KernelDedup.h"

#include "llvm/ADT/StringMap.h"

#include <cctype>

namespace fusec {
namespace {

bool identChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// `text` with every occurrence of `from` that is a whole identifier (or, with
/// `prefixOnly`, the start of one) replaced by `to`.
std::string replaceIdent(llvm::StringRef text, llvm::StringRef from, llvm::StringRef to,
                         bool prefixOnly = false) {
  std::string out;
  out.reserve(text.size());
  size_t at = 0;
  while (true) {
    size_t hit = text.find(from, at);
    if (hit == llvm::StringRef::npos || from.empty())
      break;
    size_t end = hit + from.size();
    bool startOk = hit == 0 || !identChar(text[hit - 1]);
    bool endOk = prefixOnly || end == text.size() || !identChar(text[end]);
    out.append(text.data() + at, (startOk && endOk ? hit : end) - at);
    if (startOk && endOk)
      out.append(to.data(), to.size());
    at = end;
  }
  out.append(text.data() + at, text.size() - at);
  return out;
}

/// Whether `ident` occurs in `text` as a whole identifier.
bool hasIdent(llvm::StringRef text, llvm::StringRef ident) {
  for (size_t at = text.find(ident); at != llvm::StringRef::npos; at = text.find(ident, at + 1))
    if ((at == 0 || !identChar(text[at - 1])) &&
        (at + ident.size() == text.size() || !identChar(text[at + ident.size()])))
      return true;
  return false;
}

} // namespace

std::string canonicalKernelName(llvm::StringRef name) {
  llvm::StringRef rest = name;
  if (!rest.consume_front("k"))
    return name.str();
  size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits])))
    ++digits;
  if (digits == 0 || digits == rest.size() || rest[digits] != '_')
    return name.str();
  return "k" + rest.drop_front(digits).str();
}

CanonicalKernel canonicalKernel(llvm::StringRef name, llvm::StringRef source) {
  std::string canon = canonicalKernelName(name);
  if (canon != name && hasIdent(source, canon))
    canon = name.str();  // it would collide: the name stays
  // The header comment: "// kernel <name> (<family>)" and the indented
  // comment lines under it (graph nodes, bytes, predicted time, schedule).
  std::string header = "// kernel " + name.str() + " (";
  std::string kept;
  kept.reserve(source.size());
  bool inHeader = false;
  for (size_t pos = 0; pos < source.size();) {
    size_t nl = source.find('\n', pos);
    size_t end = nl == llvm::StringRef::npos ? source.size() : nl + 1;
    llvm::StringRef line = source.slice(pos, end);  // with its newline
    if (line.starts_with(header))
      inHeader = true;
    else if (!(inHeader && line.starts_with("//   ")))
      inHeader = false;
    if (!inHeader)
      kept.append(line.data(), line.size());
    pos = end;
  }
  if (canon == name)
    return {std::move(kept), std::move(canon)};
  return {replaceIdent(kept, name, canon), std::move(canon)};
}

std::string renameCanonicalPtx(llvm::StringRef ptx, llvm::StringRef canon, llvm::StringRef name) {
  if (canon == name)
    return ptx.str();
  // The entry's parameters are "<entry>_param_<n>"; a static shared array of
  // the kernel is mangled with the entry's name and its length,
  // _ZZ<len><entry>E<len><var>.
  std::string renamed = replaceIdent(ptx, canon.str() + "_param_", name.str() + "_param_",
                                     /*prefixOnly=*/true);
  renamed = replaceIdent(renamed, "_ZZ" + std::to_string(canon.size()) + canon.str() + "E",
                         "_ZZ" + std::to_string(name.size()) + name.str() + "E",
                         /*prefixOnly=*/true);
  return replaceIdent(renamed, canon, name);
}

KernelBodies distinctBodies(const std::vector<std::pair<std::string, std::string>> &namedSources) {
  KernelBodies b;
  llvm::StringMap<size_t> index;
  for (size_t i = 0; i < namedSources.size(); ++i) {
    CanonicalKernel canonical = canonicalKernel(namedSources[i].first, namedSources[i].second);
    auto [it, inserted] = index.try_emplace(canonical.source, b.distinct.size());
    if (inserted) {
      b.distinct.push_back(std::move(canonical.source));
      b.entry.push_back(std::move(canonical.entry));
      b.first.push_back(i);
    }
    b.of.push_back(it->second);
  }
  return b;
}

} // namespace fusec
