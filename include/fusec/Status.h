//===- Status.h - the outcome of a call of fusec's public API --------------===//
#pragma once

#include <cstdint>
#include <string>

namespace fusec {

/// What kind of failure a Status reports.
enum class ErrorCode : uint8_t {
  Ok,
  InvalidGraph,       ///< the graph or model could not be read or checked
  CompileFailed,      ///< fusion, planning or code generation failed
  InvalidArgument,    ///< a call's arguments do not match the program (counts, shapes)
  NoGpu,              ///< no usable GPU or driver
  WrongArchitecture,  ///< the kernels were built for another GPU architecture
  RuntimeFailed,      ///< compiling, loading or running the kernels on the GPU failed
  InvalidArtifact,    ///< a compiled artifact could not be read or checked
};

/// The outcome of a call: success, or a code and a message that says what
/// went wrong and where.
class [[nodiscard]] Status {
public:
  static Status success() { return Status(); }
  static Status error(std::string message, ErrorCode code = ErrorCode::RuntimeFailed) {
    Status s;
    s.msg = std::move(message);
    s.errorCode = code == ErrorCode::Ok ? ErrorCode::RuntimeFailed : code;
    return s;
  }
  bool ok() const { return errorCode == ErrorCode::Ok; }
  explicit operator bool() const { return ok(); }
  ErrorCode code() const { return errorCode; }
  const std::string &message() const { return msg; }

private:
  ErrorCode errorCode = ErrorCode::Ok;
  std::string msg;
};

} // namespace fusec
