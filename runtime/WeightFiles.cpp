//===- WeightFiles.cpp - where a graph's parameters are -------------------===//
#include "runtime/WeightFiles.h"

#include "compiler/support/Printable.h"

#include <algorithm>
#include <cstring>

namespace fusec {

rt::Expected<WeightFiles> WeightFiles::open(const std::vector<std::string> &paths) {
  WeightFiles w;
  for (const std::string &path : paths) {
    auto file = InputFile::open(path, "weights file");
    if (!file)
      return file.takeError();
    auto header = readSafetensorsHeader(*file);
    if (!header)
      return header.takeError();
    w.sources.push_back({path, std::move(*file), {}});
    if (rt::Error err = w.add(w.sources.size() - 1, std::move(*header)))
      return std::move(err);
  }
  return std::move(w);
}

rt::Expected<WeightFiles> WeightFiles::inMemory(const std::string &name, std::string_view bytes) {
  auto header = parseSafetensorsPrefix(name, bytes, bytes.size());
  if (!header)
    return header.takeError();
  WeightFiles w;
  w.sources.push_back({name, std::nullopt, bytes});
  if (rt::Error err = w.add(0, std::move(*header)))
    return std::move(err);
  return std::move(w);
}

rt::Error WeightFiles::add(size_t source, SafetensorsHeader header) {
  for (SafetensorsEntry &e : header.entries) {
    e.begin += header.dataStart;
    e.end += header.dataStart;
    auto [it, added] = tensors.emplace(e.name, Tensor{source, e});
    if (!added)
      return rt::Error::failure(printable(sources[source].name) + ": weight '" +
                                printable(e.name) + "' is also in " +
                                printable(sources[it->second.source].name));
  }
  return rt::Error::success();
}

std::string WeightFiles::sourceNames() const {
  std::string s;
  for (const Source &src : sources)
    s += (s.empty() ? "" : ", ") + printable(src.name);
  return s;
}

rt::Expected<std::vector<std::optional<WeightRef>>>
WeightFiles::bind(const std::vector<TensorSpec> &inputs, const std::vector<bool> &parameters,
                  const RankBlocks *blocks) const {
  std::vector<std::optional<WeightRef>> out(inputs.size());
  size_t used = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i >= parameters.size() || !parameters[i])
      continue;
    const TensorSpec &spec = inputs[i];
    // The tensor the files hold: the whole of a split parameter.
    const int64_t axis = blocks && i < blocks->shards.size() ? blocks->shards[i] : -1;
    std::vector<int64_t> whole = spec.shape;
    std::string split;
    if (axis >= 0) {
      if (axis >= int64_t(whole.size()) || blocks->ranks < 1 || blocks->rank < 0 ||
          blocks->rank >= blocks->ranks)
        return rt::errorf("internal error: parameter '%s' split along dim %lld of %zu, rank %d "
                          "of %d", printable(spec.name).c_str(), (long long)axis, whole.size(),
                          blocks->rank, blocks->ranks);
      whole[size_t(axis)] *= blocks->ranks;
      split = " (split along dim " + std::to_string(axis) + " into " +
              std::to_string(blocks->ranks) + " blocks of " +
              describeTensor(spec.dtype, spec.shape) + ")";
    }
    auto it = tensors.find(spec.name);
    if (it == tensors.end())
      return rt::Error::failure("missing weight for parameter '" + printable(spec.name) + "' (" +
                                describeTensor(spec.dtype, whole) + ") in " + sourceNames());
    const SafetensorsEntry &e = it->second.entry;
    if (e.dtype != spec.dtype || e.shape != whole)
      return rt::Error::failure(printable(sources[it->second.source].name) + ": tensor '" +
                                printable(spec.name) + "' is " +
                                describeTensor(e.dtype, e.shape) + " but the parameter is " +
                                describeTensor(spec.dtype, whole) + split);
    WeightRef ref{it->second.source, e.begin, e.end - e.begin, e.end - e.begin,
                  e.end - e.begin};
    if (axis >= 0) {
      // One run a row of the dims before the split one: this rank's slice
      // of that dim and everything after it.
      const uint64_t rows = uint64_t(elementsBefore(whole, axis));
      ref.stride = rows ? ref.bytes / rows : 0;
      ref.rowBytes = ref.stride / uint64_t(blocks->ranks);
      ref.offset += uint64_t(blocks->rank) * ref.rowBytes;
      ref.bytes = rows * ref.rowBytes;
    }
    out[i] = ref;
    ++used;
  }
  if (used != tensors.size())
    for (const auto &[name, t] : tensors) {
      bool isParameter = false;
      for (size_t i = 0; i < inputs.size() && !isParameter; ++i)
        isParameter = i < parameters.size() && parameters[i] && inputs[i].name == name;
      if (!isParameter)
        return rt::Error::failure(printable(sources[t.source].name) + ": weight '" +
                                  printable(name) + "' is not a parameter of the graph");
    }
  return std::move(out);
}

rt::Error WeightFiles::read(const WeightRef &w, uint64_t offset, uint64_t length,
                            char *out) const {
  if (offset > w.bytes || length > w.bytes - offset)
    return rt::errorf("internal error: a read past the end of a weight");
  const Source &src = sources[w.source];
  // Run by run: the part of each that [offset, offset + length) covers (a
  // ref without runs is one run of its bytes; length > 0 means bytes > 0).
  const uint64_t run = w.rowBytes ? w.rowBytes : w.bytes;
  const uint64_t stride = w.rowBytes ? w.stride : w.bytes;
  while (length > 0) {
    const uint64_t row = offset / run;
    const uint64_t within = offset - row * run;
    const uint64_t n = std::min(length, run - within);
    const uint64_t at = w.offset + row * stride + within;
    if (src.file) {
      if (rt::Error err = src.file->read(at, n, out))
        return err;
    } else {
      std::memcpy(out, src.memory.data() + at, n);
    }
    out += n;
    offset += n;
    length -= n;
  }
  return rt::Error::success();
}

} // namespace fusec
