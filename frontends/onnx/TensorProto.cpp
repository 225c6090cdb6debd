//===- TensorProto.cpp - values of ONNX tensors, as the importer reads them -===//
#include "frontends/onnx/TensorProto.h"
#include "compiler/support/ReadFile.h"

#include "compiler/support/DType.h"
#include "compiler/support/Float16.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstring>

namespace fusec::onnx_import {
namespace {

llvm::Error weightError(llvm::StringRef file, const std::string &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s", file.str().c_str(),
                                 what.c_str());
}

} // namespace

std::optional<std::string> dtypeName(int onnxType) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT: return "f32";
  case onnx::TensorProto::FLOAT16: return "f16";
  case onnx::TensorProto::BFLOAT16: return "bf16";
  case onnx::TensorProto::INT32: return "i32";
  case onnx::TensorProto::INT64: return "i64";
  case onnx::TensorProto::BOOL: return "bool";
  default: return std::nullopt;
  }
}

/// The tensor's element count; -1 for negative or overflowing dims (a
/// damaged or hostile file), which no conversion reads as a value.
int64_t elementCount(const onnx::TensorProto &t) {
  int64_t n = 1;
  for (int64_t d : t.dims())
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      return -1;
  return n;
}

/// Element `i` of a tensor as a double (from raw_data or its typed field).
std::optional<double> elementAt(const onnx::TensorProto &t, int64_t i) {
  const std::string &raw = t.raw_data();
  auto rawAt = [&](auto zero) -> std::optional<decltype(zero)> {
    decltype(zero) v;
    if (raw.size() < static_cast<size_t>(i + 1) * sizeof v)
      return std::nullopt;
    std::memcpy(&v, raw.data() + i * sizeof v, sizeof v);
    return v;
  };
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT:
    if (!raw.empty())
      return rawAt(0.0f);
    return i < t.float_data_size() ? std::optional<double>(t.float_data(i)) : std::nullopt;
  case onnx::TensorProto::DOUBLE:
    if (!raw.empty())
      return rawAt(0.0);
    return i < t.double_data_size() ? std::optional<double>(t.double_data(i)) : std::nullopt;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16: {
    std::optional<uint16_t> bits;
    if (!raw.empty())
      bits = rawAt(uint16_t(0));
    else if (i < t.int32_data_size())
      bits = static_cast<uint16_t>(t.int32_data(i));
    if (!bits)
      return std::nullopt;
    return t.data_type() == onnx::TensorProto::FLOAT16 ? halfToFloat(*bits) : bf16ToFloat(*bits);
  }
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::BOOL:
    if (!raw.empty()) {
      std::optional<double> v;
      if (t.data_type() == onnx::TensorProto::BOOL) {
        if (auto b = rawAt(uint8_t(0)))
          v = *b;
      } else if (auto x = rawAt(int32_t(0))) {
        v = *x;
      }
      return v;
    }
    return i < t.int32_data_size() ? std::optional<double>(t.int32_data(i)) : std::nullopt;
  case onnx::TensorProto::INT64:
    if (!raw.empty())
      return rawAt(int64_t(0)) ? std::optional<double>(*rawAt(int64_t(0))) : std::nullopt;
    return i < t.int64_data_size() ? std::optional<double>(t.int64_data(i)) : std::nullopt;
  default:
    return std::nullopt;
  }
}

/// A tensor the importer computes with (KnownValues.h): an integer or bool
/// tensor small enough to fold, or any one-element tensor. Float weights are
/// not: the graph reads them.
std::optional<Known> knownOf(const onnx::TensorProto &t, const std::string &dtype) {
  const int64_t n = elementCount(t);
  const bool integral = dtype == "i64" || dtype == "i32" || dtype == "bool";
  if (n < 0 || (n != 1 && (!integral || n > onnx_import::kMaxFoldedElements)))
    return std::nullopt;
  Known k;
  k.shape.assign(t.dims().begin(), t.dims().end());
  k.dtype = dtype;
  for (int64_t i = 0; i < n; ++i) {
    std::optional<double> v = elementAt(t, i);
    if (!v)
      return std::nullopt;
    k.values.push_back(*v);
  }
  if (k.values.empty())
    k.values = {0};  // no elements: any fill
  return k;
}

llvm::Expected<HostTensor> initializerValues(const onnx::TensorProto &t, llvm::StringRef modelPath) {
  const std::string what = "initializer '" + t.name() + "'";
  std::optional<std::string> name = dtypeName(t.data_type());
  std::optional<DType> dt = name ? parseDType(*name) : std::nullopt;
  const int64_t n = elementCount(t);
  if (!dt || n < 0)
    return weightError(modelPath, what + " has an element type or dims fusec cannot hold");
  HostTensor out(*dt, std::vector<int64_t>(t.dims().begin(), t.dims().end()));
  const uint64_t bytes = static_cast<uint64_t>(out.nbytes());
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    uint64_t offset = 0, length = bytes;
    for (const auto &kv : t.external_data()) {
      unsigned long long v = 0;
      if (kv.key() == "location")
        location = kv.value();
      else if ((kv.key() == "offset" || kv.key() == "length") &&
               llvm::getAsUnsignedInteger(kv.value(), 10, v))
        return weightError(modelPath, what + ": external data " + kv.key() + " '" + kv.value() +
                                          "' is not a number");
      else if (kv.key() == "offset")
        offset = v;
      else if (kv.key() == "length")
        length = v;
    }
    llvm::SmallString<256> file(llvm::sys::path::parent_path(modelPath));
    if (location.empty() || llvm::sys::path::is_absolute(location) ||
        llvm::any_of(llvm::make_range(llvm::sys::path::begin(location), llvm::sys::path::end(location)),
                     [](llvm::StringRef c) { return c == ".."; }))
      return weightError(modelPath, what + ": external data location '" + location +
                                        "' is not a file inside the model's folder");
    llvm::sys::path::append(file, location);
    if (length != bytes)
      return weightError(modelPath, what + ": external data holds " + std::to_string(length) +
                                        " bytes, its dims and dtype " + std::to_string(bytes));
    auto slice = readFileSlice(file, "external data", offset, length);
    if (!slice)
      return weightError(modelPath, what + ": " + llvm::toString(slice.takeError()));
    if (bytes > 0)
      std::memcpy(out.data(), (*slice)->getBufferStart(), bytes);
    return out;
  }
  if (!t.raw_data().empty()) {
    if (t.raw_data().size() != bytes)
      return weightError(modelPath, what + " holds " + std::to_string(t.raw_data().size()) +
                                        " bytes, its dims and dtype " + std::to_string(bytes));
    std::memcpy(out.data(), t.raw_data().data(), bytes);
    return out;
  }
  for (int64_t i = 0; i < n; ++i) {
    std::optional<double> v = elementAt(t, i);
    if (!v)
      return weightError(modelPath, what + " holds fewer values than its dims");
    if (*dt == DType::I64)  // exact beyond 2^53
      out.setInt(i, t.int64_data(static_cast<int>(i)));
    else
      out.set(i, *v);
  }
  return out;
}

} // namespace fusec::onnx_import
