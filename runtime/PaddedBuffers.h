//===- PaddedBuffers.h - a call's tensors in a padded program's buffers ----===//
//
// A program compiled at padded sizes (compiler/pipeline/PaddedGraph.h) reads
// inputs and writes outputs of the padded shapes. A call made at smaller
// sizes passes tensors of its own shapes: each input is copied into a
// zeroed buffer of the padded shape, each size the program takes is written
// to a buffer of its own, and each output is cut back from its padded
// buffer, all on the call's stream. The buffers are the program's, kept
// from call to call (a CUDA graph captured over them stays valid).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/plan/TensorSpec.h"
#include "compiler/support/Error.h"
#include "runtime/CudaDriver.h"

#include <vector>

namespace fusec {

class PaddedBuffers {
public:
  explicit PaddedBuffers(CudaDriver &drv) : drv(drv) {}
  ~PaddedBuffers();
  PaddedBuffers(const PaddedBuffers &) = delete;
  PaddedBuffers &operator=(const PaddedBuffers &) = delete;

  /// The buffer of input `i` (padded shape `spec`), allocated on first use.
  rt::Expected<CUdeviceptr> input(size_t i, const TensorSpec &spec);
  rt::Expected<CUdeviceptr> output(size_t i, const TensorSpec &spec);

  /// Copies a tensor of `shape` at `from` into `to` of `padded` (same rank,
  /// at most one dim larger), zeroing the rest of `to` first.
  rt::Error pad(CUdeviceptr from, const std::vector<int64_t> &shape, CUdeviceptr to,
                const std::vector<int64_t> &padded, int64_t elementBytes, CUstream stream);
  /// Copies the part of shape `shape` of `from` (of `padded`) to `to`.
  rt::Error crop(CUdeviceptr from, const std::vector<int64_t> &padded, CUdeviceptr to,
                 const std::vector<int64_t> &shape, int64_t elementBytes, CUstream stream);
  /// Writes `value` to the i32 buffer `to`.
  rt::Error setSize(CUdeviceptr to, int32_t value, CUstream stream);

private:
  rt::Expected<CUdeviceptr> buffer(std::vector<CUdeviceptr> &list, size_t i, int64_t bytes);
  rt::Error copyBox(CUdeviceptr from, const std::vector<int64_t> &fromShape, CUdeviceptr to,
                    const std::vector<int64_t> &toShape, int64_t elementBytes, CUstream stream);

  CudaDriver &drv;
  std::vector<CUdeviceptr> inputs, outputs;
};

} // namespace fusec
