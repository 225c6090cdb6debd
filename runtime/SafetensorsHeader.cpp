//===- SafetensorsHeader.cpp - a safetensors file's index, without LLVM ---===//
//
// nlohmann/json reports problems by throwing; every call into it sits inside
// this file's try blocks, and what leaves the file is an rt::Error whose
// message names the file, the tensor and the field at fault.
//
//===----------------------------------------------------------------------===//
#include "runtime/SafetensorsHeader.h"

#include "compiler/support/HostTensor.h"
#include "compiler/support/Printable.h"
#include "compiler/support/ReadBytes.h"
#include "compiler/support/StrictJson.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <tuple>

namespace fusec {
namespace {

using nlohmann::json;

rt::Error fail(std::string_view file, const std::string &message) {
  return rt::Error::failure(printable(file) + ": " + message);
}

/// A JSON value for an error message, cut short if long.
std::string excerpt(const json &j) {
  std::string s = j.dump(-1, ' ', /*ensure_ascii=*/true);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

rt::Expected<SafetensorsEntry> parseEntry(std::string_view file, const std::string &name,
                                          const json &j, uint64_t dataSize) {
  std::string where = "tensor '" + printable(name) + "': ";
  if (!j.is_object())
    return fail(file, where + "entry is not an object (found " + j.type_name() + ")");
  SafetensorsEntry e;
  e.name = name;

  auto dtypeIt = j.find("dtype");
  if (dtypeIt == j.end() || !dtypeIt->is_string())
    return fail(file, where + "field 'dtype': expected a string");
  std::string dtypeName = dtypeIt->get<std::string>();
  std::optional<DType> dtype = parseSafetensorsDType(dtypeName);
  if (!dtype)
    return fail(file, where + "field 'dtype': unsupported dtype '" + printable(dtypeName) +
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
    return fail(file, where + "field 'data_offsets': begin " + std::to_string(e.begin) +
                          " is after end " + std::to_string(e.end));
  if (e.end > dataSize)
    return fail(file, where + "field 'data_offsets': end " + std::to_string(e.end) +
                          " is past the end of the data region (" + std::to_string(dataSize) +
                          " bytes)");
  uint64_t need = numel * static_cast<uint64_t>(dtypeBytes(e.dtype));
  if (e.end - e.begin != need)
    return fail(file, where + "data_offsets span " + std::to_string(e.end - e.begin) +
                          " bytes but dtype " + dtypeName + " and shape " + formatShape(e.shape) +
                          " need " + std::to_string(need));
  return std::move(e);
}

/// Rejects two tensors that share bytes (empty tensors share nothing).
rt::Error checkOverlaps(std::string_view file, std::vector<SafetensorsEntry> entries) {
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [](const SafetensorsEntry &e) { return e.begin == e.end; }),
                entries.end());
  std::sort(entries.begin(), entries.end(),
            [](const SafetensorsEntry &a, const SafetensorsEntry &b) {
              return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
            });
  const SafetensorsEntry *furthest = nullptr;
  for (const SafetensorsEntry &e : entries) {
    if (furthest && e.begin < furthest->end)
      return fail(file, "tensors '" + printable(furthest->name) + "' (bytes [" +
                            std::to_string(furthest->begin) + ", " +
                            std::to_string(furthest->end) + ")) and '" + printable(e.name) +
                            "' (bytes [" + std::to_string(e.begin) + ", " +
                            std::to_string(e.end) + ")) overlap");
    if (!furthest || e.end > furthest->end)
      furthest = &e;
  }
  return rt::Error::success();
}

rt::Error readMetadata(std::string_view file, const json &j,
                       std::map<std::string, std::string> &out) {
  if (!j.is_object())
    return fail(file, "field '__metadata__': expected an object of strings, found " + excerpt(j));
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it->is_string())
      return fail(file, "field '__metadata__': key '" + printable(it.key()) +
                            "': expected a string, found " + excerpt(*it));
    out[it.key()] = it->get<std::string>();
  }
  return rt::Error::success();
}

} // namespace

rt::Expected<uint64_t> safetensorsHeaderLength(std::string_view file, std::string_view first8,
                                               uint64_t fileSize) {
  if (first8.size() < 8 || fileSize < 8)
    return fail(file, "not a safetensors file: it is " + std::to_string(fileSize) +
                          " bytes, too short for the 8-byte header length");
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i)
    headerLen = (headerLen << 8) | static_cast<uint8_t>(first8[i]);
  if (headerLen > kMaxSafetensorsHeaderBytes)
    return fail(file, "not a safetensors file: its header length " + std::to_string(headerLen) +
                          " exceeds the 100 MiB limit");
  if (headerLen > fileSize - 8)
    return fail(file, "not a safetensors file: its header length " + std::to_string(headerLen) +
                          " exceeds the file size (" + std::to_string(fileSize) + " bytes)");
  return headerLen;
}

rt::Expected<SafetensorsHeader> parseSafetensorsHeader(std::string_view file,
                                                       std::string_view text, uint64_t dataSize) {
  json header;
  try {
    header = parseStrictJson(text.data(), text.data() + text.size());
  } catch (const StrictJsonError &e) {
    return fail(file, std::string("not a safetensors file: invalid JSON header: ") + e.what());
  } catch (const json::exception &e) {
    return fail(file, std::string("not a safetensors file: invalid JSON header: ") + e.what());
  }
  if (!header.is_object())
    return fail(file, std::string("header is not a JSON object (found ") + header.type_name() +
                          ")");
  SafetensorsHeader out;
  try {
    for (auto it = header.begin(); it != header.end(); ++it) {
      if (it.key() == "__metadata__") {
        if (rt::Error err = readMetadata(file, *it, out.metadata))
          return std::move(err);
        continue;
      }
      auto entry = parseEntry(file, it.key(), *it, dataSize);
      if (!entry)
        return entry.takeError();
      out.entries.push_back(std::move(*entry));
    }
  } catch (const json::exception &e) {
    return fail(file, std::string("invalid header: ") + e.what());
  }
  if (rt::Error err = checkOverlaps(file, out.entries))
    return std::move(err);
  return std::move(out);
}

rt::Expected<SafetensorsHeader> parseSafetensorsPrefix(std::string_view file,
                                                       std::string_view bytes, uint64_t fileSize) {
  auto length = safetensorsHeaderLength(file, bytes.substr(0, 8), fileSize);
  if (!length)
    return length.takeError();
  if (bytes.size() < 8 + *length)
    return fail(file, "internal error: the header was not read whole");
  auto header = parseSafetensorsHeader(file, bytes.substr(8, *length), fileSize - 8 - *length);
  if (header)
    header->dataStart = 8 + *length;
  return header;
}

rt::Expected<SafetensorsHeader> readSafetensorsHeader(const InputFile &file) {
  char first8[8] = {};
  if (file.size() >= 8)
    if (rt::Error err = file.read(0, 8, first8))
      return std::move(err);
  auto length = safetensorsHeaderLength(file.path(), std::string_view(first8, 8), file.size());
  if (!length)
    return length.takeError();
  std::string text(*length, '\0');
  if (rt::Error err = file.read(8, *length, text.data()))
    return std::move(err);
  auto header = parseSafetensorsHeader(file.path(), text, file.size() - 8 - *length);
  if (!header)
    return header.takeError();
  header->dataStart = 8 + *length;
  return header;
}

} // namespace fusec
