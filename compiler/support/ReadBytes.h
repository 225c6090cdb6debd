//===- ReadBytes.h - the bounded file reader, without LLVM ----------------===//
//
// The mechanism under ReadFile.h, kept free of LLVM so that the runtime
// (which reads artifacts) shares it: into memory, never mapped, regular
// files only (a FIFO or a device is refused without blocking on it), up to
// a limit. Errors name the file and the cause.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/support/Error.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace fusec {

/// A regular file opened for reading at offsets (never mapped: a file that
/// another process rewrites cannot fault the reader). Opening refuses a
/// FIFO, a device or a socket without blocking on it.
class InputFile {
public:
  /// `what` the file is, for messages ("weights file"). `missing` (if given)
  /// is set when the file or a folder on its path does not exist.
  static rt::Expected<InputFile> open(const std::string &path, std::string_view what,
                                      bool *missing = nullptr);
  InputFile(InputFile &&o) noexcept;
  InputFile &operator=(InputFile &&o) noexcept;
  InputFile(const InputFile &) = delete;
  InputFile &operator=(const InputFile &) = delete;
  ~InputFile();

  /// The size when it was opened.
  uint64_t size() const { return bytes; }
  const std::string &path() const { return name; }
  /// Reads `length` bytes at `offset` into `out`.
  rt::Error read(uint64_t offset, uint64_t length, char *out) const;
  /// "cannot read weights file 'w.safetensors': `why`".
  rt::Error failure(const std::string &why) const;

private:
  InputFile() = default;
  int fd = -1;
  uint64_t bytes = 0;
  std::string name, kind;
};

/// Reads `path` (`what` it is, for messages) into memory that `allocate`
/// returns for the byte count (null: out of memory): the whole file when
/// `whole` (failing past `limit` bytes), else `length` bytes at `offset`.
/// `missing` (if given) is set when the file or a folder on its path does
/// not exist.
rt::Error readFileInto(const std::string &path, std::string_view what, uint64_t offset,
                       uint64_t length, bool whole, uint64_t limit,
                       const std::function<char *(uint64_t)> &allocate, bool *missing = nullptr);

/// The whole file at `path`, at most `limit` bytes.
rt::Expected<std::string> readFileBytes(const std::string &path, std::string_view what,
                                        uint64_t limit);

/// "3 MiB", "1 GiB", "17 bytes".
std::string byteCount(uint64_t n);

} // namespace fusec
