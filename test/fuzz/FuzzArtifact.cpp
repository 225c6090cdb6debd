//===- FuzzArtifact.cpp - libFuzzer target: compiled artifacts ------------===//
//
// Any bytes as an artifact file, and, since the checksum stops almost every
// mutation at the door, any bytes as an artifact's JSON header sealed with
// a right preamble and checksum over 1 MiB of blobs: the header's parse and
// every plan check (compiler/plan/PlanJson.cpp) see the mutations.
//
//===----------------------------------------------------------------------===//
#include "runtime/ArtifactFile.h"

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace {
std::string sealed(const std::string &header) {
  static const std::string blobs(1 << 20, '\0');
  std::string out("FUSECART", 8);
  auto put = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
      out.push_back(char((v >> (8 * i)) & 0xff));
  };
  put(fusec::Artifact::kFormatVersion, 4);
  put(0, 4);
  put(header.size(), 8);
  put(blobs.size(), 8);
  uLong c = crc32(0L, Z_NULL, 0);
  c = crc32(c, reinterpret_cast<const Bytef *>(header.data()), uInt(header.size()));
  c = crc32(c, reinterpret_cast<const Bytef *>(blobs.data()), uInt(blobs.size()));
  put(c, 4);
  put(0, 4);
  return out + header + blobs;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  auto raw = fusec::parseArtifact(bytes, "fuzz.fusec");
  if (!raw)
    (void)raw.takeError();
  auto header = fusec::parseArtifact(sealed(bytes), "fuzz.fusec");
  if (!header)
    (void)header.takeError();
  return 0;
}
