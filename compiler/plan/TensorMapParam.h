//===- TensorMapParam.h - a TMA tensor map a kernel takes by value --------===//
//
// Hopper kernels read operand tiles with the Tensor Memory Accelerator, which
// needs a tensor map (CUtensorMap, 128 bytes) describing the global tensor.
// It holds the buffer's address, so the runtime encodes it at launch, from
// this description, and passes it by value after the kernel's pointers (and
// scratch): a 2-D row-major view of `rows` x `cols` elements, `rowStrideBytes`
// apart, starting `offsetBytes` into kernel argument `arg`'s buffer, copied
// in boxes of boxRows x boxCols with the 128-byte swizzle, zeros outside.
// With `batches` > 1, a 3-D view: that many such matrices,
// `batchStrideBytes` apart (boxes of one matrix's rows).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace fusec {

struct TensorMapParam {
  int arg = 0;                 ///< index into the kernel's buffer arguments
  int elementBytes = 2;        ///< 2: bf16 or f16 (see `bf16`)
  bool bf16 = true;            ///< element type for the map (else f16)
  uint64_t rows = 0, cols = 0;
  uint64_t rowStrideBytes = 0, offsetBytes = 0;
  uint32_t boxRows = 0, boxCols = 0;
  uint64_t batches = 1, batchStrideBytes = 0;
};

} // namespace fusec
