//===- WeightFiles.h - where a graph's parameters are, in safetensors files ===//
//
// A graph's parameters (weights) are bound by name from one or more
// safetensors files (a model's shards) or from an image of one embedded in
// an artifact. Only the headers are read here: each parameter is matched to
// its tensor (dtype and shape checked), and its bytes stay in the file until
// they are copied where they go (DeviceWeights: the GPU, once; the CLI: host
// tensors for the reference interpreter). The rules, in one place: every
// parameter found once, with the graph's dtype and shape; a tensor in two
// files, or one that is no parameter of the graph, is an error.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/support/ReadBytes.h"
#include "compiler/support/HostTensor.h"
#include "runtime/SafetensorsHeader.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fusec {

/// Where one tensor's bytes are: runs of `rowBytes`, `stride` apart from
/// `offset`, `bytes` in all (one run where the file holds the tensor itself;
/// a rank's block of a split weight is a run a row of the dims before its
/// split dim).
struct WeightRef {
  size_t source = 0;    ///< which file (WeightFiles::sourceName)
  uint64_t offset = 0;  ///< from the file's start
  uint64_t bytes = 0;
  uint64_t rowBytes = 0, stride = 0;
};

/// A program split over ranks binds each rank's blocks of the weights the
/// files hold whole: input i is split along `shards[i]` (none where < 0 or
/// past the end), and this is rank `rank` of `ranks`.
struct RankBlocks {
  std::vector<int64_t> shards;
  int rank = 0, ranks = 1;
};

class WeightFiles {
public:
  /// Opens each file and reads its header (not its data). Fails for a file
  /// that cannot be read or is no safetensors file, and for a tensor name
  /// found in two of them.
  static rt::Expected<WeightFiles> open(const std::vector<std::string> &paths);
  /// A safetensors image in memory (an artifact's embedded weights), named
  /// `name` in messages; `bytes` must outlive the WeightFiles.
  static rt::Expected<WeightFiles> inMemory(const std::string &name, std::string_view bytes);

  /// For each graph input, where its tensor is: nothing for an input that
  /// is not a parameter (`parameters[i]` false). Every parameter must be
  /// found with the input's dtype and shape, and every tensor must be a
  /// parameter.
  /// With `blocks`, `inputs` are one rank's (a split program's plan): a
  /// parameter split along a dim is found whole in the files (that dim
  /// `ranks` times the input's) and bound to the rank's block of it.
  rt::Expected<std::vector<std::optional<WeightRef>>>
  bind(const std::vector<TensorSpec> &inputs, const std::vector<bool> &parameters,
       const RankBlocks *blocks = nullptr) const;

  /// Reads `length` bytes of `w` from `offset` (within the tensor) into `out`.
  rt::Error read(const WeightRef &w, uint64_t offset, uint64_t length, char *out) const;
  /// The file's path (or the embedded image's name).
  const std::string &sourceName(size_t i) const { return sources[i].name; }
  /// Every source's name, "a.safetensors, b.safetensors".
  std::string sourceNames() const;
  /// How many tensors the files hold.
  size_t size() const { return tensors.size(); }

private:
  struct Source {
    std::string name;
    std::optional<InputFile> file;  ///< empty for an image in memory
    std::string_view memory;
  };
  struct Tensor {
    size_t source;
    SafetensorsEntry entry;  ///< begin and end from the file's start
  };
  rt::Error add(size_t source, SafetensorsHeader header);

  std::vector<Source> sources;
  std::map<std::string, Tensor> tensors;  ///< by name (messages name the first in order)
};

} // namespace fusec
