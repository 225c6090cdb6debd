//===- LayoutEval.cpp - reshape, transpose, broadcast_to, slice, concat ---===//
//
// Layout ops move bytes without converting them. Transpose, broadcast_to and
// slice are one strided gather each, differing only in the strides (and the
// base offset) they read the input with; swapping the last two dims, as
// linear's weight transpose does, takes a cache-tiled path instead.
//
//===----------------------------------------------------------------------===//
#include "compiler/interp/EvalSupport.h"

#include "compiler/dialect/FusecDialect.h"

using namespace mlir;

namespace fusec::interp {
namespace {

/// An element as an opaque word of its byte width (made of bytes, so it may
/// alias the tensor's byte storage).
template <size_t Bytes> struct Word {
  uint8_t bytes[Bytes];
};

/// out[i] = in[base + sum_d index_d * strides[d]] over out's shape.
template <typename W>
void gatherWords(const HostTensor &in, HostTensor &out, const Shape &strides, int64_t base) {
  const uint8_t *src = in.data();
  uint8_t *dst = out.data();
  std::array<const int64_t *, 1> stridePtrs{strides.data()};
  parallelFor(out.numel(), kElementGrain, [&](int64_t begin, int64_t end) {
    forEachStrided<1>(out.shape(), stridePtrs, {base}, begin, end,
                      [&](int64_t i, const std::array<int64_t, 1> &o) {
                        std::memcpy(dst + i * sizeof(W), src + o[0] * sizeof(W), sizeof(W));
                      });
  });
}

void gather(const HostTensor &in, HostTensor &out, const Shape &strides, int64_t base = 0) {
  switch (dtypeBytes(in.dtype())) {
  case 1: return gatherWords<Word<1>>(in, out, strides, base);
  case 2: return gatherWords<Word<2>>(in, out, strides, base);
  case 4: return gatherWords<Word<4>>(in, out, strides, base);
  default: return gatherWords<Word<8>>(in, out, strides, base);
  }
}

/// Whether `perm` swaps the last two dims and keeps the others in place.
bool swapsLastTwo(llvm::ArrayRef<int64_t> perm) {
  size_t r = perm.size();
  if (r < 2 || perm[r - 2] != static_cast<int64_t>(r - 1) ||
      perm[r - 1] != static_cast<int64_t>(r - 2))
    return false;
  for (size_t d = 0; d + 2 < r; ++d)
    if (perm[d] != static_cast<int64_t>(d))
      return false;
  return true;
}

/// Batched matrix transpose in cache tiles: column reads of a large matrix
/// one element at a time would miss the cache on every element.
template <typename W> void transposeBatches(const HostTensor &in, HostTensor &out) {
  const Shape &s = in.shape();
  int64_t rows = s[s.size() - 2], cols = s[s.size() - 1];
  int64_t batches = rows * cols == 0 ? 0 : in.numel() / (rows * cols);
  const W *src = reinterpret_cast<const W *>(in.data());
  W *dst = reinterpret_cast<W *>(out.data());
  // Parallel over bands of 64 input columns, so one large matrix also uses
  // every thread; a band writes 64 output rows, few enough pages for the TLB.
  constexpr int64_t kBand = 64;
  int64_t bands = (cols + kBand - 1) / kBand;
  parallelFor(batches * bands, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      int64_t b = t / bands, c0 = (t % bands) * kBand;
      int64_t n = std::min(kBand, cols - c0);
      transposeMatrix(rows, n, src + b * rows * cols + c0, cols,
                      dst + b * rows * cols + c0 * rows, rows);
    }
  });
}

void evalTranspose(TransposeOp op, const HostTensor &in, HostTensor &out) {
  llvm::ArrayRef<int64_t> perm = op.getPerm();
  if (swapsLastTwo(perm)) {
    switch (dtypeBytes(in.dtype())) {
    case 1: return transposeBatches<Word<1>>(in, out);
    case 2: return transposeBatches<Word<2>>(in, out);
    case 4: return transposeBatches<Word<4>>(in, out);
    default: return transposeBatches<Word<8>>(in, out);
    }
  }
  Shape inStrides = rowMajorStrides(in.shape());
  Shape strides(perm.size());
  for (size_t d = 0; d < perm.size(); ++d)
    strides[d] = inStrides[perm[d]];
  gather(in, out, strides);
}

void evalSlice(SliceOp op, const HostTensor &in, HostTensor &out) {
  Shape inStrides = rowMajorStrides(in.shape());
  Shape strides(inStrides.size());
  int64_t base = 0;
  for (size_t d = 0; d < inStrides.size(); ++d) {
    base += op.getStarts()[d] * inStrides[d];
    strides[d] = op.getSteps()[d] * inStrides[d];
  }
  gather(in, out, strides, base);
}

/// Each input contributes one contiguous chunk per index of the dims before
/// `axis`; chunks of successive inputs sit side by side in the result.
void evalConcat(ConcatOp op, Operands in, HostTensor &out) {
  int64_t axis = op.getAxis();
  int64_t elem = dtypeBytes(out.dtype());
  int64_t outer = numElements(llvm::ArrayRef<int64_t>(out.shape()).take_front(axis));
  int64_t outChunk = numElements(llvm::ArrayRef<int64_t>(out.shape()).drop_front(axis)) * elem;
  int64_t offset = 0;
  for (const HostTensor *t : in) {
    int64_t chunk = numElements(llvm::ArrayRef<int64_t>(t->shape()).drop_front(axis)) * elem;
    if (chunk == 0)
      continue;  // an empty input has no data to copy (memcpy from null is undefined)
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(out.data() + o * outChunk + offset, t->data() + o * chunk, chunk);
    offset += chunk;
  }
}

/// Rows of `data` along `axis` chosen by `indices` (negative from the end,
/// then clamped to the dim), copied whole: outer x indices x inner chunks.
void evalGather(GatherOp op, const HostTensor &data, const HostTensor &indices, HostTensor &out) {
  int64_t axis = op.getAxis();
  int64_t elem = dtypeBytes(out.dtype());
  llvm::ArrayRef<int64_t> ds(data.shape());
  int64_t n = ds[size_t(axis)];
  int64_t outer = numElements(ds.take_front(axis));
  int64_t chunk = numElements(ds.drop_front(axis + 1)) * elem;
  int64_t count = indices.numel();
  if (chunk == 0)
    return;  // rows of no elements: nothing to copy
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < count; ++k) {
      int64_t i = indices.getInt(k);
      if (i < 0)
        i += n;
      i = std::clamp<int64_t>(i, 0, n - 1);
      std::memcpy(out.data() + (o * count + k) * chunk, data.data() + (o * n + i) * chunk, chunk);
    }
}

} // namespace

llvm::Expected<HostTensor> evalLayout(Operation *op, Operands in, const InterpOptions &) {
  llvm::Expected<HostTensor> out = makeResult(op);
  if (!out)
    return out.takeError();
  if (isa<ReshapeOp>(op)) {
    if (in[0]->nbytes() != out->nbytes())
      return opError(op, "element counts differ");
    std::copy(in[0]->data(), in[0]->data() + in[0]->nbytes(), out->data());
  } else if (auto transpose = dyn_cast<TransposeOp>(op)) {
    evalTranspose(transpose, *in[0], *out);
  } else if (isa<BroadcastToOp>(op)) {
    gather(*in[0], *out, broadcastStrides(in[0]->shape(), out->shape().size()));
  } else if (auto slice = dyn_cast<SliceOp>(op)) {
    evalSlice(slice, *in[0], *out);
  } else if (auto concat = dyn_cast<ConcatOp>(op)) {
    evalConcat(concat, in, *out);
  } else if (auto g = dyn_cast<GatherOp>(op)) {
    evalGather(g, *in[0], *in[1], *out);
  } else {
    return opError(op, "not a layout op");
  }
  return out;
}

} // namespace fusec::interp
