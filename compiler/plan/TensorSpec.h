//===- TensorSpec.h - name, dtype and shape of a graph input or output ----===//
#pragma once

#include "compiler/support/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fusec {

struct TensorSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  int64_t bytes() const { return numel() * dtypeBytes(dtype); }
};

} // namespace fusec
