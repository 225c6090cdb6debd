//===- TargetVersion.h - an NVRTC target's version --------------------------===//
#pragma once

#include <optional>
#include <string>

namespace fusec {

/// An NVRTC target "sm_<major><minor>[a]" read apart (the minor is the last
/// digit; "a": architecture-specific, its cubin runs on that exact version).
struct TargetVersion {
  int major = 0, minor = 0;
  bool specific = false;
};

inline std::optional<TargetVersion> parseTarget(const std::string &arch) {
  if (arch.size() < 5 || arch.compare(0, 3, "sm_") != 0)
    return std::nullopt;
  std::string digits = arch.substr(3);
  TargetVersion v;
  v.specific = digits.back() == 'a';
  if (v.specific)
    digits.pop_back();
  if (digits.size() < 2 || digits.size() > 3 ||
      digits.find_first_not_of("0123456789") != std::string::npos || digits[0] == '0')
    return std::nullopt;
  v.major = std::stoi(digits.substr(0, digits.size() - 1));
  v.minor = digits.back() - '0';
  return v;
}

} // namespace fusec
