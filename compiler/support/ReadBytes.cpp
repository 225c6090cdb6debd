//===- ReadBytes.cpp - the bounded file reader, without LLVM --------------===//
#include "compiler/support/ReadBytes.h"

#include "compiler/support/Printable.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace fusec {

std::string byteCount(uint64_t n) {
  if (n >= (uint64_t(1) << 30) && n % (uint64_t(1) << 30) == 0)
    return std::to_string(n >> 30) + " GiB";
  if (n >= (uint64_t(1) << 20) && n % (uint64_t(1) << 20) == 0)
    return std::to_string(n >> 20) + " MiB";
  return std::to_string(n) + " bytes";
}

rt::Expected<InputFile> InputFile::open(const std::string &path, std::string_view what,
                                        bool *missing) {
  InputFile f;
  f.name = path;
  f.kind = what;
  if (missing)
    *missing = false;
  // Non-blocking, so that opening a FIFO returns at once; the type check
  // below then refuses it.
  f.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (f.fd < 0) {
    int e = errno;
    if (missing && (e == ENOENT || e == ENOTDIR))  // no such file, or folder on its path
      *missing = true;
    return f.failure(std::strerror(e));
  }
  struct stat st;
  if (::fstat(f.fd, &st) != 0)
    return f.failure(std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return f.failure(S_ISDIR(st.st_mode) ? std::strerror(EISDIR)
                                         : "not a regular file (a FIFO, a device or a socket)");
  f.bytes = static_cast<uint64_t>(st.st_size);
  int flags = ::fcntl(f.fd, F_GETFL);
  if (flags >= 0)
    ::fcntl(f.fd, F_SETFL, flags & ~O_NONBLOCK);
  return std::move(f);
}

InputFile::InputFile(InputFile &&o) noexcept
    : fd(std::exchange(o.fd, -1)), bytes(o.bytes), name(std::move(o.name)),
      kind(std::move(o.kind)) {}

InputFile &InputFile::operator=(InputFile &&o) noexcept {
  if (this != &o) {
    if (fd >= 0)
      ::close(fd);
    fd = std::exchange(o.fd, -1);
    bytes = o.bytes;
    name = std::move(o.name);
    kind = std::move(o.kind);
  }
  return *this;
}

InputFile::~InputFile() {
  if (fd >= 0)
    ::close(fd);
}

rt::Error InputFile::failure(const std::string &why) const {
  return rt::Error::failure("cannot read " + kind + " '" + printable(name) + "': " + why);
}

rt::Error InputFile::read(uint64_t offset, uint64_t length, char *out) const {
  if (offset > bytes || length > bytes - offset)
    return failure(std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                   " are past its end (" + std::to_string(bytes) + " bytes)");
  uint64_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd, out + done,
                        static_cast<size_t>(std::min<uint64_t>(length - done, 1 << 30)),
                        static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return failure(std::strerror(errno));
    if (n == 0)
      return failure("it became shorter while being read");
    done += static_cast<uint64_t>(n);
  }
  return rt::Error::success();
}

rt::Error readFileInto(const std::string &path, std::string_view what, uint64_t offset,
                       uint64_t length, bool whole, uint64_t limit,
                       const std::function<char *(uint64_t)> &allocate, bool *missing) {
  auto f = InputFile::open(path, what, missing);
  if (!f)
    return f.takeError();
  if (whole) {
    if (f->size() > limit)
      return f->failure("it holds " + byteCount(f->size()) + ", more than the " +
                        byteCount(limit) + " a " + std::string(what) + " may hold");
    offset = 0;
    length = f->size();
  } else if (offset > f->size() || length > f->size() - offset) {
    return f->read(offset, length, nullptr);  // the message for a read past the end
  }
  char *out = allocate(length);
  if (!out)
    return f->failure("out of memory for " + byteCount(length));
  return f->read(offset, length, out);
}

rt::Expected<std::string> readFileBytes(const std::string &path, std::string_view what,
                                        uint64_t limit) {
  std::string bytes;
  rt::Error err = readFileInto(path, what, 0, 0, true, limit, [&](uint64_t n) -> char * {
    try {
      bytes.resize(n);
    } catch (const std::bad_alloc &) {
      return nullptr;
    }
    return bytes.data();
  });
  if (err)
    return std::move(err);
  return std::move(bytes);
}

} // namespace fusec
