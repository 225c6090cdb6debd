//===- TensorSpec.h - name, dtype and shape of a graph input or output ----===//
// The struct is public (include/fusec/Tensor.h).
#pragma once

#include "fusec/Tensor.h"
