//===- StridedView.cpp - views as (shape, strides, offset) over a buffer --===//
#include "compiler/schedule/StridedView.h"

#include "compiler/cost/CostModel.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/shape/ShapeRules.h"

using namespace mlir;

namespace fusec {

std::optional<StridedView> reshapeView(const StridedView &view,
                                       const std::vector<int64_t> &newShape) {
  // Drop size-1 dims (their stride is irrelevant), then match groups of old
  // and new dims with equal products; within a group the old dims must be
  // laid out contiguously relative to each other.
  std::vector<int64_t> os, ost;
  for (size_t i = 0; i < view.shape.size(); ++i)
    if (view.shape[i] != 1) {
      os.push_back(view.shape[i]);
      ost.push_back(view.strides[i]);
    }
  StridedView out;
  out.offset = view.offset;
  out.shape = newShape;
  out.strides.assign(newShape.size(), 0);
  size_t oi = 0, ni = 0;
  while (ni < newShape.size()) {
    if (newShape[ni] == 1) {
      out.strides[ni++] = 0;
      continue;
    }
    if (oi >= os.size())
      return std::nullopt;
    // Grow an old group and a new group until their products match.
    size_t o0 = oi, n0 = ni;
    int64_t po = os[oi++], pn = newShape[ni++];
    while (po != pn) {
      if (po < pn) {
        if (oi >= os.size())
          return std::nullopt;
        po *= os[oi++];
      } else {
        while (ni < newShape.size() && newShape[ni] == 1)
          ++ni;
        if (ni >= newShape.size())
          return std::nullopt;
        pn *= newShape[ni++];
      }
    }
    for (size_t k = o0; k + 1 < oi; ++k)
      if (ost[k] != ost[k + 1] * os[k + 1])
        return std::nullopt;
    int64_t stride = ost[oi - 1];
    for (size_t k = ni; k-- > n0;) {
      out.strides[k] = newShape[k] == 1 ? 0 : stride;
      stride *= newShape[k];
    }
  }
  if (oi != os.size())
    return std::nullopt;
  return out;
}

std::optional<StridedView> stridedView(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !isView(def)) {
    StridedView c;
    ArrayRef<int64_t> s = shapeOf(v);
    c.shape.assign(s.begin(), s.end());
    c.strides.assign(s.size(), 1);
    for (int i = (int)s.size() - 2; i >= 0; --i)
      c.strides[i] = c.strides[i + 1] * s[i + 1];
    return c;
  }
  std::optional<StridedView> in = stridedView(def->getOperand(0));
  if (!in)
    return std::nullopt;
  ArrayRef<int64_t> rs = shapeOf(v);
  std::vector<int64_t> result(rs.begin(), rs.end());
  StridedView out;
  out.offset = in->offset;
  out.shape = result;
  if (auto t = dyn_cast<TransposeOp>(def)) {
    for (int64_t p : t.getPerm())
      out.strides.push_back(in->strides[p]);
    return out;
  }
  if (isa<BroadcastToOp>(def)) {
    size_t off = result.size() - in->shape.size();
    out.strides.assign(result.size(), 0);
    for (size_t j = 0; j < in->shape.size(); ++j)
      out.strides[off + j] = in->shape[j] == 1 ? 0 : in->strides[j];
    return out;
  }
  if (auto s = dyn_cast<SliceOp>(def)) {
    for (size_t d = 0; d < result.size(); ++d) {
      out.offset += s.getStarts()[d] * in->strides[d];
      out.strides.push_back(in->strides[d] * s.getSteps()[d]);
    }
    return out;
  }
  return reshapeView(*in, result);
}

std::optional<MatrixView> asBatchedMatrix(const StridedView &view,
                                          const std::vector<int64_t> &batchShape,
                                          char vectorAs) {
  std::vector<int64_t> shape = view.shape, strides = view.strides;
  if (shape.size() == 1) {
    // A vector operand: a 1 x K row (lhs) or a K x 1 column (rhs).
    if (vectorAs == 'r') {
      shape.insert(shape.begin(), 1);
      strides.insert(strides.begin(), 0);
    } else {
      shape.push_back(1);
      strides.push_back(0);
    }
  }
  if (shape.size() < 2)
    return std::nullopt;
  MatrixView m;
  m.offset = view.offset;
  size_t r = shape.size();
  m.rows = shape[r - 2];
  m.cols = shape[r - 1];
  m.rowStride = m.rows == 1 ? 0 : strides[r - 2];
  m.colStride = m.cols == 1 ? 0 : strides[r - 1];
  // Batch dims, right-aligned against the result's batch shape.
  std::vector<int64_t> bStrides(batchShape.size(), 0);
  size_t nb = r - 2;
  if (nb > batchShape.size())
    return std::nullopt;
  for (size_t j = 0; j < nb; ++j) {
    size_t k = batchShape.size() - nb + j;
    bStrides[k] = shape[j] == 1 ? 0 : strides[j];
  }
  // One stride must describe every batch dim: broadcast everywhere, or nested.
  m.batch = shape::numElements(batchShape);
  bool allZero = true;
  for (int64_t s : bStrides)
    allZero &= s == 0;
  if (allZero || m.batch == 1) {
    m.batchStride = 0;
    return m;
  }
  // Nested: each dim's stride is the next-inner dim's stride times its size.
  bool first = true;
  int64_t expect = 0;
  for (size_t k = batchShape.size(); k-- > 0;) {
    if (batchShape[k] == 1)
      continue;
    if (first) {
      if (bStrides[k] == 0)
        return std::nullopt;  // broadcast in some batch dims only
      m.batchStride = bStrides[k];
      first = false;
    } else if (bStrides[k] != expect) {
      return std::nullopt;
    }
    expect = bStrides[k] * batchShape[k];
  }
  return m;
}

std::vector<int64_t> matmulBatchShape(Operation *matmul) {
  ArrayRef<int64_t> out = shapeOf(matmul->getResult(0));
  size_t matrixDims = 2 - (shapeOf(matmul->getOperand(0)).size() == 1) -
                      (shapeOf(matmul->getOperand(1)).size() == 1);
  return std::vector<int64_t>(out.begin(), out.end() - matrixDims);
}

std::optional<MatrixLayoutView> layoutOfView(const StridedView &view,
                                             const std::vector<int64_t> &batchShape,
                                             char vectorAs, int64_t bytes) {
  std::optional<MatrixView> m = asBatchedMatrix(view, batchShape, vectorAs);
  if (!m)
    return std::nullopt;
  if ((m->offset * bytes) % 16 != 0)
    return std::nullopt;
  MatrixLayoutView l;
  l.rows = m->rows;
  l.cols = m->cols;
  l.batch = m->batch;
  l.batchStride = m->batchStride;
  l.offset = m->offset;
  if (vectorAs == 'c' && m->cols == 1 && m->rows > 1 && m->rowStride == 1) {
    // One column, contiguous: B of a matrix-vector product (N = 1), read
    // along K as the dot-product kernel and cuBLASLt's column-major B want.
    l.rowMajor = false;
    l.ld = m->rows;
  } else if (m->cols == 1 || m->colStride == 1) {
    l.rowMajor = true;
    l.ld = std::max(m->rows == 1 ? m->cols : m->rowStride, m->cols);
  } else if (m->rows == 1 || m->rowStride == 1) {
    l.rowMajor = false;
    l.ld = std::max(m->cols == 1 ? m->rows : m->colStride, m->rows);
  } else {
    return std::nullopt;
  }
  return l;
}

std::optional<MatrixLayoutView> matmulOperandLayout(Value v,
                                                    const std::vector<int64_t> &batchShape,
                                                    char vectorAs) {
  std::optional<StridedView> view = stridedView(v);
  if (!view)
    return std::nullopt;
  return layoutOfView(*view, batchShape, vectorAs, dtypeBytes(dtypeOf(v)));
}

MatrixLayoutView matmulOperandLayoutAsRead(Value v, const std::vector<int64_t> &batchShape,
                                           char vectorAs) {
  if (std::optional<MatrixLayoutView> l = matmulOperandLayout(v, batchShape, vectorAs))
    return *l;
  // The copy materializeMatmulOperands makes: the result's batch dims
  // spelled out, then the operand's matrix dims, contiguous.
  ArrayRef<int64_t> s = shapeOf(v);
  StridedView copy;
  if (s.size() > 1)
    copy.shape = batchShape;
  copy.shape.insert(copy.shape.end(), s.end() - std::min<size_t>(2, s.size()), s.end());
  copy.strides.assign(copy.shape.size(), 1);
  for (size_t d = copy.shape.size(); d-- > 1;)
    copy.strides[d - 1] = copy.strides[d] * copy.shape[d];
  std::optional<MatrixLayoutView> l =
      layoutOfView(copy, batchShape, vectorAs, dtypeBytes(dtypeOf(v)));
  assert(l && "a contiguous copy is a matrix layout");
  return *l;
}

bool alignedFor16ByteCopies(const MatrixLayoutView &l) {
  int64_t contiguousExtent = l.rowMajor ? l.cols : l.rows;
  return contiguousExtent % 8 == 0 && l.ld % 8 == 0 && l.offset % 8 == 0 &&
         (l.batch <= 1 || l.batchStride % 8 == 0);
}

} // namespace fusec
