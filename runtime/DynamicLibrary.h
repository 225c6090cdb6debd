//===- DynamicLibrary.h - open one of several shared libraries -----------===//
//
// libcuda and libnvrtc are never linked: fusec must start, compile and dump
// CUDA on machines that have neither. They are opened here, at run time, from
// a list of candidate names, and a failure names every place that was tried.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/support/Error.h"

#include <string>
#include <string_view>
#include <vector>

namespace fusec {

/// A shared library opened with dlopen(RTLD_NOW | RTLD_LOCAL).
///
/// The library stays loaded for the life of the process: the CUDA driver and
/// NVRTC keep threads and global state that do not survive dlclose, and the
/// entry points resolved from them are cached in process-wide singletons.
class DynamicLibrary {
public:
  /// Opens the first of `candidates` (sonames searched the usual way, or
  /// paths) that loads. `what` names the library for the error, which lists
  /// every candidate tried with the dlerror() text it produced.
  static rt::Expected<DynamicLibrary>
  openFirst(const std::vector<std::string> &candidates, std::string_view what);

  /// The address of `symbol`, or null when the library does not define it.
  void *lookup(const char *symbol) const;

  /// The address of `symbol`, or an error naming it and this library.
  rt::Expected<void *> require(const char *symbol) const;

  /// The candidate that loaded, as it was given to openFirst.
  const std::string &path() const { return loadedFrom; }

private:
  DynamicLibrary(void *handle, std::string loadedFrom)
      : handle(handle), loadedFrom(std::move(loadedFrom)) {}

  void *handle = nullptr;
  std::string loadedFrom;
};

} // namespace fusec
