//===- CublasLt.h - matmuls through a dlopen'ed cuBLASLt ------------------===//
//
// fusec runs GEMMs through cuBLASLt, loaded at run time so that binaries build
// and run (without GEMMs) on machines that have no CUDA libraries at all.
//
// The flow is plan once, run many times:
//
//   auto lt = CublasLt::get();                       // dlopen
//   auto plan = (*lt)->plan(desc, workspaceLimit);   // heuristic, cached by desc
//   (*lt)->run(*plan, a, b, c, bias, ws, wsBytes, stream);
//
// plan() uses the device whose context is current on the calling thread,
// with a cuBLASLt handle of that device's own (cublasLtCreate on first use
// there: a handle belongs to the device it was made on); the plan keeps the
// handle for run().
//
// Layouts are described as stored: rows x cols with a leading dimension `ld`
// (elements between consecutive rows when row-major, between consecutive
// columns when column-major). cuBLASLt itself is column-major; a row-major C is
// produced with the transpose trick, C^T = op(B)^T op(A)^T, which reads a
// row-major matrix as its column-major transpose without moving data. That
// choice (rather than CUBLASLT_ORDER_ROW, which many kernels do not support)
// also makes the bias epilogue per output column, as a `linear` layer needs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/plan/MatmulDesc.h"
#include "compiler/support/DType.h"

#include "compiler/support/Error.h"

#include <cuda.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace fusec {

/// A chosen algorithm for one MatmulDesc. A plain value: copy it freely; it
/// stays valid for the CublasLt instance (and device) that made it.
struct MatmulPlan {
  MatmulDesc desc;
  /// cublasLtMatmulAlgo_t, kept opaque so this header needs no cuBLAS headers.
  std::array<uint64_t, 8> algo{};
  /// Workspace bytes the algorithm needs (<= the limit it was planned with).
  size_t workspaceBytes = 0;
  /// Heuristic's estimate of device utilisation (1.0 = one full wave).
  float waves = 0;
  /// Which usable result of the heuristic this is (0: its first choice).
  int rank = 0;
  /// The cuBLASLt handle (cublasLtHandle_t) of the device it was planned on,
  /// which run() uses: the device is resolved once, at planning.
  void *handle = nullptr;
};

/// The process-wide cuBLASLt: library, a handle a device, and plan cache.
class CublasLt {
public:
  /// Loads libcublasLt on first use (thread-safe) and creates the handle. The
  /// first call should come with a CUDA context current on the calling thread,
  /// since cuBLASLt binds to the current device. A failure is remembered and
  /// reported again on every later call.
  static rt::Expected<CublasLt *> get();
  /// True when get() succeeds; consumes the error otherwise.
  static bool available();

  /// Human-readable summary of a matmul, used in every error message:
  /// "bf16 [8192x4096] @ [4096x8192]^T". Shapes are op(A) and op(B); `^T`
  /// marks an operand stored transposed.
  static std::string describe(const MatmulDesc &desc);

  /// Checks `desc` and picks the heuristic's best algorithm whose workspace
  /// fits in `workspaceLimit` bytes, or with `rank` > 0 its rank-th usable
  /// result after that (autotuning; the best when there are fewer). Plans are
  /// cached by (desc, limit, rank); the algorithm assumes every pointer passed
  /// to run() is 16-byte aligned.
  rt::Expected<MatmulPlan> plan(const MatmulDesc &desc,
                                  size_t workspaceLimit, int rank = 0);

  /// Enqueues the matmul on `stream`. `bias` is read only with biasEpilogue
  /// (pass 0 otherwise); C is read when beta != 0. The result goes to `d`
  /// (C's layout), or over C when `d` is 0. `wsBytes` must be at least
  /// plan.workspaceBytes.
  rt::Error run(const MatmulPlan &plan, CUdeviceptr a, CUdeviceptr b,
                  CUdeviceptr c, CUdeviceptr bias, CUdeviceptr workspace,
                  size_t wsBytes, CUstream stream, CUdeviceptr d = 0);

  /// Which file was loaded and its version, e.g. "libcublasLt.so.13 (130100)".
  std::string libraryInfo() const;

  struct Api;
  ~CublasLt();

private:
  CublasLt() = default;
  static rt::Expected<std::unique_ptr<CublasLt>> create();
  /// The device current on this thread and its cuBLASLt handle, made there
  /// on first use.
  rt::Expected<std::pair<int, void *>> handleHere();

  std::unique_ptr<Api> api;
  std::mutex cacheMutex;
  std::map<std::string, MatmulPlan> planCache;
};

} // namespace fusec
