//===- TensorProto.h - values of ONNX tensors, as the importer reads them -===//
//
// The ONNX reader's view of a TensorProto: its element type in fusec's
// names, its element count, one element as a double, the small values it
// computes with at import (KnownValues.h), and a weight's values as a host
// tensor (from its raw bytes, its typed fields or an external data file).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/support/HostTensor.h"
#include "frontends/onnx/KnownValues.h"

#include "llvm/Support/Error.h"

#include <onnx.pb.h>

#include <cstdint>
#include <optional>
#include <string>

namespace fusec::onnx_import {

/// fusec's name of an ONNX element type (f32, f16, bf16, i32, i64, bool);
/// nullopt for the others.
std::optional<std::string> dtypeName(int onnxType);

/// The tensor's element count; -1 for negative or overflowing dims (a
/// damaged or hostile file), which no conversion reads as a value.
int64_t elementCount(const onnx::TensorProto &t);

/// Element `i` of a tensor as a double (from raw_data or its typed field).
std::optional<double> elementAt(const onnx::TensorProto &t, int64_t i);

/// A tensor the importer computes with: an integer or bool tensor small
/// enough to fold, or any one-element tensor. Float weights are not: the
/// graph reads them.
std::optional<Known> knownOf(const onnx::TensorProto &t, const std::string &dtype);

/// Initializer `t`'s values as a host tensor: from its raw bytes, its typed
/// fields, or the external data file it names (a path relative to the
/// model at `modelPath`, inside its folder).
llvm::Expected<HostTensor> initializerValues(const onnx::TensorProto &t, llvm::StringRef modelPath);

} // namespace fusec::onnx_import
