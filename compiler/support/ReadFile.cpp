//===- ReadFile.cpp - every input and cache file, read bounded ------------===//
#include "compiler/support/ReadFile.h"

#include "compiler/support/Printable.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fusec {
namespace {

class MissingFile : public llvm::ErrorInfo<MissingFile, llvm::StringError> {
public:
  static char ID;
  using llvm::ErrorInfo<MissingFile, llvm::StringError>::ErrorInfo;
};
char MissingFile::ID;

llvm::Error fail(llvm::StringRef path, llvm::StringRef what, const std::string &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "cannot read %s '%s': %s",
                                 what.str().c_str(), printable(path).c_str(), why.c_str());
}

std::string bytes(uint64_t n) {
  if (n >= (uint64_t(1) << 30) && n % (uint64_t(1) << 30) == 0)
    return std::to_string(n >> 30) + " GiB";
  if (n >= (uint64_t(1) << 20) && n % (uint64_t(1) << 20) == 0)
    return std::to_string(n >> 20) + " MiB";
  return std::to_string(n) + " bytes";
}

/// Closes the descriptor on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
read(llvm::StringRef path, llvm::StringRef what, uint64_t offset, uint64_t length, bool whole,
     uint64_t limit) {
  std::string p = path.str();
  Fd f;
  // Non-blocking, so that opening a FIFO returns at once; the type check
  // below then refuses it.
  f.fd = ::open(p.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (f.fd < 0) {
    int e = errno;
    if (e == ENOENT || e == ENOTDIR)  // no such file, or no such folder on its path
      return llvm::make_error<MissingFile>("cannot read " + what.str() + " '" + printable(path) +
                                               "': " + std::strerror(e),
                                           llvm::inconvertibleErrorCode());
    return fail(path, what, std::strerror(e));
  }
  struct stat st;
  if (::fstat(f.fd, &st) != 0)
    return fail(path, what, std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return fail(path, what,
                S_ISDIR(st.st_mode) ? std::strerror(EISDIR)
                                    : "not a regular file (a FIFO, a device or a socket)");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (whole) {
    if (size > limit)
      return fail(path, what,
                  "it holds " + bytes(size) + ", more than the " + bytes(limit) + " a " +
                      what.str() + " may hold");
    length = size;
  } else if (offset > size || length > size - offset) {
    return fail(path, what,
                std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                    " are past its end (" + std::to_string(size) + " bytes)");
  }
  int flags = ::fcntl(f.fd, F_GETFL);
  if (flags >= 0)
    ::fcntl(f.fd, F_SETFL, flags & ~O_NONBLOCK);
  std::unique_ptr<llvm::WritableMemoryBuffer> buffer =
      llvm::WritableMemoryBuffer::getNewUninitMemBuffer(length, path);
  if (!buffer)
    return fail(path, what, "out of memory for " + bytes(length));
  char *out = buffer->getBufferStart();
  uint64_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(f.fd, out + done, static_cast<size_t>(std::min<uint64_t>(length - done, 1 << 30)),
                        static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return fail(path, what, std::strerror(errno));
    if (n == 0)
      return fail(path, what, "it became shorter while being read");
    done += static_cast<uint64_t>(n);
  }
  return std::unique_ptr<llvm::MemoryBuffer>(std::move(buffer));
}

} // namespace

uint64_t FileLimits::tensors() {
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0)
    return uint64_t(1) << 40;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readFileBounded(llvm::StringRef path, llvm::StringRef what, uint64_t limit) {
  return read(path, what, 0, 0, true, limit);
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readFileSlice(llvm::StringRef path, llvm::StringRef what, uint64_t offset, uint64_t length) {
  if (length > FileLimits::tensors())
    return fail(path, what, std::to_string(length) + " bytes are more than this host's memory");
  return read(path, what, offset, length, false, 0);
}

bool isMissingFile(const llvm::Error &err) { return err.isA<MissingFile>(); }

} // namespace fusec
