//===- DynamicLibrary.cpp - open one of several shared libraries ---------===//
#include "runtime/DynamicLibrary.h"

#include <dlfcn.h>
#include <vector>

namespace fusec {
namespace {

/// dlerror() reports through a per-thread slot that the next dl* call
/// overwrites, so the text is copied out right after the failing call.
std::string takeDlError() {
  const char *message = ::dlerror();
  return message ? std::string(message) : std::string("unknown error");
}

/// "candidate: reason"; dlerror() usually starts with the path already, and
/// saying it twice helps nobody.
std::string describeFailure(const std::string &candidate, const std::string &reason) {
  if (reason.compare(0, candidate.size(), candidate) == 0)
    return reason;
  return candidate + ": " + reason;
}

rt::Error makeError(const std::string &message) { return rt::Error::failure(message); }

} // namespace

rt::Expected<DynamicLibrary>
DynamicLibrary::openFirst(const std::vector<std::string> &candidates,
                          std::string_view what) {
  std::vector<std::string> failures;
  for (const std::string &candidate : candidates) {
    if (candidate.empty())
      continue;
    (void)::dlerror(); // clear a stale message from an earlier call
    if (void *handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL))
      return DynamicLibrary(handle, candidate);
    failures.push_back(describeFailure(candidate, takeDlError()));
  }
  std::string message = std::string(what) + " could not be loaded";
  if (failures.empty())
    return makeError(message + ": no candidate names were given");
  if (failures.size() == 1)
    return makeError(message + ": " + failures.front());
  message += "; tried:";
  for (const std::string &failure : failures)
    message += "\n  " + failure;
  return makeError(message);
}

void *DynamicLibrary::lookup(const char *symbol) const {
  return handle ? ::dlsym(handle, symbol) : nullptr;
}

rt::Expected<void *> DynamicLibrary::require(const char *symbol) const {
  if (void *address = lookup(symbol))
    return address;
  return makeError(loadedFrom + " does not define '" + symbol + "'");
}

} // namespace fusec
