//===- Safetensors.cpp - read and write .safetensors files ---------------===//
//
// nlohmann/json reports problems by throwing; every call into it sits inside
// this file's try blocks, and what leaves the file is an llvm::Error whose
// message names the file, the tensor and the field at fault.
//
//===----------------------------------------------------------------------===//
#include "runtime/Safetensors.h"

#include "compiler/support/ReadFile.h"

#include "compiler/support/AtomicFile.h"
#include "compiler/support/StrictJson.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/MemoryBuffer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <optional>
#include <tuple>
#include <vector>

namespace fusec {
namespace {

using nlohmann::json;

constexpr uint64_t kMaxHeaderBytes = uint64_t(100) << 20;

llvm::Error fail(llvm::StringRef file, const llvm::Twine &message) {
  return llvm::make_error<llvm::StringError>(file + ": " + message,
                                             llvm::inconvertibleErrorCode());
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// A JSON value for an error message, cut short if long.
std::string excerpt(const json &j) {
  std::string s = j.dump(-1, ' ', /*ensure_ascii=*/true);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

/// One validated header entry.
struct Entry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin, end;
};

/// Checks one header entry against the data region of `dataSize` bytes.
llvm::Expected<Entry> parseEntry(llvm::StringRef file, const std::string &name,
                                 const json &j, uint64_t dataSize) {
  std::string where = "tensor '" + name + "': ";
  if (!j.is_object())
    return fail(file, where + "entry is not an object (found " + j.type_name() + ")");
  Entry e{name, DType::F32, {}, 0, 0};

  auto dtypeIt = j.find("dtype");
  if (dtypeIt == j.end() || !dtypeIt->is_string())
    return fail(file, where + "field 'dtype': expected a string");
  std::string dtypeName = dtypeIt->get<std::string>();
  std::optional<DType> dtype = parseSafetensorsDType(dtypeName);
  if (!dtype)
    return fail(file, where + "field 'dtype': unsupported dtype '" + dtypeName +
                          "' (expected one of F32, F16, BF16, I32, I64, BOOL)");
  e.dtype = *dtype;

  auto shapeIt = j.find("shape");
  if (shapeIt == j.end() || !shapeIt->is_array())
    return fail(file, where + "field 'shape': expected an array of non-negative integers");
  // Element counts are kept well inside int64 so numel * 8 cannot overflow.
  const uint64_t maxElements = uint64_t(1) << 59;
  uint64_t numel = 1;
  for (const json &d : *shapeIt) {
    if (!d.is_number_unsigned())
      return fail(file, where + "field 'shape': expected an array of non-negative "
                                "integers, found " + excerpt(*shapeIt));
    uint64_t dim = d.get<uint64_t>();
    if (dim > maxElements || (dim != 0 && numel > maxElements / dim))
      return fail(file, where + "field 'shape': " + excerpt(*shapeIt) + " has too many elements");
    numel *= dim;
    e.shape.push_back(static_cast<int64_t>(dim));
  }

  auto offIt = j.find("data_offsets");
  if (offIt == j.end() || !offIt->is_array() || offIt->size() != 2 ||
      !(*offIt)[0].is_number_unsigned() || !(*offIt)[1].is_number_unsigned())
    return fail(file, where + "field 'data_offsets': expected [begin, end] with "
                              "non-negative integers, found " +
                          (offIt == j.end() ? std::string("nothing") : excerpt(*offIt)));
  e.begin = (*offIt)[0].get<uint64_t>();
  e.end = (*offIt)[1].get<uint64_t>();
  if (e.begin > e.end)
    return fail(file, where + "field 'data_offsets': begin " + llvm::Twine(e.begin) +
                          " is after end " + llvm::Twine(e.end));
  if (e.end > dataSize)
    return fail(file, where + "field 'data_offsets': end " + llvm::Twine(e.end) +
                          " is past the end of the data region (" + llvm::Twine(dataSize) +
                          " bytes)");
  uint64_t need = numel * static_cast<uint64_t>(dtypeBytes(e.dtype));
  if (e.end - e.begin != need)
    return fail(file, where + "data_offsets span " + llvm::Twine(e.end - e.begin) +
                          " bytes but dtype " + dtypeName + " and shape " +
                          shapeString(e.shape) + " need " + llvm::Twine(need));
  return e;
}

/// Rejects two tensors that share bytes (empty tensors share nothing).
llvm::Error checkOverlaps(llvm::StringRef file, std::vector<Entry> entries) {
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [](const Entry &e) { return e.begin == e.end; }),
                entries.end());
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  const Entry *furthest = nullptr;
  for (const Entry &e : entries) {
    if (furthest && e.begin < furthest->end)
      return fail(file, "tensors '" + furthest->name + "' (bytes [" +
                            llvm::Twine(furthest->begin) + ", " + llvm::Twine(furthest->end) +
                            ")) and '" + e.name + "' (bytes [" + llvm::Twine(e.begin) + ", " +
                            llvm::Twine(e.end) + ")) overlap");
    if (!furthest || e.end > furthest->end)
      furthest = &e;
  }
  return llvm::Error::success();
}

llvm::Error readMetadata(llvm::StringRef file, const json &j, SafetensorsMetadata *out) {
  if (!j.is_object())
    return fail(file, "field '__metadata__': expected an object of strings, found " +
                          excerpt(j));
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it->is_string())
      return fail(file, "field '__metadata__': key '" + it.key() +
                            "': expected a string, found " + excerpt(*it));
    if (out)
      (*out)[it.key()] = it->get<std::string>();
  }
  return llvm::Error::success();
}

/// Parses the header JSON, reporting nlohmann's exceptions as errors.
llvm::Expected<json> parseHeaderJson(llvm::StringRef file, llvm::StringRef text) {
  try {
    json header = parseStrictJson(text.begin(), text.end());
    if (!header.is_object())
      return fail(file, llvm::Twine("header is not a JSON object (found ") +
                            header.type_name() + ")");
    return header;
  } catch (const StrictJsonError &e) {
    return fail(file, llvm::Twine("not a safetensors file: invalid JSON header: ") + e.what());
  } catch (const json::exception &e) {
    return fail(file, llvm::Twine("not a safetensors file: invalid JSON header: ") + e.what());
  }
}

} // namespace

llvm::Expected<TensorMap> parseSafetensors(llvm::StringRef file, llvm::StringRef bytes,
                                           SafetensorsMetadata *metadata) {
  if (bytes.size() < 8)
    return fail(file, "not a safetensors file: it is " + llvm::Twine(bytes.size()) +
                          " bytes, too short for the 8-byte header length");
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i)
    headerLen = (headerLen << 8) | static_cast<uint8_t>(bytes[i]);
  if (headerLen > kMaxHeaderBytes)
    return fail(file, "not a safetensors file: its header length " + llvm::Twine(headerLen) +
                          " exceeds the 100 MiB limit");
  if (headerLen > bytes.size() - 8)
    return fail(file, "not a safetensors file: its header length " + llvm::Twine(headerLen) +
                          " exceeds the file size (" +
                          llvm::Twine(bytes.size()) + " bytes)");

  llvm::Expected<json> header = parseHeaderJson(file, bytes.substr(8, headerLen));
  if (!header)
    return header.takeError();
  llvm::StringRef dataRegion = bytes.drop_front(8 + headerLen);

  std::vector<Entry> entries;
  for (auto it = header->begin(); it != header->end(); ++it) {
    if (it.key() == "__metadata__") {
      if (llvm::Error err = readMetadata(file, *it, metadata))
        return std::move(err);
      continue;
    }
    llvm::Expected<Entry> entry = parseEntry(file, it.key(), *it, dataRegion.size());
    if (!entry)
      return entry.takeError();
    entries.push_back(std::move(*entry));
  }
  if (llvm::Error err = checkOverlaps(file, entries))
    return std::move(err);

  TensorMap tensors;
  for (const Entry &e : entries) {
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
    return fail(path, llvm::toString(bytes.takeError()));
  return writeFileAtomically(path, *bytes);
}

} // namespace fusec
