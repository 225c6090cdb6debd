//===- OpShape.h - result shapes of the fusec ops the ONNX reader emits ---===//
//
// The ONNX reader tracks the shape of each value it converts, so that
// Unsqueeze, Squeeze and Flatten become reshapes to a known shape. The rules
// are the JSON reader's (compiler/shape/ShapeRules.h); the JSON reader
// checks every shape again when it imports the converted graph.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/shape/ShapeRules.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace fusec {

/// The result shape of fusec op `op` (graph-format name) with operands of
/// shapes `in` and attributes `attrs`, or nullopt where the op is not one
/// the reader tracks or the rules refuse it.
std::optional<shape::Shape> opShape(const std::string &op, const std::vector<shape::Shape> &in,
                                    const nlohmann::json &attrs);

} // namespace fusec
