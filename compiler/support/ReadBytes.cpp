//===- ReadBytes.cpp - the bounded file reader, without LLVM --------------===//
#include "compiler/support/ReadBytes.h"

#include "compiler/support/Printable.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fusec {
namespace {

/// Closes the descriptor on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

} // namespace

std::string byteCount(uint64_t n) {
  if (n >= (uint64_t(1) << 30) && n % (uint64_t(1) << 30) == 0)
    return std::to_string(n >> 30) + " GiB";
  if (n >= (uint64_t(1) << 20) && n % (uint64_t(1) << 20) == 0)
    return std::to_string(n >> 20) + " MiB";
  return std::to_string(n) + " bytes";
}

rt::Error readFileInto(const std::string &path, std::string_view what, uint64_t offset,
                       uint64_t length, bool whole, uint64_t limit,
                       const std::function<char *(uint64_t)> &allocate, bool *missing) {
  auto fail = [&](const std::string &why) {
    return rt::Error::failure("cannot read " + std::string(what) + " '" + printable(path) +
                              "': " + why);
  };
  if (missing)
    *missing = false;
  Fd f;
  // Non-blocking, so that opening a FIFO returns at once; the type check
  // below then refuses it.
  f.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (f.fd < 0) {
    int e = errno;
    if (missing && (e == ENOENT || e == ENOTDIR))  // no such file, or folder on its path
      *missing = true;
    return fail(std::strerror(e));
  }
  struct stat st;
  if (::fstat(f.fd, &st) != 0)
    return fail(std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return fail(S_ISDIR(st.st_mode) ? std::strerror(EISDIR)
                                    : "not a regular file (a FIFO, a device or a socket)");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (whole) {
    if (size > limit)
      return fail("it holds " + byteCount(size) + ", more than the " + byteCount(limit) + " a " +
                  std::string(what) + " may hold");
    length = size;
  } else if (offset > size || length > size - offset) {
    return fail(std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                " are past its end (" + std::to_string(size) + " bytes)");
  }
  int flags = ::fcntl(f.fd, F_GETFL);
  if (flags >= 0)
    ::fcntl(f.fd, F_SETFL, flags & ~O_NONBLOCK);
  char *out = allocate(length);
  if (!out)
    return fail("out of memory for " + byteCount(length));
  uint64_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(f.fd, out + done,
                        static_cast<size_t>(std::min<uint64_t>(length - done, 1 << 30)),
                        static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return fail(std::strerror(errno));
    if (n == 0)
      return fail("it became shorter while being read");
    done += static_cast<uint64_t>(n);
  }
  return rt::Error::success();
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
