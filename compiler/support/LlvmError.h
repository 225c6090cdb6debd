//===- LlvmError.h - the runtime's failures as LLVM's ---------------------===//
//
// The compiler's side speaks llvm::Error. Including this header lets a
// runtime Error or Expected<T> (compiler/support/Error.h) stand where an llvm::Error
// or llvm::Expected<T> is wanted: returned, assigned or passed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/support/Error.h"

#include "llvm/Support/Error.h"

namespace fusec::rt {

template <>
struct ErrorConversion<llvm::Error> {
  static llvm::Error convert(Error &&e) {
    if (!e)
      return llvm::Error::success();
    return llvm::createStringError(llvm::inconvertibleErrorCode(), e.message());
  }
};

template <typename T>
struct ErrorConversion<llvm::Expected<T>> {
  static llvm::Expected<T> convert(Error &&e) {
    if (!e)  // an Expected holds a value or a failure, never a bare success
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "internal error: success where a value was expected");
    return ErrorConversion<llvm::Error>::convert(std::move(e));
  }
  template <typename U>
  static llvm::Expected<T> convert(Expected<U> &&x) {
    if (!x)
      return ErrorConversion<llvm::Error>::convert(x.takeError());
    return T(std::move(*x));
  }
};

/// The llvm::Error `e` as a runtime Error (its message).
inline Error fromLlvm(llvm::Error e) {
  if (!e)
    return Error::success();
  return Error::failure(llvm::toString(std::move(e)));
}

} // namespace fusec::rt
