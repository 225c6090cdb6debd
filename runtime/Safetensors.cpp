//===- Safetensors.cpp - read and write .safetensors files ---------------===//
//
// Reading goes through runtime/SafetensorsHeader.h (the header's checks);
// writing encodes the header with nlohmann/json.
//
//===----------------------------------------------------------------------===//
#include "runtime/Safetensors.h"

#include "compiler/support/ReadBytes.h"
#include "compiler/support/ReadFile.h"

#include "compiler/support/AtomicFile.h"
#include "compiler/support/LlvmError.h"
#include "runtime/SafetensorsHeader.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/MemoryBuffer.h"

#include <nlohmann/json.hpp>

#include <cstring>

namespace fusec {

using nlohmann::json;

llvm::Expected<TensorMap> parseSafetensors(llvm::StringRef file, llvm::StringRef bytes,
                                           SafetensorsMetadata *metadata) {
  auto header = parseSafetensorsPrefix(file, bytes, bytes.size());
  if (!header)
    return header.takeError();
  if (metadata)
    *metadata = std::move(header->metadata);
  llvm::StringRef dataRegion = bytes.drop_front(header->dataStart);
  TensorMap tensors;
  for (const SafetensorsEntry &e : header->entries) {
    HostTensor t(e.dtype, e.shape);
    if (t.nbytes() > 0)
      std::memcpy(t.data(), dataRegion.data() + e.begin, static_cast<size_t>(t.nbytes()));
    tensors.emplace(e.name, std::move(t));
  }
  return tensors;
}

llvm::Expected<TensorMap> readSafetensors(llvm::StringRef path,
                                          SafetensorsMetadata *metadata) {
  auto buffer = readFileBounded(path, "tensors file", FileLimits::tensors());
  if (!buffer)
    return buffer.takeError();
  return parseSafetensors(path, (*buffer)->getBuffer(), metadata);
}

llvm::Expected<TensorMap> readSafetensorsSelected(
    llvm::StringRef path, const std::function<bool(const std::string &)> &wanted,
    std::vector<std::string> *others) {
  auto file = InputFile::open(path.str(), "tensors file");
  if (!file)
    return file.takeError();
  auto header = readSafetensorsHeader(*file);
  if (!header)
    return header.takeError();
  const uint64_t dataStart = header->dataStart;
  TensorMap tensors;
  for (const SafetensorsEntry &e : header->entries) {
    if (!wanted(e.name)) {
      if (others)
        others->push_back(e.name);
      continue;
    }
    HostTensor t(e.dtype, e.shape);
    if (t.nbytes() > 0)
      if (rt::Error err = file->read(dataStart + e.begin, uint64_t(t.nbytes()),
                                     reinterpret_cast<char *>(t.data())))
        return std::move(err);
    tensors.emplace(e.name, std::move(t));
  }
  return tensors;
}

llvm::Expected<std::string> serializeSafetensors(const TensorMap &tensors,
                                                 const SafetensorsMetadata &metadata) {
  json header = json::object();
  uint64_t offset = 0;
  for (const auto &[name, t] : tensors) {
    if (name == "__metadata__")
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "tensor name '__metadata__' is reserved");
    uint64_t size = static_cast<uint64_t>(t.nbytes());
    header[name] = {{"dtype", std::string(safetensorsName(t.dtype()))},
                    {"shape", t.shape()},
                    {"data_offsets", {offset, offset + size}}};
    offset += size;
  }
  if (!metadata.empty())
    header["__metadata__"] = metadata;

  std::string text;
  try {
    text = header.dump(); // std::map keys: sorted, so the output is deterministic
  } catch (const json::exception &e) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot encode the header: %s", e.what());
  }
  // The data region starts 8-byte aligned; the format allows trailing spaces.
  text.append((8 - text.size() % 8) % 8, ' ');

  std::string out;
  out.reserve(8 + text.size() + offset);
  uint64_t len = text.size();
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((len >> (8 * i)) & 0xFF));
  out += text;
  for (const auto &entry : tensors)
    out.append(reinterpret_cast<const char *>(entry.second.data()),
               static_cast<size_t>(entry.second.nbytes()));
  return out;
}

llvm::Error writeSafetensors(llvm::StringRef path, const TensorMap &tensors,
                             const SafetensorsMetadata &metadata) {
  llvm::Expected<std::string> bytes = serializeSafetensors(tensors, metadata);
  if (!bytes)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s", path.str().c_str(),
                                   llvm::toString(bytes.takeError()).c_str());
  return writeFileAtomically(path, *bytes);
}

} // namespace fusec
