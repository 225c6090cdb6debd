//===- AtomicFile.cpp - replace a file's contents all at once ------------===//
//
// The temporary file lives next to the target so that rename(2) stays within
// one file system and is atomic. It is created with O_EXCL and mode 0666, so
// the process umask decides the final permissions just as for a plain open.
//
//===----------------------------------------------------------------------===//
#include "compiler/support/AtomicFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include <climits>
#include <cstdlib>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fusec {
namespace {

llvm::Error systemError(llvm::StringRef path, llvm::StringRef step, int err) {
  return llvm::createStringError(std::error_code(err, std::generic_category()),
                                 "cannot write '%s': %s: %s", path.str().c_str(),
                                 step.str().c_str(), std::strerror(err));
}

/// Opens a fresh temporary file beside `path`; sets `tempPath` and returns the
/// descriptor, or -1 with errno set.
int createTemp(llvm::StringRef path, std::string &tempPath) {
  static std::atomic<uint64_t> counter{0};
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  std::string prefix = (dir.empty() ? std::string(".") : dir.str()) + "/." +
                       llvm::sys::path::filename(path).str() + ".tmp." +
                       std::to_string(::getpid()) + ".";
  // Another process or thread may own a name; a few fresh names settle it.
  for (int attempt = 0; attempt < 64; ++attempt) {
    tempPath = prefix + std::to_string(counter.fetch_add(1));
    int fd = ::open(tempPath.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST)
      return fd;
  }
  errno = EEXIST;
  return -1;
}

/// Writes all of `bytes`, retrying short writes and interrupted calls.
bool writeAll(int fd, llvm::StringRef bytes) {
  const char *p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return false;
    if (n == 0) {
      errno = EIO; // a zero-byte write of a non-empty buffer would loop forever
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

/// Makes the rename itself durable; failure here loses nothing that was
/// promised (the new contents are already visible), so it is not reported.
void syncDirectory(llvm::StringRef path) {
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  int fd = ::open(dir.empty() ? "." : dir.str().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return;
  (void)::fsync(fd);
  ::close(fd);
}

/// Writes `bytes` straight into an existing file that is not a regular one
/// (a device such as /dev/null, a FIFO): renaming a temporary file over it
/// would replace the device itself. A FIFO nobody reads is an error, not a
/// wait without end.
llvm::Error writeInPlace(llvm::StringRef path, llvm::StringRef bytes) {
  int fd = ::open(path.str().c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENXIO)
    return systemError(path, "it is a FIFO that no process is reading", errno);
  if (fd < 0)
    return systemError(path, "cannot open it", errno);
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0)
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  bool ok = writeAll(fd, bytes);
  int err = ok ? 0 : errno;
  ::close(fd);
  return ok ? llvm::Error::success() : systemError(path, "write failed", err);
}

/// The descriptor behind /dev/stdout, /dev/stderr and /dev/fd/N (or
/// /proc/self/fd/N), -1 for other paths: written through as inherited, so a
/// shell's `> file` or a pipe sees the bytes where it expects them.
int inheritedDescriptor(llvm::StringRef path) {
  if (path == "/dev/stdout")
    return 1;
  if (path == "/dev/stderr")
    return 2;
  unsigned n = 0;
  if ((path.consume_front("/dev/fd/") || path.consume_front("/proc/self/fd/")) &&
      !path.getAsInteger(10, n))
    return int(n);
  return -1;
}

} // namespace

/// A temporary file beside `path`, written, synced and renamed over it:
/// whatever `path` was (a link, a FIFO) is replaced, not written through.
static llvm::Error replaceAtomically(llvm::StringRef path, llvm::StringRef bytes);

llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef bytes, bool replaceEntry) {
  if (replaceEntry)
    return replaceAtomically(path, bytes);
  if (int fd = inheritedDescriptor(path); fd >= 0) {
    if (!writeAll(fd, bytes))
      return systemError(path, "write failed", errno);
    return llvm::Error::success();
  }
  // A symbolic link is kept: what it points to is written (atomically when
  // that is a regular file or does not exist yet, in place when it is a
  // device or FIFO).
  struct stat st;
  if (::lstat(path.str().c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    struct stat target;
    if (::stat(path.str().c_str(), &target) == 0) {
      if (!S_ISREG(target.st_mode) && !S_ISDIR(target.st_mode))
        return writeInPlace(path, bytes);
      char *resolved = ::realpath(path.str().c_str(), nullptr);
      if (!resolved)
        return systemError(path, "cannot resolve the symbolic link", errno);
      std::string real = resolved;
      ::free(resolved);
      return writeFileAtomically(real, bytes);
    }
    // A link to nothing yet: create what it names, as a shell's `>` does.
    char link[PATH_MAX];
    ssize_t n = ::readlink(path.str().c_str(), link, sizeof link - 1);
    if (n <= 0)
      return systemError(path, "cannot read the symbolic link", errno);
    std::string to(link, size_t(n));
    if (!llvm::sys::path::is_absolute(to)) {
      llvm::SmallString<256> joined(llvm::sys::path::parent_path(path));
      llvm::sys::path::append(joined, to);
      to = std::string(joined);
    }
    if (to == path)
      return systemError(path, "the symbolic link points at itself", ELOOP);
    return writeFileAtomically(to, bytes);
  }
  bool existing = ::stat(path.str().c_str(), &st) == 0;
  if (existing && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
    return writeInPlace(path, bytes);
  return replaceAtomically(path, bytes);
}

static llvm::Error replaceAtomically(llvm::StringRef path, llvm::StringRef bytes) {
  struct stat st;
  bool existing = ::lstat(path.str().c_str(), &st) == 0 && S_ISREG(st.st_mode);
  std::string tempPath;
  int fd = createTemp(path, tempPath);
  if (fd < 0)
    return systemError(path, "cannot create a temporary file", errno);
  // A file replaced keeps its permissions (a fresh one gets the umask's).
  if (existing)
    (void)::fchmod(fd, st.st_mode & 07777);

  const char *step = nullptr;
  if (!writeAll(fd, bytes))
    step = "write failed";
  else if (::fsync(fd) != 0)
    step = "fsync failed";
  int err = step ? errno : 0;
  if (::close(fd) != 0 && !step) {
    step = "close failed";
    err = errno;
  }
  if (!step && ::rename(tempPath.c_str(), path.str().c_str()) != 0) {
    step = "rename failed";
    err = errno;
  }
  if (step) {
    ::unlink(tempPath.c_str());
    return systemError(path, step, err);
  }
  syncDirectory(path);
  return llvm::Error::success();
}

} // namespace fusec
