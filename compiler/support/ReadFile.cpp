//===- ReadFile.cpp - every input and cache file, read bounded ------------===//
#include "compiler/support/ReadFile.h"

#include "compiler/support/Printable.h"
#include "compiler/support/ReadBytes.h"
#include "compiler/support/LlvmError.h"

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

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
read(llvm::StringRef path, llvm::StringRef what, uint64_t offset, uint64_t length, bool whole,
     uint64_t limit) {
  std::unique_ptr<llvm::WritableMemoryBuffer> buffer;
  bool missing = false;
  rt::Error err = readFileInto(
      path.str(), what, offset, length, whole, limit,
      [&](uint64_t n) -> char * {
        buffer = llvm::WritableMemoryBuffer::getNewUninitMemBuffer(n, path);
        return buffer ? buffer->getBufferStart() : nullptr;
      },
      &missing);
  if (err && missing)
    return llvm::make_error<MissingFile>(err.message(), llvm::inconvertibleErrorCode());
  if (err)
    return rt::ErrorConversion<llvm::Error>::convert(std::move(err));
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
