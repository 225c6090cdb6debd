//===- MatmulEval.cpp - NumPy batched matmul and the shared GEMM kernel ---===//
//
// The reference must be fast enough to run a Llama-sized decoder block
// (M = 32, K = 4096, N = 14336) in seconds, so the kernel is cache-aware
// while staying plain C++: C is cut into tiles that threads own outright,
// K into blocks whose slice of B stays in L2 across a tile's rows, and the
// innermost loop runs along a row of B and C, which compilers vectorize
// without reassociating any sum. Each C element still accumulates its K
// products in order, so results do not depend on the thread count.
//
//===----------------------------------------------------------------------===//
#include "compiler/interp/EvalSupport.h"

#include "compiler/dialect/FusecDialect.h"
#include "compiler/shape/ShapeRules.h"

using namespace mlir;

namespace fusec::interp {
namespace {

constexpr int64_t kTileRows = 64;
/// A C tile row and a B block row span 512 bytes; a 256-deep B block is 128 KiB.
template <typename T> constexpr int64_t kTileCols = 512 / sizeof(T);
constexpr int64_t kDepthBlock = 256;

/// c[0, n) += sum over kk in [k0, k1) of a[kk] * b[kk * ldb + 0, n), in kk order.
template <typename T>
void accumulateRow(int64_t n, int64_t k0, int64_t k1, const T *a, const T *b, int64_t ldb,
                   T *__restrict c) {
  int64_t kk = k0;
  // Four products per pass keep the C row in registers; the additions still
  // happen in kk order.
  for (; kk + 4 <= k1; kk += 4) {
    const T a0 = a[kk], a1 = a[kk + 1], a2 = a[kk + 2], a3 = a[kk + 3];
    const T *__restrict b0 = b + kk * ldb;
    const T *__restrict b1 = b0 + ldb;
    const T *__restrict b2 = b1 + ldb;
    const T *__restrict b3 = b2 + ldb;
    for (int64_t j = 0; j < n; ++j)
      c[j] = (((c[j] + a0 * b0[j]) + a1 * b1[j]) + a2 * b2[j]) + a3 * b3[j];
  }
  for (; kk < k1; ++kk) {
    const T ak = a[kk];
    const T *__restrict bk = b + kk * ldb;
    for (int64_t j = 0; j < n; ++j)
      c[j] += ak * bk[j];
  }
}

} // namespace

template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, const T *a, int64_t lda, const T *b, int64_t ldb,
          T *c, int64_t ldc, bool parallel) {
  const int64_t tileCols = kTileCols<T>;
  const int64_t rowTiles = (m + kTileRows - 1) / kTileRows;
  const int64_t colTiles = (n + tileCols - 1) / tileCols;
  auto runTile = [&](int64_t tile) {
    int64_t r0 = (tile / colTiles) * kTileRows, c0 = (tile % colTiles) * tileCols;
    int64_t r1 = std::min(m, r0 + kTileRows), width = std::min(n - c0, tileCols);
    for (int64_t i = r0; i < r1; ++i)
      std::fill(c + i * ldc + c0, c + i * ldc + c0 + width, T(0));
    for (int64_t k0 = 0; k0 < k; k0 += kDepthBlock) {
      int64_t k1 = std::min(k, k0 + kDepthBlock);
      for (int64_t i = r0; i < r1; ++i)
        accumulateRow(width, k0, k1, a + i * lda, b + c0, ldb, c + i * ldc + c0);
    }
  };
  const int64_t tiles = rowTiles * colTiles;
  if (!parallel) {
    for (int64_t t = 0; t < tiles; ++t)
      runTile(t);
    return;
  }
  parallelFor(tiles, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t)
      runTile(t);
  });
}

template void gemm<float>(int64_t, int64_t, int64_t, const float *, int64_t, const float *,
                          int64_t, float *, int64_t, bool);
template void gemm<double>(int64_t, int64_t, int64_t, const double *, int64_t, const double *,
                           int64_t, double *, int64_t, bool);

namespace {

/// A matmul as a batch of M x K by K x N products.
struct MatmulShape {
  int64_t m, n, k;
  Shape batch;
  /// Per batch dim, the element offset of the next matrix (0 where broadcast).
  Shape batchStrideA, batchStrideB;
};

/// NumPy promotion: a 1-D lhs is [1, K], a 1-D rhs [K, 1]; the added dims are
/// dropped from the result, which leaves its row-major layout unchanged.
llvm::Expected<MatmulShape> matmulShape(Operation *op, Shape a, Shape b) {
  if (a.empty() || b.empty())
    return opError(op, "operands must have rank >= 1");
  if (a.size() == 1)
    a.insert(a.begin(), 1);
  if (b.size() == 1)
    b.push_back(1);
  MatmulShape s;
  s.m = a[a.size() - 2];
  s.k = a[a.size() - 1];
  s.n = b[b.size() - 1];
  if (b[b.size() - 2] != s.k)
    return opError(op, "contracting dims differ: " + std::to_string(s.k) + " vs " +
                           std::to_string(b[b.size() - 2]));
  Shape batchA(a.begin(), a.end() - 2), batchB(b.begin(), b.end() - 2);
  if (std::string err = shape::broadcast({batchA, batchB}, s.batch); !err.empty())
    return opError(op, "batch dims: " + err);
  s.batchStrideA = broadcastStrides(batchA, s.batch.size());
  s.batchStrideB = broadcastStrides(batchB, s.batch.size());
  for (int64_t &st : s.batchStrideA)
    st *= s.m * s.k;
  for (int64_t &st : s.batchStrideB)
    st *= s.k * s.n;
  return s;
}

template <typename T>
void runMatmul(const MatmulShape &s, const HostTensor &a, const HostTensor &b, HostTensor &out) {
  std::vector<T> va = loadAs<T>(a), vb = loadAs<T>(b);
  std::vector<T> vc(static_cast<size_t>(out.numel()));
  std::array<const int64_t *, 2> strides{s.batchStrideA.data(), s.batchStrideB.data()};
  // Many batches: one thread per batch (the nested gemm then runs serially);
  // one batch: the gemm spreads its tiles over the threads.
  parallelFor(numElements(s.batch), 1, [&](int64_t begin, int64_t end) {
    forEachStrided<2>(s.batch, strides, {}, begin, end,
                      [&](int64_t bi, const std::array<int64_t, 2> &o) {
                        gemm<T>(s.m, s.n, s.k, va.data() + o[0], s.k, vb.data() + o[1], s.n,
                                vc.data() + bi * s.m * s.n, s.n, /*parallel=*/true);
                      });
  });
  storeAll<T>(out, vc.data());
}

} // namespace

llvm::Expected<HostTensor> evalMatmul(Operation *op, Operands in, const InterpOptions &opts) {
  if (!isa<MatmulOp>(op))
    return opError(op, "not a matmul");
  llvm::Expected<HostTensor> out = makeResult(op);
  if (!out)
    return out.takeError();
  llvm::Expected<MatmulShape> s = matmulShape(op, in[0]->shape(), in[1]->shape());
  if (!s)
    return s.takeError();
  if (numElements(s->batch) * s->m * s->n != out->numel())
    return opError(op, "result shape does not match the operands");
  if (opts.fp64)
    runMatmul<double>(*s, *in[0], *in[1], *out);
  else
    runMatmul<float>(*s, *in[0], *in[1], *out);
  return out;
}

} // namespace fusec::interp
