//===- Error.h - failures in the runtime, without LLVM --------------------===//
//
// The runtime (driver, cuBLASLt, executables, artifacts) links nothing of
// LLVM, so that an application that only runs compiled artifacts carries no
// compiler (docs/embedding.md). It lives with the support code the
// compiler and the runtime share. Its failures are these: an Error holds a
// message or nothing, and an Expected<T> a value or an Error. They read like
// LLVM's (`if (Error e = f()) return e;`, `if (!x) return x.takeError();`),
// and where compiler/support/LlvmError.h is included they convert to llvm::Error and
// llvm::Expected<T>, so the compiler's code calls the runtime unchanged.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdarg>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace fusec::rt {

class Error;

/// How an Error becomes another error type `To`: specialized with a static
/// `To convert(Error &&)` where that type is known (compiler/support/LlvmError.h).
template <typename To>
struct ErrorConversion;

class [[nodiscard]] Error {
public:
  static Error success() { return Error(); }
  static Error failure(std::string message) {
    Error e;
    e.msg = std::make_unique<std::string>(std::move(message));
    return e;
  }
  Error(Error &&) noexcept = default;
  Error &operator=(Error &&) noexcept = default;

  /// True when it holds a failure.
  explicit operator bool() const { return msg != nullptr; }
  /// The failure's text; empty for success.
  const std::string &message() const {
    static const std::string none;
    return msg ? *msg : none;
  }

  template <typename To, typename = decltype(ErrorConversion<To>::convert(std::declval<Error>()))>
  operator To() && {
    return ErrorConversion<To>::convert(std::move(*this));
  }

private:
  Error() = default;
  std::unique_ptr<std::string> msg;
};

/// A failure whose message is formatted as printf does.
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
inline Error
errorf(const char *format, ...) {
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string text(n > 0 ? size_t(n) : 0, '\0');
  if (n > 0)
    std::vsnprintf(text.data(), text.size() + 1, format, again);
  va_end(again);
  return Error::failure(std::move(text));
}

/// A value, or the Error that kept it from being made.
template <typename T>
class [[nodiscard]] Expected {
public:
  Expected(T v) : value(std::move(v)), error(Error::success()) {}
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U &&, T> &&
                                                    !std::is_same_v<std::decay_t<U>, Error>>>
  Expected(U &&v) : value(T(std::forward<U>(v))), error(Error::success()) {}
  /// `e` should hold a failure; a success becomes one (nothing to return).
  Expected(Error e)
      : error(e ? std::move(e) : Error::failure("internal error: success where a value was "
                                                "expected")) {}

  /// True when it holds a value.
  explicit operator bool() const { return value.has_value(); }
  T &operator*() { return *value; }
  const T &operator*() const { return *value; }
  T *operator->() { return &*value; }
  const T *operator->() const { return &*value; }
  /// The failure, leaving success behind; success when it holds a value.
  Error takeError() { return std::move(error); }

  template <typename To,
            typename = decltype(ErrorConversion<To>::convert(std::declval<Expected<T>>()))>
  operator To() && {
    return ErrorConversion<To>::convert(std::move(*this));
  }

private:
  std::optional<T> value;
  Error error;
};

} // namespace fusec::rt
