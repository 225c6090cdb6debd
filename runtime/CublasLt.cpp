//===- CublasLt.cpp - matmuls through a dlopen'ed cuBLASLt ----------------===//
//
// Only <cublasLt.h> declarations are used (for types and enum values); every
// function is resolved with dlsym, so nothing here links against cuBLAS.
//
// Descriptors are initialised in stack storage (cublasLt*Init) for every
// heuristic query and every run rather than created once and kept in the
// plan: that keeps MatmulPlan a plain value, lets several threads run one plan
// at once (run() sets the bias pointer in its own descriptor) and costs no
// allocation.
//
//===----------------------------------------------------------------------===//
#include "runtime/CublasLt.h"
#include "runtime/CudaDriver.h"


#include <cublasLt.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace fusec {

static_assert(sizeof(cublasLtMatmulAlgo_t) == sizeof(MatmulPlan::algo),
              "MatmulPlan::algo must hold a cublasLtMatmulAlgo_t");

/// The cuBLASLt entry points fusec uses, typed from the toolkit's header.
struct CublasLt::Api {
  void *library = nullptr;
  std::string path;
  /// A handle a device: a cuBLASLt context belongs to the device current
  /// when it is made, so the ranks of a split program, a GPU each in one
  /// process, each get their own (made on first use on that device).
  std::mutex handlesMutex;
  std::map<int, cublasLtHandle_t> handles;

  decltype(&::cublasLtCreate) create = nullptr;
  decltype(&::cublasLtGetVersion) getVersion = nullptr;
  decltype(&::cublasLtGetStatusName) getStatusName = nullptr;
  decltype(&::cublasLtMatmulDescInit_internal) matmulDescInit = nullptr;
  decltype(&::cublasLtMatmulDescSetAttribute) matmulDescSetAttribute = nullptr;
  decltype(&::cublasLtMatrixLayoutInit_internal) layoutInit = nullptr;
  decltype(&::cublasLtMatrixLayoutSetAttribute) layoutSetAttribute = nullptr;
  decltype(&::cublasLtMatmulPreferenceInit_internal) preferenceInit = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) preferenceSetAttribute =
      nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) getHeuristic = nullptr;
  decltype(&::cublasLtMatmul) matmul = nullptr;

  std::string statusName(cublasStatus_t status) const {
    if (getStatusName)
      if (const char *name = getStatusName(status))
        return name;
    return "cublasStatus " + std::to_string(static_cast<int>(status));
  }
};

namespace {

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

/// The first libcublasLt that dlopen accepts: the loader's search path first
/// (LD_LIBRARY_PATH, ldconfig), then the usual toolkit directories. Every
/// failure is kept, so a missing library is reported with where we looked.
rt::Expected<std::pair<void *, std::string>> openLibrary() {
  std::vector<std::string> candidates = {"libcublasLt.so.13",
                                                  "libcublasLt.so.12"};
  std::vector<std::string> dirs;
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    dirs.push_back(std::string(home) + "/lib64");
  dirs.push_back("/usr/local/cuda/lib64");
  for (const std::string &dir : dirs)
    for (const char *name : {"libcublasLt.so.13", "libcublasLt.so.12"})
      candidates.push_back(dir + "/" + name);

  std::string tried;
  for (const std::string &candidate : candidates) {
    if (void *lib = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL))
      return std::make_pair(lib, candidate);
    const char *why = dlerror();
    tried += "\n  " + (why ? std::string(why) : candidate + ": unknown error");
  }
  return rt::Error::failure("cublasLt: cannot load libcublasLt:" + tried);
}

//===----------------------------------------------------------------------===//
// Descriptions
//===----------------------------------------------------------------------===//

int64_t opRows(const MatrixLayout &l, bool trans) {
  return trans ? l.cols : l.rows;
}
int64_t opCols(const MatrixLayout &l, bool trans) {
  return trans ? l.rows : l.cols;
}

/// One operand as cuBLASLt's column-major view sees it. A row-major matrix
/// is read as its column-major transpose, with the same `ld`.
struct ColumnMajorOperand {
  const MatrixLayout *layout;
  uint64_t rows, cols;
  /// Whether cuBLASLt must transpose the view to get the needed matrix.
  bool transpose;
};

/// `needTransposed` says whether the product needs the stored matrix (false)
/// or its transpose (true).
ColumnMajorOperand viewOf(const MatrixLayout &l, bool needTransposed) {
  ColumnMajorOperand v{&l, uint64_t(l.rows), uint64_t(l.cols), false};
  if (l.rowMajor)
    std::swap(v.rows, v.cols);
  v.transpose = l.rowMajor != needTransposed;
  return v;
}

/// The three operands of the column-major product cuBLASLt computes. For a
/// row-major C that is C^T = op(B)^T op(A)^T, so B comes first.
struct ColumnMajorProblem {
  ColumnMajorOperand first, second, out;
  bool swapped;
};

ColumnMajorProblem columnMajorProblem(const MatmulDesc &d) {
  if (d.c.rowMajor)
    return {viewOf(d.b, !d.transB), viewOf(d.a, !d.transA), viewOf(d.c, true),
            true};
  return {viewOf(d.a, d.transA), viewOf(d.b, d.transB), viewOf(d.c, false),
          false};
}

std::optional<cudaDataType> cudaType(DType t) {
  switch (t) {
  case DType::F32: return CUDA_R_32F;
  case DType::F16: return CUDA_R_16F;
  case DType::BF16: return CUDA_R_16BF;
  default: return std::nullopt;
  }
}

/// Why `desc` cannot be run, or an empty string.
std::string validate(const MatmulDesc &d) {
  if (!cudaType(d.dtype))
    return "dtype must be f32, f16 or bf16";
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  for (auto [name, l] : {std::pair<const char *, const MatrixLayout *>{"A", &d.a},
                         {"B", &d.b},
                         {"C", &d.c}}) {
    std::string n = name;
    if (l->rows < 1 || l->cols < 1 || l->rows > kMax || l->cols > kMax)
      return n + " dimensions must be in [1, 2^31)";
    int64_t minLd = l->rowMajor ? l->cols : l->rows;
    if (l->ld < minLd || l->ld > kMax)
      return n + " leading dimension " + std::to_string(l->ld) +
             " is below " + std::to_string(minLd);
    if (l->batch != 1 && l->batch != d.c.batch)
      return n + " batch must be 1 or C's batch " + std::to_string(d.c.batch);
    if (l->batchStride < 0)
      return n + " batch stride must not be negative";
  }
  if (d.c.batch < 1 || d.c.batch > kMax)
    return "batch must be in [1, 2^31)";
  if (d.c.batch > 1 && d.c.batchStride == 0)
    return "C batch stride 0 would make every batch write the same matrix";
  if (opCols(d.a, d.transA) != opRows(d.b, d.transB))
    return "inner dimensions differ";
  if (d.c.rows != opRows(d.a, d.transA) || d.c.cols != opCols(d.b, d.transB))
    return "C is not [M x N]";
  if (d.biasEpilogue && !d.c.rowMajor)
    return "the bias epilogue needs a row-major C (bias is per output column)";
  return "";
}

/// Every field, so that two descs share a key only if they are the same.
std::string cacheKey(const MatmulDesc &d, size_t workspaceLimit, int rank) {
  std::ostringstream os;
  uint32_t alpha, beta;
  std::memcpy(&alpha, &d.alpha, 4);
  std::memcpy(&beta, &d.beta, 4);
  os << 'r' << rank << ':';
  os << static_cast<int>(d.dtype) << ':' << d.transA << d.transB
     << d.biasEpilogue << d.geluEpilogue << ':' << std::hex << alpha << ',' << beta << std::dec
     << ':' << workspaceLimit;
  for (const MatrixLayout *l : {&d.a, &d.b, &d.c})
    os << '|' << l->rows << ',' << l->cols << ',' << l->ld << ',' << l->batch
       << ',' << l->batchStride << ',' << l->rowMajor;
  return os.str();
}

/// Descriptor storage for one heuristic query or one matmul call.
struct Descriptors {
  cublasLtMatmulDescOpaque_t op;
  cublasLtMatrixLayoutOpaque_t first, second, out;
};

/// A failed cuBLASLt call, with the status name and the matmul it was for.
rt::Error statusError(const CublasLt::Api &api, cublasStatus_t status,
                        const char *what, const MatmulDesc &desc) {
  return rt::errorf("cublasLt: %s failed with %s for %s",
      what, api.statusName(status).c_str(),
      CublasLt::describe(desc).c_str());
}

rt::Error initLayout(const CublasLt::Api &api, const MatmulDesc &desc,
                       cublasLtMatrixLayoutOpaque_t &storage,
                       const ColumnMajorOperand &view) {
  cudaDataType type = *cudaType(desc.dtype);
  if (auto s = api.layoutInit(&storage, sizeof(storage), type, view.rows,
                              view.cols, view.layout->ld);
      s != CUBLAS_STATUS_SUCCESS)
    return statusError(api, s, "cublasLtMatrixLayoutInit", desc);
  if (desc.c.batch == 1)
    return rt::Error::success();
  int32_t count = static_cast<int32_t>(desc.c.batch);
  int64_t stride = view.layout->batch == 1 ? 0 : view.layout->batchStride;
  if (auto s = api.layoutSetAttribute(&storage,
                                      CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                      &count, sizeof(count));
      s != CUBLAS_STATUS_SUCCESS)
    return statusError(api, s, "setting the batch count", desc);
  if (auto s = api.layoutSetAttribute(
          &storage, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
          sizeof(stride));
      s != CUBLAS_STATUS_SUCCESS)
    return statusError(api, s, "setting the batch stride", desc);
  return rt::Error::success();
}

/// Fills `out` for `desc`. `bias` is the bias pointer the descriptor carries:
/// the real one for a run, a stand-in for a heuristic query.
rt::Error initDescriptors(const CublasLt::Api &api, const MatmulDesc &desc,
                            const void *bias, Descriptors &out) {
  ColumnMajorProblem p = columnMajorProblem(desc);
  if (auto s = api.matmulDescInit(&out.op, sizeof(out.op), CUBLAS_COMPUTE_32F,
                                  CUDA_R_32F);
      s != CUBLAS_STATUS_SUCCESS)
    return statusError(api, s, "cublasLtMatmulDescInit", desc);

  auto setOp = [&](cublasLtMatmulDescAttributes_t attr, const void *value,
                   size_t size, const char *what) -> rt::Error {
    if (auto s = api.matmulDescSetAttribute(&out.op, attr, value, size);
        s != CUBLAS_STATUS_SUCCESS)
      return statusError(api, s, what, desc);
    return rt::Error::success();
  };
  int32_t opFirst = p.first.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  int32_t opSecond = p.second.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (auto err = setOp(CUBLASLT_MATMUL_DESC_TRANSA, &opFirst, sizeof(opFirst),
                       "setting TRANSA"))
    return err;
  if (auto err = setOp(CUBLASLT_MATMUL_DESC_TRANSB, &opSecond,
                       sizeof(opSecond), "setting TRANSB"))
    return err;

  if (desc.biasEpilogue || desc.geluEpilogue) {
    uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    if (desc.biasEpilogue && desc.geluEpilogue)
      epilogue = CUBLASLT_EPILOGUE_GELU_BIAS;
    else if (desc.biasEpilogue)
      epilogue = CUBLASLT_EPILOGUE_BIAS;
    else
      epilogue = CUBLASLT_EPILOGUE_GELU;
    if (auto err = setOp(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                         sizeof(epilogue), "setting the epilogue"))
      return err;
  }
  if (desc.biasEpilogue)
    if (auto err = setOp(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                         sizeof(bias), "setting the bias pointer"))
      return err;

  if (auto err = initLayout(api, desc, out.first, p.first))
    return err;
  if (auto err = initLayout(api, desc, out.second, p.second))
    return err;
  return initLayout(api, desc, out.out, p.out);
}

/// Alignment in bytes that plans promise to cuBLASLt and run() checks.
constexpr uint32_t kPointerAlignment = 16;

} // namespace

//===----------------------------------------------------------------------===//
// CublasLt
//===----------------------------------------------------------------------===//

CublasLt::~CublasLt() = default;

rt::Expected<std::unique_ptr<CublasLt>> CublasLt::create() {
  auto opened = openLibrary();
  if (!opened)
    return opened.takeError();
  std::unique_ptr<CublasLt> lt(new CublasLt());
  lt->api = std::make_unique<Api>();
  Api &api = *lt->api;
  api.library = opened->first;
  api.path = opened->second;

  // Optional: only improves messages.
  api.getStatusName = reinterpret_cast<decltype(api.getStatusName)>(
      dlsym(api.library, "cublasLtGetStatusName"));
  std::string missing;
  auto need = [&](const char *name, auto &fn) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(api.library, name));
    if (!fn)
      missing += std::string(" ") + name;
  };
  need("cublasLtCreate", api.create);
  need("cublasLtGetVersion", api.getVersion);
  need("cublasLtMatmulDescInit_internal", api.matmulDescInit);
  need("cublasLtMatmulDescSetAttribute", api.matmulDescSetAttribute);
  need("cublasLtMatrixLayoutInit_internal", api.layoutInit);
  need("cublasLtMatrixLayoutSetAttribute", api.layoutSetAttribute);
  need("cublasLtMatmulPreferenceInit_internal", api.preferenceInit);
  need("cublasLtMatmulPreferenceSetAttribute", api.preferenceSetAttribute);
  need("cublasLtMatmulAlgoGetHeuristic", api.getHeuristic);
  need("cublasLtMatmul", api.matmul);
  if (!missing.empty())
    return rt::errorf("cublasLt: %s lacks:%s", api.path.c_str(),
                                   missing.c_str());

  return std::move(lt);
}

rt::Expected<std::pair<int, void *>> CublasLt::handleHere() {
  auto drv = CudaDriver::get();
  if (!drv)
    return drv.takeError();
  CUcontext ctx = nullptr;
  CUdevice device = -1;
  if ((*drv)->cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx ||
      (*drv)->cuCtxGetDevice(&device) != CUDA_SUCCESS)
    return rt::errorf("cublasLt: no CUDA context is current on this thread");
  std::lock_guard<std::mutex> lock(api->handlesMutex);
  cublasLtHandle_t &h = api->handles[int(device)];
  if (!h)
    if (auto s = api->create(&h); s != CUBLAS_STATUS_SUCCESS) {
      h = nullptr;
      return rt::errorf("cublasLt: cublasLtCreate failed on device %d with %s (%s)", int(device),
                        api->statusName(s).c_str(), api->path.c_str());
    }
  return std::pair<int, void *>{int(device), h};
}

rt::Expected<CublasLt *> CublasLt::get() {
  // Built once, thread-safely, by the static initialiser. The instance is
  // never destroyed: cublasLtDestroy or dlclose during static destruction
  // can run after the CUDA driver has shut down, and the OS reclaims both.
  struct Loaded {
    CublasLt *instance = nullptr;
    std::string error;
  };
  static const Loaded loaded = [] {
    Loaded result;
    auto lt = create();
    if (!lt)
      result.error = lt.takeError().message();
    else
      result.instance = lt->release();
    return result;
  }();
  if (loaded.instance)
    return loaded.instance;
  return rt::Error::failure(loaded.error);
}

bool CublasLt::available() {
  auto lt = get();
  if (lt)
    return true;
  (void)lt.takeError();
  return false;
}

std::string CublasLt::libraryInfo() const {
  return api->path + " (" + std::to_string(api->getVersion()) + ")";
}

std::string CublasLt::describe(const MatmulDesc &d) {
  std::ostringstream os;
  os << dtypeName(d.dtype) << ' ';
  // Shapes of op(X); a batched operand shows its batch count first, one shared
  // by every batch shows just the matrix.
  auto operand = [&](const MatrixLayout &l, bool trans) {
    os << '[';
    if (l.batch > 1 && l.batchStride != 0)
      os << l.batch << 'x';
    os << opRows(l, trans) << 'x' << opCols(l, trans) << ']';
    if (trans)
      os << "^T";
    if (!l.rowMajor)
      os << "(col-major)";
  };
  operand(d.a, d.transA);
  os << " @ ";
  operand(d.b, d.transB);
  if (d.c.batch > 1)
    os << " batch " << d.c.batch;
  if (!d.c.rowMajor)
    os << " into col-major C";
  if (d.alpha != 1)
    os << " alpha=" << double(d.alpha);
  if (d.beta != 0)
    os << " beta=" << double(d.beta);
  if (d.biasEpilogue)
    os << " +bias";
  if (d.geluEpilogue)
    os << " +gelu";
  return os.str();
}

rt::Expected<MatmulPlan> CublasLt::plan(const MatmulDesc &desc,
                                          size_t workspaceLimit, int rank) {
  if (std::string why = validate(desc); !why.empty())
    return rt::errorf("cublasLt: invalid matmul %s: %s",
                                   describe(desc).c_str(), why.c_str());
  auto here = handleHere();
  if (!here)
    return here.takeError();
  auto handle = static_cast<cublasLtHandle_t>(here->second);
  // Per device: the heuristic answers for the GPU it runs on.
  std::string key = "d" + std::to_string(here->first) + ":" + cacheKey(desc, workspaceLimit, rank);
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    if (auto it = planCache.find(key); it != planCache.end())
      return it->second;
  }

  // The heuristic reads the bias pointer's value (never the memory) to learn
  // its alignment; a null pointer would claim any alignment at all, so a
  // stand-in with exactly the alignment run() promises is used instead.
  const void *biasStandIn = reinterpret_cast<const void *>(
      uintptr_t(kPointerAlignment));
  Descriptors descs;
  if (auto err = initDescriptors(*api, desc, biasStandIn, descs))
    return std::move(err);

  cublasLtMatmulPreferenceOpaque_t pref;
  if (auto s = api->preferenceInit(&pref, sizeof(pref));
      s != CUBLAS_STATUS_SUCCESS)
    return statusError(*api, s, "cublasLtMatmulPreferenceInit", desc);
  uint64_t limit = workspaceLimit;
  if (auto s = api->preferenceSetAttribute(
          &pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit,
          sizeof(limit));
      s != CUBLAS_STATUS_SUCCESS)
    return statusError(*api, s, "setting the workspace limit", desc);
  for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
    uint32_t align = kPointerAlignment;
    if (auto s =
            api->preferenceSetAttribute(&pref, attr, &align, sizeof(align));
        s != CUBLAS_STATUS_SUCCESS)
      return statusError(*api, s, "setting a minimum alignment", desc);
  }

  constexpr int kRequested = 8;
  cublasLtMatmulHeuristicResult_t results[kRequested] = {};
  int returned = 0;
  if (auto s = api->getHeuristic(handle, &descs.op, &descs.first,
                                 &descs.second, &descs.out, &descs.out, &pref,
                                 kRequested, results, &returned);
      s != CUBLAS_STATUS_SUCCESS)
    return statusError(*api, s, "cublasLtMatmulAlgoGetHeuristic", desc);

  // Results come fastest first (by the heuristic's estimate): take the
  // rank-th usable one, or the first when there are fewer.
  std::vector<int> usable;
  for (int i = 0; i < returned; ++i)
    if (results[i].state == CUBLAS_STATUS_SUCCESS && results[i].workspaceSize <= workspaceLimit)
      usable.push_back(i);
  if (!usable.empty()) {
    const int chosen = rank >= 0 && rank < (int)usable.size() ? rank : 0;
    const cublasLtMatmulHeuristicResult_t &r = results[usable[chosen]];
    MatmulPlan plan;
    plan.desc = desc;
    std::memcpy(plan.algo.data(), &r.algo, sizeof(r.algo));
    plan.workspaceBytes = r.workspaceSize;
    plan.waves = r.wavesCount;
    plan.rank = chosen;
    plan.handle = handle;
    std::lock_guard<std::mutex> lock(cacheMutex);
    planCache.emplace(key, plan);
    return plan;
  }
  return rt::errorf("cublasLt: no algorithm for %s within a %zu-byte workspace",
      describe(desc).c_str(), workspaceLimit);
}

rt::Error CublasLt::run(const MatmulPlan &plan, CUdeviceptr a,
                          CUdeviceptr b, CUdeviceptr c, CUdeviceptr bias,
                          CUdeviceptr workspace, size_t wsBytes,
                          CUstream stream, CUdeviceptr d) {
  if (!d)
    d = c;
  const MatmulDesc &desc = plan.desc;
  auto fail = [&](const std::string &why) {
    return rt::errorf("cublasLt: cannot run %s: %s",
                                   describe(desc).c_str(), why.c_str());
  };
  if (!a || !b || !c)
    return fail("A, B and C must be non-null");
  if (desc.biasEpilogue && !bias)
    return fail("the bias epilogue needs a bias pointer");
  if (wsBytes < plan.workspaceBytes || (plan.workspaceBytes && !workspace))
    return fail("the plan needs " + std::to_string(plan.workspaceBytes) +
                " workspace bytes, got " + std::to_string(wsBytes));
  for (auto [name, ptr] : {std::pair<const char *, CUdeviceptr>{"A", a},
                           {"B", b},
                           {"C", c},
                           {"D", d},
                           {"bias", desc.biasEpilogue ? bias : 0}})
    if (ptr % kPointerAlignment)
      return fail(std::string(name) + " is not " +
                  std::to_string(kPointerAlignment) + "-byte aligned");

  if (!plan.handle)
    return fail("the plan has no cuBLASLt handle (it was not made by plan())");
  Descriptors descs;
  if (auto err = initDescriptors(*api, desc,
                                 reinterpret_cast<const void *>(bias), descs))
    return err;
  ColumnMajorProblem p = columnMajorProblem(desc);
  auto *first = reinterpret_cast<const void *>(p.swapped ? b : a);
  auto *second = reinterpret_cast<const void *>(p.swapped ? a : b);
  auto *in = reinterpret_cast<const void *>(c);
  auto *out = reinterpret_cast<void *>(d);
  cublasLtMatmulAlgo_t algo;
  std::memcpy(&algo, plan.algo.data(), sizeof(algo));
  // cudaStream_t and CUstream are the same type (CUstream_st *).
  if (auto s = api->matmul(static_cast<cublasLtHandle_t>(plan.handle), &descs.op, &desc.alpha, first,
                           &descs.first, second, &descs.second, &desc.beta,
                           in, &descs.out, out, &descs.out, &algo,
                           reinterpret_cast<void *>(workspace), wsBytes,
                           stream);
      s != CUBLAS_STATUS_SUCCESS)
    return statusError(*api, s, "cublasLtMatmul", desc);
  return rt::Error::success();
}

} // namespace fusec
