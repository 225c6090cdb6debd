//===- ArtifactFile.cpp - a compiled graph in one file --------------------===//
#include "runtime/ArtifactFile.h"

#include "runtime/SafetensorsHeader.h"

#include "compiler/plan/PlanJson.h"
#include "compiler/support/Printable.h"
#include "compiler/support/ReadBytes.h"
#include "runtime/CudaDriver.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <cstring>
#include <map>
#include <set>

namespace fusec {
namespace {

constexpr char kMagic[8] = {'F', 'U', 'S', 'E', 'C', 'A', 'R', 'T'};
constexpr size_t kPreamble = 8 + 4 + 4 + 8 + 8 + 4 + 4;
/// JSON nesting deeper than a plan has is refused before it is parsed.
constexpr int kMaxDepth = 16;

void put(std::string &out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(char((v >> (8 * i)) & 0xff));
}

uint64_t get(const std::string &in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= uint64_t(uint8_t(in[at + i])) << (8 * i);
  return v;
}

uint32_t crc(const char *data, size_t n) {
  uLong c = crc32(0L, Z_NULL, 0);
  while (n > 0) {
    uInt chunk = uInt(std::min<size_t>(n, 1u << 30));
    c = crc32(c, reinterpret_cast<const Bytef *>(data), chunk);
    data += chunk;
    n -= chunk;
  }
  return uint32_t(c);
}

/// The deepest nesting of brackets outside strings in `text`.
int nesting(const std::string &text) {
  int depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

/// Where target plan `t` takes or gives other tensors than `first` (the
/// artifact's first target), "" where none: the same names, dtypes and ranks;
/// the same extents but in a dim either marks as a size that varies, where
/// `t`'s extent is its padded size of that name (so that a call's tensors
/// fit either compile); no such dim in a weight (bound once for every
/// compile), and no size argument a weight. A compile at size 1 marks
/// nothing (its shapes are exact) and takes no size argument, which come
/// after the graph's own inputs.
std::string disagreement(const PlanDesc &first, const PlanDesc &t,
                         const std::vector<bool> &parameters) {
  const std::string other = "its targets disagree on the graph's inputs or outputs";
  auto graphInputs = [](const PlanDesc &p) {
    size_t n = 0;
    for (size_t i = 0; i < p.inputs.size(); ++i)
      n += i >= p.padding.sizeArgs.size() || p.padding.sizeArgs[i].empty();
    return n;
  };
  if (t.sizeBounds != first.sizeBounds || graphInputs(t) != graphInputs(first) ||
      t.outputs.size() != first.outputs.size())
    return other;
  auto markedAs = [](const PlanDesc &p, bool input, size_t i, size_t d) {
    const auto &dims = input ? p.padding.argDims : p.padding.resultDims;
    return i < dims.size() && d < dims[i].size() ? dims[i][d] : std::string();
  };
  for (bool input : {true, false}) {
    const std::vector<TensorSpec> &x = input ? t.inputs : t.outputs;
    const std::vector<TensorSpec> &y = input ? first.inputs : first.outputs;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (x[i].name != y[i].name || x[i].dtype != y[i].dtype ||
          x[i].shape.size() != y[i].shape.size())
        return other;
      for (size_t d = 0; d < x[i].shape.size(); ++d) {
        std::string name = markedAs(t, input, i, d);
        if (name.empty())
          name = markedAs(first, input, i, d);
        if (name.empty()) {
          if (x[i].shape[d] != y[i].shape[d])
            return other;
          continue;
        }
        auto at = t.paddedAt.find(name);
        if (at == t.paddedAt.end() || x[i].shape[d] != at->second)
          return "target " + printable(t.arch) + " at its sizes has " +
                 (input ? "input " : "output ") + std::to_string(i) + " of another size";
        if (input && i < parameters.size() && parameters[i])
          return "parameter " + std::to_string(i) + " has a dim that varies";
      }
    }
  }
  for (size_t i = 0; i < t.inputs.size() && i < parameters.size(); ++i)
    if (parameters[i] && i < t.padding.sizeArgs.size() && !t.padding.sizeArgs[i].empty())
      return "input " + std::to_string(i) + " is a size argument and a parameter";
  return "";
}

} // namespace

rt::Expected<std::string> serializeArtifact(const Artifact &a) {
  if (a.targets.empty())
    return rt::errorf("an artifact needs at least one target");
  nlohmann::json targets = nlohmann::json::array();
  std::string blobs;
  // A body two targets share (one architecture's padded compiles) is stored once.
  std::map<std::pair<std::string, std::string>, std::pair<size_t, size_t>> stored;
  for (const ArtifactTarget &t : a.targets) {
    std::vector<std::string> bodies;
    nlohmann::json plan = planToJson(t.plan, bodies);
    if (bodies.size() != t.cubins.size())
      return rt::errorf("target %s: %zu kernel bodies but %zu cubins", t.plan.arch.c_str(),
                        bodies.size(), t.cubins.size());
    nlohmann::json kernels = nlohmann::json::array();
    for (size_t b = 0; b < bodies.size(); ++b) {
      auto [it, fresh] =
          stored.try_emplace({t.plan.arch, bodies[b]}, blobs.size(), t.cubins[b].size());
      if (fresh) {
        blobs += t.cubins[b];
        blobs.append((16 - blobs.size() % 16) % 16, '\0');  // each cubin 16-byte aligned
      }
      kernels.push_back({{"source", bodies[b]}, {"cubinOffset", it->second.first},
                         {"cubinBytes", it->second.second}});
    }
    targets.push_back({{"arch", t.plan.arch}, {"plan", plan}, {"bodies", kernels}});
  }
  nlohmann::json header = {{"producer", a.producer}, {"parameters", a.parameters},
                           {"targets", targets}};
  if (!a.weights.empty()) {
    blobs.append((64 - blobs.size() % 64) % 64, '\0');
    header["weights"] = {{"offset", blobs.size()}, {"bytes", a.weights.size()}};
    blobs += a.weights;
  }
  std::string text = header.dump();
  text.append((16 - (kPreamble + text.size()) % 16) % 16, ' ');
  std::string out(kMagic, sizeof kMagic);
  put(out, Artifact::kFormatVersion, 4);
  put(out, 0, 4);
  put(out, text.size(), 8);
  put(out, blobs.size(), 8);
  std::string body = text + blobs;
  put(out, crc(body.data(), body.size()), 4);
  put(out, 0, 4);
  out += body;
  return std::move(out);
}

rt::Expected<Artifact> parseArtifact(const std::string &bytes, const std::string &path) {
  const std::string where = "artifact '" + printable(path) + "'";
  auto fail = [&](const std::string &why) { return rt::Error::failure(where + ": " + why); };
  if (bytes.size() < kPreamble || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return fail("not a fusec artifact (no FUSECART header)");
  uint64_t version = get(bytes, 8, 4);
  if (version < Artifact::kOldestFormatVersion || version > Artifact::kFormatVersion)
    return fail("format version " + std::to_string(version) + ", but this fusec reads versions " +
                std::to_string(Artifact::kOldestFormatVersion) + " to " +
                std::to_string(Artifact::kFormatVersion) +
                "; compile the graph again with this fusec");
  uint64_t headerBytes = get(bytes, 16, 8), blobBytes = get(bytes, 24, 8);
  uint64_t rest = bytes.size() - kPreamble;
  if (headerBytes > rest || blobBytes != rest - headerBytes)
    return fail("truncated or extended: the header says " +
                std::to_string(kPreamble + headerBytes + blobBytes) + " bytes, the file holds " +
                std::to_string(bytes.size()));
  if (crc(bytes.data() + kPreamble, rest) != uint32_t(get(bytes, 32, 4)))
    return fail("checksum mismatch: the file was altered or damaged");
  std::string text = bytes.substr(kPreamble, headerBytes);
  if (nesting(text) > kMaxDepth)
    return fail("its header nests deeper than " + std::to_string(kMaxDepth) + " levels");
  nlohmann::json header = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object())
    return fail("its header is not a JSON object");
  Artifact a;
  try {
    a.producer = header.at("producer").get<std::string>();
    a.parameters = header.at("parameters").get<std::vector<bool>>();
    const nlohmann::json &targets = header.at("targets");
    if (!targets.is_array() || targets.empty())
      return fail("it holds no target");
    // Bodies may share a cubin (an architecture's padded compiles), each
    // target holding its copy: their total stays within what a file may hold.
    uint64_t cubinBytes = 0;
    for (size_t t = 0; t < targets.size(); ++t) {
      const nlohmann::json &target = targets.at(t);
      std::string arch = target.at("arch").get<std::string>();
      std::string at = where + ", target " + printable(arch);
      std::vector<std::string> sources, cubins;
      for (const nlohmann::json &body : target.at("bodies")) {
        uint64_t offset = jsonInteger<uint64_t>(body.at("cubinOffset"));
        uint64_t n = jsonInteger<uint64_t>(body.at("cubinBytes"));
        if (offset > blobBytes || n > blobBytes - offset || n == 0)
          return fail("target " + printable(arch) + ": a cubin outside the file");
        if ((cubinBytes += n) > kMaxArtifactBytes)
          return fail("its kernels' cubins come to more than " + std::to_string(kMaxArtifactBytes) +
                      " bytes");
        sources.push_back(body.at("source").get<std::string>());
        cubins.push_back(bytes.substr(kPreamble + headerBytes + offset, n));
      }
      auto plan = planFromJson(target.at("plan"), sources, at);
      if (!plan)
        return plan.takeError();
      if (plan->arch != arch)
        return fail("target " + printable(arch) + " holds a plan for " + printable(plan->arch));
      a.targets.push_back({std::move(*plan), std::move(cubins)});
    }
    if (header.contains("weights")) {
      const nlohmann::json &w = header.at("weights");
      uint64_t offset = jsonInteger<uint64_t>(w.at("offset"));
      uint64_t n = jsonInteger<uint64_t>(w.at("bytes"));
      if (offset > blobBytes || n > blobBytes - offset || n == 0)
        return fail("its weights lie outside the file");
      a.weights = bytes.substr(kPreamble + headerBytes + offset, n);
      auto image = parseSafetensorsPrefix(where + ", its weights", a.weights, a.weights.size());
      if (!image)
        return image.takeError();
    }
  } catch (const std::exception &e) {
    return fail("its header: " + jsonWhy(e));
  }
  // Each architecture's padded compiles are of distinct sizes.
  const PlanDesc &first = a.targets.front().plan;
  std::set<std::pair<std::string, SizeMap>> seen;
  for (const ArtifactTarget &t : a.targets) {
    if (std::string why = disagreement(first, t.plan, a.parameters); !why.empty())
      return fail(why);
    if (!seen.insert({t.plan.arch, t.plan.paddedAt}).second)
      return fail("it holds target " + printable(t.plan.arch) + " twice at the same sizes");
  }
  // Each architecture with padded compiles has the one at the bounds (the
  // compile an artifact loads at).
  for (const ArtifactTarget &t : a.targets)
    if (!t.plan.paddedAt.empty() &&
        !seen.count({t.plan.arch, t.plan.sizeBounds}))
      return fail("target " + printable(t.plan.arch) + " has no compile at the bounds");
  if (a.parameters.size() != a.inputs().size())
    return fail("parameter flags for " + std::to_string(a.parameters.size()) + " inputs, but " +
                std::to_string(a.inputs().size()) + " inputs");
  return std::move(a);
}

bool isArtifactPath(const std::string &path) {
  if (path.size() > 6 && path.compare(path.size() - 6, 6, ".fusec") == 0)
    return true;
  char head[sizeof kMagic];
  rt::Error err = readFileInto(path, "artifact", 0, sizeof head, false, 0,
                               [&](uint64_t) { return head; });
  return !err && std::memcmp(head, kMagic, sizeof kMagic) == 0;
}

rt::Expected<Artifact> readArtifact(const std::string &path) {
  auto bytes = readFileBytes(path, "artifact", kMaxArtifactBytes);
  if (!bytes)
    return bytes.takeError();
  return parseArtifact(*bytes, path);
}

std::vector<const ArtifactTarget *> Artifact::targetsOf(const std::string &arch) const {
  std::vector<const ArtifactTarget *> out;
  for (const ArtifactTarget &t : targets)
    if (t.plan.arch == arch)
      out.push_back(&t);
  return out;
}

rt::Expected<const ArtifactTarget *> Artifact::targetFor(const DeviceInfo &device,
                                                          const std::string &path) const {
  const ArtifactTarget *best = nullptr;
  for (const ArtifactTarget &t : targets) {
    if (t.plan.arch == device.nvrtcArch())
      return &t;
    if (device.runs(t.plan.arch) && (!best || t.plan.arch > best->plan.arch))
      best = &t;
  }
  if (best)
    return best;
  std::string held;
  std::set<std::string> archs;
  for (const ArtifactTarget &t : targets)
    if (archs.insert(t.plan.arch).second)
      held += (held.empty() ? "" : ", ") + printable(t.plan.arch);
  return rt::Error::failure("artifact '" + printable(path) + "' holds kernels for " + held +
                            ", none of which device " + std::to_string(device.ordinal) + " (" +
                            printable(device.name) + ", " + device.nvrtcArch() +
                            ") runs: compile it again with --arch " + device.nvrtcArch());
}

} // namespace fusec
