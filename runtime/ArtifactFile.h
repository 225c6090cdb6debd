//===- ArtifactFile.h - a compiled graph in one file ----------------------===//
//
// What `fusec compile -o model.fusec` writes and the runtime loads without
// the compiler: one plan per target architecture (the kernels differ by
// target), or where sizes vary (`--max`) one per architecture and padded
// size; each kernel body's source and cubin (a body stored once per
// architecture); which graph inputs are parameters; and on request the
// weights themselves (a safetensors image; else they stay in their files and
// are bound at load). Layout
// (docs/artifact.md):
//
//   "FUSECART"  u32 format version  u32 zero  u64 header bytes  u64 blob bytes
//   u32 CRC-32 of header and blobs  u32 zero  header (JSON)  blobs (cubins,
//   then the weights' image where embedded, 64-byte aligned)
//
// Reading checks the magic, the version, the sizes against the file's, the
// checksum and then every field of the plans (compiler/plan/PlanJson.h); each
// failure names the file and what is wrong. An artifact holds machine code:
// load only artifacts you trust, as you would a shared library.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/plan/PlanDesc.h"
#include "compiler/support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fusec {

struct DeviceInfo;

/// One target's plan and its kernels.
struct ArtifactTarget {
  PlanDesc plan;
  /// Cubin per distinct kernel body (kernelBodies(plan).firstStep order).
  std::vector<std::string> cubins;
};

struct Artifact {
  /// 2: embedded weights. 3: plans compiled at padded sizes (several targets
  /// of one architecture, each at its sizes; PlanDesc::paddedAt).
  static constexpr uint32_t kFormatVersion = 3;
  static constexpr uint32_t kOldestFormatVersion = 2;
  std::string producer;            ///< "fusec 0.1.0"
  std::vector<bool> parameters;    ///< per graph input: bound from weights
  std::vector<ArtifactTarget> targets;
  /// The parameters as a safetensors file's bytes, where embedded; empty
  /// where they stay in files of their own.
  std::string weights;

  /// The graph's inputs and outputs (every target's are the same, but for
  /// the dims that vary, which are the first target's padded sizes).
  const std::vector<TensorSpec> &inputs() const { return targets.front().plan.inputs; }
  const std::vector<TensorSpec> &outputs() const { return targets.front().plan.outputs; }

  /// The target whose kernels `device` runs: an exact architecture first
  /// ("sm_90a" on an H100), else the newest compatible one ("sm_80" on an
  /// sm_86 GPU). The error lists what the file holds.
  rt::Expected<const ArtifactTarget *> targetFor(const DeviceInfo &device,
                                                  const std::string &path) const;
  /// Every target of `arch`: one, or one per padded size compiled.
  std::vector<const ArtifactTarget *> targetsOf(const std::string &arch) const;
  /// Whether its dims vary (`fusec compile --max`): resize() picks among
  /// the padded compiles.
  bool sizesVary() const { return !targets.front().plan.paddedAt.empty(); }
};

/// The file's bytes for `artifact`.
rt::Expected<std::string> serializeArtifact(const Artifact &artifact);
/// Parses and checks the bytes of an artifact file (`path` for messages).
rt::Expected<Artifact> parseArtifact(const std::string &bytes, const std::string &path);
/// Whether `path` names a file that starts as an artifact does ("FUSECART"),
/// or ends in ".fusec": commands that take graphs take artifacts too.
bool isArtifactPath(const std::string &path);
/// Reads (bounded: kMaxArtifactBytes) and parses the file at `path`.
rt::Expected<Artifact> readArtifact(const std::string &path);
constexpr uint64_t kMaxArtifactBytes = uint64_t(4) << 30;

} // namespace fusec
