//===- cublaslt_test.cpp - CublasLt matmuls against a CPU reference -------===//
//
// Runs odd shapes (M, N or K of 1, 3, 17, 1023), transposed and column-major
// operands, strided batches, batch broadcast (stride 0 or a batch of 1),
// alpha/beta and the bias/GELU epilogues in bf16, f16 and f32, and compares
// with an fp64 reference computed from the same (rounded) inputs:
// ||out - ref|| / ||ref|| <= 1e-2 for bf16/f16 and <= 1e-5 for f32.
//
// C is poisoned with 0xFF bytes (NaN in every float type) before each run, so
// a result that was never written, or a beta = 0 run that read C, shows up as
// NaN; bytes around and between the C matrices must stay poisoned.
//
// Exit status: 0 pass, 1 failure, 77 (ctest's SKIP_RETURN_CODE) when there is
// no GPU to run on.
//
//===----------------------------------------------------------------------===//
#include "compiler/support/DType.h"
#include "compiler/support/Float16.h"
#include "runtime/CublasLt.h"
#include "runtime/CudaDriver.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#include "compiler/support/LlvmError.h"

#include "Failures.h"

using namespace fusec;

namespace {

using gputest::fail;
using gputest::failures;

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

struct Case {
  DType dtype = DType::BF16;
  int64_t m = 1, n = 1, k = 1;
  bool transA = false, transB = false;
  bool colMajorA = false, colMajorB = false, colMajorC = false;
  int64_t batch = 1;
  bool shareA = false; ///< A has a batch of 1
  bool shareB = false; ///< B has the full batch count with stride 0
  int64_t pad = 0;     ///< extra elements per leading dimension and batch
  float alpha = 1, beta = 0;
  bool bias = false, gelu = false;
};

MatrixLayout layoutFor(int64_t rows, int64_t cols, bool colMajor, int64_t pad,
                       int64_t batch) {
  MatrixLayout l;
  l.rows = rows;
  l.cols = cols;
  l.rowMajor = !colMajor;
  l.ld = (colMajor ? rows : cols) + pad;
  int64_t extent = colMajor ? (cols - 1) * l.ld + rows : (rows - 1) * l.ld + cols;
  l.batch = batch;
  l.batchStride = batch > 1 ? extent + pad : 0;
  return l;
}

MatmulDesc descFor(const Case &c) {
  MatmulDesc d;
  d.dtype = c.dtype;
  d.transA = c.transA;
  d.transB = c.transB;
  d.a = c.transA ? layoutFor(c.k, c.m, c.colMajorA, c.pad, c.batch)
                 : layoutFor(c.m, c.k, c.colMajorA, c.pad, c.batch);
  d.b = c.transB ? layoutFor(c.n, c.k, c.colMajorB, c.pad, c.batch)
                 : layoutFor(c.k, c.n, c.colMajorB, c.pad, c.batch);
  d.c = layoutFor(c.m, c.n, c.colMajorC, c.pad, c.batch);
  if (c.shareA) {
    d.a.batch = 1;
    d.a.batchStride = 0;
  }
  if (c.shareB)
    d.b.batchStride = 0;
  d.alpha = c.alpha;
  d.beta = c.beta;
  d.biasEpilogue = c.bias;
  d.geluEpilogue = c.gelu;
  return d;
}

std::vector<Case> fixedCases(DType dtype) {
  std::vector<Case> cases;
  auto add = [&](Case c) {
    c.dtype = dtype;
    cases.push_back(c);
  };
  auto shape = [](int64_t m, int64_t n, int64_t k) {
    Case c;
    c.m = m;
    c.n = n;
    c.k = k;
    return c;
  };
  add(shape(1, 1, 1));
  add(shape(3, 17, 1023));
  add(shape(1023, 3, 17));
  add(shape(17, 1023, 1));
  add(shape(1, 1023, 1023));
  add(shape(1023, 1, 3));
  for (auto [ta, tb] : {std::pair{true, false}, {false, true}, {true, true}}) {
    Case c = shape(64, 128, 256);
    c.transA = ta;
    c.transB = tb;
    add(c);
  }
  Case batched = shape(33, 17, 65);
  batched.batch = 4;
  batched.pad = 5;
  add(batched);
  Case sharedA = shape(17, 31, 64); // A has a batch of 1
  sharedA.batch = 3;
  sharedA.shareA = true;
  add(sharedA);
  Case strideZeroB = shape(17, 31, 64); // B has stride 0
  strideZeroB.batch = 3;
  strideZeroB.shareB = true;
  strideZeroB.transB = true;
  add(strideZeroB);
  Case colMajorIn = shape(40, 24, 72);
  colMajorIn.colMajorA = colMajorIn.colMajorB = true;
  add(colMajorIn);
  Case colMajorAll = shape(40, 24, 72);
  colMajorAll.colMajorA = colMajorAll.colMajorB = colMajorAll.colMajorC = true;
  colMajorAll.transB = true;
  colMajorAll.pad = 3;
  add(colMajorAll);
  Case scaled = shape(48, 80, 96);
  scaled.alpha = 0.5f;
  scaled.beta = 0.75f;
  add(scaled);
  Case bias = shape(31, 64, 128);
  bias.bias = true;
  add(bias);
  Case linear = shape(31, 64, 128); // x @ W^T + b, then GELU
  linear.transB = linear.bias = linear.gelu = true;
  add(linear);
  Case gelu = shape(64, 32, 48);
  gelu.gelu = true;
  add(gelu);
  Case batchedBias = shape(16, 40, 24);
  batchedBias.batch = 2;
  batchedBias.bias = true;
  add(batchedBias);
  return cases;
}

std::vector<Case> randomCases(DType dtype, int count, uint64_t seed) {
  static const int64_t kDims[] = {1, 2, 3, 5, 8, 17, 31, 64, 100, 127, 256, 1023};
  std::mt19937_64 rng(seed);
  auto pick = [&](uint64_t n) { return int64_t(rng() % n); };
  auto coin = [&] { return rng() % 2 == 1; };
  std::vector<Case> cases;
  while (int(cases.size()) < count) {
    Case c;
    c.dtype = dtype;
    c.m = kDims[pick(std::size(kDims))];
    c.n = kDims[pick(std::size(kDims))];
    c.k = kDims[pick(std::size(kDims))];
    c.batch = coin() ? 1 : 1 + pick(4);
    // Bound the reference's work (fp64 on one core).
    if (c.m * c.n * c.k * c.batch > (int64_t(1) << 27))
      continue;
    c.transA = coin();
    c.transB = coin();
    c.colMajorA = coin();
    c.colMajorB = coin();
    c.colMajorC = pick(4) == 0;
    c.shareA = c.batch > 1 && pick(4) == 0;
    c.shareB = c.batch > 1 && !c.shareA && pick(4) == 0;
    c.pad = coin() ? 0 : pick(9);
    if (pick(4) == 0) {
      c.alpha = 0.25f + 0.25f * float(pick(4));
      c.beta = 0.5f * float(pick(3));
    }
    c.bias = !c.colMajorC && pick(4) == 0; // bias needs a row-major C
    c.gelu = pick(5) == 0;
    cases.push_back(c);
  }
  return cases;
}

std::string caseName(const Case &c) {
  return CublasLt::describe(descFor(c)) +
         (c.pad ? " pad " + std::to_string(c.pad) : std::string());
}

//===----------------------------------------------------------------------===//
// Host data and reference
//===----------------------------------------------------------------------===//

double loadElement(DType t, const std::vector<uint8_t> &raw, int64_t i) {
  if (t == DType::F32) {
    float v;
    std::memcpy(&v, raw.data() + 4 * i, 4);
    return v;
  }
  uint16_t bits;
  std::memcpy(&bits, raw.data() + 2 * i, 2);
  return t == DType::F16 ? halfToFloat(bits) : bf16ToFloat(bits);
}

void storeElement(DType t, std::vector<uint8_t> &raw, int64_t i, double v) {
  if (t == DType::F32) {
    float f = float(v);
    std::memcpy(raw.data() + 4 * i, &f, 4);
    return;
  }
  uint16_t bits = t == DType::F16 ? doubleToHalf(v) : doubleToBF16(v);
  std::memcpy(raw.data() + 2 * i, &bits, 2);
}

/// Elements a buffer for `l` needs when the matmul has `batch` batches.
int64_t bufferElements(const MatrixLayout &l) {
  int64_t extent = l.rowMajor ? (l.rows - 1) * l.ld + l.cols
                              : (l.cols - 1) * l.ld + l.rows;
  int64_t stored = l.batch == 1 ? 1 : l.batch;
  return (stored - 1) * l.batchStride + extent;
}

int64_t elementOffset(const MatrixLayout &l, int64_t batch, int64_t r,
                      int64_t c) {
  int64_t base = l.batch == 1 ? 0 : batch * l.batchStride;
  return base + (l.rowMajor ? r * l.ld + c : c * l.ld + r);
}

/// A host buffer for `l`: 0xFF everywhere, with random values in [-1, 1)
/// (rounded to `t`) at every element of every stored matrix when `fill`.
std::vector<uint8_t> makeBuffer(DType t, const MatrixLayout &l, bool fill,
                                std::mt19937_64 &rng) {
  std::vector<uint8_t> raw(size_t(bufferElements(l) * dtypeBytes(t)), 0xFF);
  if (!fill)
    return raw;
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  int64_t stored = l.batch == 1 ? 1 : l.batch;
  for (int64_t b = 0; b < stored; ++b)
    for (int64_t r = 0; r < l.rows; ++r)
      for (int64_t c = 0; c < l.cols; ++c)
        storeElement(t, raw, elementOffset(l, b, r, c), dist(rng));
  return raw;
}

/// cuBLASLt's GELU: the tanh approximation.
double gelu(double x) {
  const double kSqrt2OverPi = 0.7978845608028654;
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

/// The expected C for every batch, row-major [batch][m][n], in fp64.
std::vector<double> reference(const MatmulDesc &d, const Case &c,
                              const std::vector<uint8_t> &a,
                              const std::vector<uint8_t> &b,
                              const std::vector<uint8_t> &c0,
                              const std::vector<uint8_t> &bias) {
  std::vector<double> out(size_t(c.batch * c.m * c.n));
  std::vector<double> rowA(c.k), colB(c.k);
  for (int64_t i = 0; i < c.batch; ++i)
    for (int64_t m = 0; m < c.m; ++m) {
      for (int64_t k = 0; k < c.k; ++k)
        rowA[k] = loadElement(c.dtype, a,
                              c.transA ? elementOffset(d.a, i, k, m)
                                       : elementOffset(d.a, i, m, k));
      for (int64_t n = 0; n < c.n; ++n) {
        double sum = 0;
        for (int64_t k = 0; k < c.k; ++k)
          sum += rowA[k] * loadElement(c.dtype, b,
                                       c.transB ? elementOffset(d.b, i, n, k)
                                                : elementOffset(d.b, i, k, n));
        double v = c.alpha * sum;
        if (c.beta != 0)
          v += c.beta * loadElement(c.dtype, c0, elementOffset(d.c, i, m, n));
        if (c.bias)
          v += loadElement(c.dtype, bias, n);
        if (c.gelu)
          v = gelu(v);
        out[size_t((i * c.m + m) * c.n + n)] = v;
      }
    }
  return out;
}

double tolerance(const Case &c) {
  if (c.dtype != DType::F32)
    return 1e-2;
  // The GELU epilogue may evaluate tanh with a fast approximation; 1e-5 is
  // for the plain fp32 product.
  return c.gelu ? 1e-4 : 1e-5;
}

//===----------------------------------------------------------------------===//
// Device side
//===----------------------------------------------------------------------===//

/// Device buffers of one case, freed on every exit path.
struct DeviceBuffers {
  CudaDriver &driver;
  std::vector<CUdeviceptr> ptrs;
  explicit DeviceBuffers(CudaDriver &driver) : driver(driver) {}
  ~DeviceBuffers() {
    for (CUdeviceptr p : ptrs)
      driver.cuMemFree(p);
  }
  llvm::Expected<CUdeviceptr> upload(const std::vector<uint8_t> &host) {
    CUdeviceptr p = 0;
    if (auto err = driver.check(driver.cuMemAlloc(&p, std::max<size_t>(
                                                          host.size(), 1)),
                                "cuMemAlloc"))
      return std::move(err);
    ptrs.push_back(p);
    if (auto err = driver.check(driver.cuMemcpyHtoD(p, host.data(), host.size()),
                                "cuMemcpyHtoD"))
      return std::move(err);
    return p;
  }
};

/// Runs one case with the heuristic's `rank`-th usable algorithm (autotuning
/// picks among them); an error is a failure of the harness or of cuBLASLt.
llvm::Error runCase(CudaDriver &driver, CublasLt &lt, const Case &c,
                    CUdeviceptr workspace, size_t wsBytes, uint64_t seed,
                    int rank = 0) {
  MatmulDesc d = descFor(c);
  auto plan = lt.plan(d, wsBytes, rank);
  if (!plan)
    return plan.takeError();
  // Where cuBLASLt offers fewer usable results, the first runs.
  if (plan->rank != rank && plan->rank != 0)
    fail(caseName(c) + ": asked for rank " + std::to_string(rank) + ", got " +
         std::to_string(plan->rank));

  std::mt19937_64 rng(seed);
  std::vector<uint8_t> a = makeBuffer(c.dtype, d.a, true, rng);
  std::vector<uint8_t> b = makeBuffer(c.dtype, d.b, true, rng);
  // C holds values only where beta reads them; the rest is poison.
  std::vector<uint8_t> c0 = makeBuffer(c.dtype, d.c, c.beta != 0, rng);
  MatrixLayout biasLayout = {1, c.n, c.n};
  std::vector<uint8_t> bias = makeBuffer(c.dtype, biasLayout, c.bias, rng);

  DeviceBuffers buffers(driver);
  CUdeviceptr ptrs[4];
  const std::vector<uint8_t> *hosts[4] = {&a, &b, &c0, &bias};
  for (int i = 0; i < 4; ++i) {
    auto p = buffers.upload(*hosts[i]);
    if (!p)
      return p.takeError();
    ptrs[i] = *p;
  }
  if (auto err = lt.run(*plan, ptrs[0], ptrs[1], ptrs[2], c.bias ? ptrs[3] : 0,
                        workspace, wsBytes, nullptr))
    return err;
  if (auto err = driver.check(driver.cuCtxSynchronize(), "cuCtxSynchronize"))
    return err;
  std::vector<uint8_t> out(c0.size());
  if (auto err = driver.check(
          driver.cuMemcpyDtoH(out.data(), ptrs[2], out.size()), "cuMemcpyDtoH"))
    return err;

  std::vector<double> ref = reference(d, c, a, b, c0, bias);
  std::vector<bool> inside(size_t(bufferElements(d.c)), false);
  double diff2 = 0, ref2 = 0;
  for (int64_t i = 0; i < c.batch; ++i)
    for (int64_t m = 0; m < c.m; ++m)
      for (int64_t n = 0; n < c.n; ++n) {
        int64_t at = elementOffset(d.c, i, m, n);
        inside[size_t(at)] = true;
        double r = ref[size_t((i * c.m + m) * c.n + n)];
        double e = loadElement(c.dtype, out, at) - r;
        diff2 += e * e;
        ref2 += r * r;
      }
  double rel = std::sqrt(diff2) / std::max(std::sqrt(ref2), 1e-30);
  if (!(rel <= tolerance(c)))
    fail(caseName(c) + ": relative error " + std::to_string(rel) + " > " +
         std::to_string(tolerance(c)));
  int64_t width = dtypeBytes(c.dtype);
  for (size_t e = 0; e < inside.size(); ++e) {
    if (inside[e])
      continue;
    for (int64_t byte = 0; byte < width; ++byte)
      if (out[e * width + byte] != 0xFF) {
        fail(caseName(c) + ": wrote element " + std::to_string(e) +
             ", outside C");
        return llvm::Error::success();
      }
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Checks that need no GPU
//===----------------------------------------------------------------------===//

void checkDescribe() {
  MatmulDesc d;
  d.dtype = DType::BF16;
  d.a = {8192, 4096, 4096};
  d.b = {8192, 4096, 4096};
  d.c = {8192, 8192, 8192};
  d.transB = true;
  std::string text = CublasLt::describe(d);
  if (text != "bf16 [8192x4096] @ [4096x8192]^T")
    fail("describe gave '" + text + "'");
}

void checkPlanErrors(CublasLt &lt) {
  MatmulDesc d;
  d.dtype = DType::F16;
  d.a = {4, 5, 5};
  d.b = {6, 7, 7}; // K: 5 vs 6
  d.c = {4, 7, 7};
  auto plan = lt.plan(d, 0);
  if (plan) {
    fail("plan accepted mismatched inner dimensions");
    return;
  }
  std::string message = llvm::toString(plan.takeError());
  if (message.find("inner dimensions") == std::string::npos ||
      message.find("f16 [4x5] @ [6x7]") == std::string::npos)
    fail("plan error does not name the problem: " + message);
}

void checkPlanCache(CublasLt &lt, size_t wsBytes) {
  MatmulDesc d = descFor(fixedCases(DType::BF16)[7]);
  auto first = lt.plan(d, wsBytes);
  auto second = lt.plan(d, wsBytes);
  if (!first || !second) {
    fail("planning twice: " + llvm::toString(first.takeError()) +
         llvm::toString(second.takeError()));
    return;
  }
  if (first->algo != second->algo)
    fail("the plan cache returned a different algorithm");
}

} // namespace

int main() {
  checkDescribe();
  auto context = GpuContext::create();
  if (!context) {
    std::string reason = llvm::toString(context.takeError());
    std::replace(reason.begin(), reason.end(), '\n', ' ');
    llvm::outs() << "SKIP: no GPU: " << reason << "\n";
    return failures ? 1 : 77;
  }
  CudaDriver &driver = context->driver();
  // A GPU without a loadable cuBLASLt is a failure, not a skip: fusec's GEMMs
  // depend on it wherever there is a GPU.
  auto lt = CublasLt::get();
  if (!lt) {
    fail(llvm::toString(lt.takeError()));
    return 1;
  }
  llvm::outs() << "cuBLASLt: " << (*lt)->libraryInfo() << "\n";

  constexpr size_t kWorkspace = size_t(32) << 20;
  CUdeviceptr workspace = 0;
  if (auto err = driver.check(driver.cuMemAlloc(&workspace, kWorkspace),
                              "cuMemAlloc")) {
    fail(llvm::toString(std::move(err)));
    return 1;
  }
  checkPlanErrors(**lt);
  checkPlanCache(**lt, kWorkspace);

  int run = 0;
  uint64_t seed = 1;
  for (DType dtype : {DType::BF16, DType::F16, DType::F32}) {
    std::vector<Case> cases = fixedCases(dtype);
    std::vector<Case> more = randomCases(dtype, 24, 0xC0FFEE + int(dtype));
    cases.insert(cases.end(), more.begin(), more.end());
    for (const Case &c : cases) {
      ++run;
      if (auto err = runCase(driver, **lt, c, workspace, kWorkspace, seed++))
        fail(caseName(c) + ": " + llvm::toString(std::move(err)));
    }
  }
  // The heuristic's other usable algorithms (what `fusec bench --autotune`
  // times for a cuBLASLt product) compute the same products; at least one
  // case has more than one.
  int ranked = 0;
  for (DType dtype : {DType::BF16, DType::F16})
    for (const Case &c : fixedCases(dtype))
      for (int rank = 1; rank < 6; ++rank) {
        auto p = (*lt)->plan(descFor(c), kWorkspace, rank);
        if (p && p->rank == rank)
          ++ranked;
        ++run;
        if (auto err = runCase(driver, **lt, c, workspace, kWorkspace, seed++, rank))
          fail(caseName(c) + " rank " + std::to_string(rank) + ": " +
               llvm::toString(std::move(err)));
      }
  if (ranked == 0)
    fail("no fixed case had a second usable cuBLASLt algorithm");
  driver.cuMemFree(workspace);
  llvm::outs() << run << " matmuls (" << ranked << " at a rank past the first), " << failures
               << " failure(s)\n";
  return failures ? 1 : 0;
}
