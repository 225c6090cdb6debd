//===- PlanPadding.cpp - how a plan compiled at padded sizes is called ----===//
#include "compiler/plan/PlanPadding.h"

#include "compiler/support/Printable.h"

#include <algorithm>
#include <cstring>

namespace fusec {

namespace {

rt::Error fail(const std::string &message) { return rt::Error::failure(message); }

/// Copies the box [0, shape of `small`) between `small` and `big` (same
/// dtype and rank, `big` at least as large in every dim), one innermost run
/// at a time: into `big` where `intoBig`, else out of it.
void copyBox(HostTensor &small, HostTensor &big, bool intoBig) {
  const std::vector<int64_t> &s = small.shape(), &b = big.shape();
  const int64_t rank = s.size(), elt = dtypeBytes(small.dtype());
  if (small.numel() == 0)
    return;
  if (rank == 0) {
    std::memcpy(intoBig ? big.data() : small.data(), intoBig ? small.data() : big.data(), elt);
    return;
  }
  const int64_t run = s.back() * elt;
  std::vector<int64_t> idx(rank, 0);
  for (int64_t r = 0, runs = small.numel() / s.back(); r < runs; ++r) {
    int64_t so = 0, bo = 0;
    for (int64_t d = 0; d < rank; ++d) {
      so = so * s[d] + idx[d];
      bo = bo * b[d] + idx[d];
    }
    uint8_t *sp = small.data() + so * elt, *bp = big.data() + bo * elt;
    std::memcpy(intoBig ? bp : sp, intoBig ? sp : bp, run);
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++idx[d] < s[d])
        break;
      idx[d] = 0;
    }
  }
}

} // namespace

int64_t paddedSize(int64_t size, int64_t bound) {
  int64_t p = 1;
  while (p < size)
    p = p < 2 ? 2 : (p & (p - 1)) == 0 ? p + p / 2 : p / 3 * 4;  // 2^k -> 3 2^(k-1) -> 2^(k+1)
  return std::min(p, bound);
}

std::vector<int64_t> paddedSizesUpTo(int64_t bound) {
  std::vector<int64_t> out;
  for (int64_t s = 1; s <= bound; s = paddedSize(s, bound) + 1) {
    out.push_back(paddedSize(s, bound));
    if (out.back() == bound)
      break;
  }
  return out;
}

bool PaddedSignature::padded() const {
  auto any = [](const std::vector<std::string> &names) {
    for (const std::string &s : names)
      if (!s.empty())
        return true;
    return false;
  };
  if (any(sizeArgs))
    return true;
  for (const auto &dims : argDims)
    if (any(dims))
      return true;
  for (const auto &dims : resultDims)
    if (any(dims))
      return true;
  return false;
}

std::vector<int64_t> shapeAtSizes(const std::vector<int64_t> &padded,
                                  const std::vector<std::string> &dims, const SizeMap &sizes) {
  std::vector<int64_t> out = padded;
  for (size_t d = 0; d < dims.size() && d < out.size(); ++d)
    if (!dims[d].empty())
      if (auto it = sizes.find(dims[d]); it != sizes.end())
        out[d] = it->second;
  return out;
}

rt::Expected<std::vector<HostTensor>> padInputs(const PaddedSignature &sig,
                                                const std::vector<HostTensor> &inputs,
                                                const SizeMap &sizes,
                                                const std::vector<bool> &skip) {
  std::vector<HostTensor> out;
  size_t next = 0;
  for (size_t i = 0; i < sig.sizeArgs.size(); ++i) {
    if (i < skip.size() && skip[i])
      continue;
    if (!sig.sizeArgs[i].empty()) {
      auto it = sizes.find(sig.sizeArgs[i]);
      if (it == sizes.end())
        return fail("no size given for '" + printable(sig.sizeArgs[i]) + "'");
      HostTensor s(DType::I32, {});
      s.setInt(0, it->second);
      out.push_back(std::move(s));
      continue;
    }
    if (next >= inputs.size())
      return fail("expected " + std::to_string(next + 1) + " or more inputs, got " +
                  std::to_string(inputs.size()));
    HostTensor in = inputs[next++];
    std::vector<int64_t> want = shapeAtSizes(sig.argShapes[i], sig.argDims[i], sizes);
    if (in.shape() != want)
      return fail("input " + std::to_string(next - 1) + " is " + formatShape(in.shape()) +
                  ", expected " + formatShape(want));
    for (size_t d = 0; d < want.size(); ++d)
      if (want[d] > sig.argShapes[i][d])
        return fail("input " + std::to_string(next - 1) + " dim " + std::to_string(d) + " is " +
                    std::to_string(want[d]) + ", past the " +
                    std::to_string(sig.argShapes[i][d]) + " it was compiled for");
    HostTensor big(in.dtype(), sig.argShapes[i]);
    copyBox(in, big, /*intoBig=*/true);
    out.push_back(std::move(big));
  }
  if (next != inputs.size())
    return fail("expected " + std::to_string(next) + " inputs, got " +
                std::to_string(inputs.size()));
  return out;
}

std::vector<HostTensor> cropOutputs(const PaddedSignature &sig,
                                    const std::vector<HostTensor> &outputs, const SizeMap &sizes) {
  std::vector<HostTensor> out;
  for (size_t i = 0; i < outputs.size(); ++i) {
    HostTensor big = outputs[i];
    std::vector<int64_t> want =
        i < sig.resultDims.size() ? shapeAtSizes(big.shape(), sig.resultDims[i], sizes) : big.shape();
    if (want == big.shape()) {
      out.push_back(std::move(big));
      continue;
    }
    HostTensor small(big.dtype(), want);
    copyBox(small, big, /*intoBig=*/false);
    out.push_back(std::move(small));
  }
  return out;
}

PaddedCallSpecs paddedCallSpecs(const PaddedSignature &sig, const std::vector<TensorSpec> &inputs,
                                const std::vector<TensorSpec> &outputs, const SizeMap &sizes) {
  PaddedCallSpecs call;
  call.sizes = sizes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i < sig.sizeArgs.size() && !sig.sizeArgs[i].empty())
      continue;
    TensorSpec t = inputs[i];
    if (i < sig.argDims.size())
      t.shape = shapeAtSizes(t.shape, sig.argDims[i], sizes);
    call.inputs.push_back(std::move(t));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    TensorSpec t = outputs[i];
    if (i < sig.resultDims.size())
      t.shape = shapeAtSizes(t.shape, sig.resultDims[i], sizes);
    call.outputs.push_back(std::move(t));
  }
  return call;
}

} // namespace fusec
