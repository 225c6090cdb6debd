//===- Nccl.cpp - collectives through a dlopen'ed NCCL --------------------===//
#include "runtime/Nccl.h"

#include "runtime/DynamicLibrary.h"

#include <cstdlib>
#include <cstring>

namespace fusec {

// NCCL's C API as nccl.h declares it (stable since 2.0; bfloat16 since 2.10):
// the enumerators are fixed numbers, the communicator an opaque pointer.
namespace {
using ncclResult = int;
enum NcclType : int { kInt8 = 0, kUint8 = 1, kInt32 = 2, kInt64 = 4, kFloat16 = 6,
                      kFloat32 = 7, kBfloat16 = 9 };
enum NcclOp : int { kSum = 0, kMax = 2, kMin = 3 };
struct UniqueId {
  char internal[128];
};
static_assert(sizeof(UniqueId) == sizeof(NcclId::bytes), "ncclUniqueId is 128 bytes");

/// The element type NCCL moves a dtype as (bool as bytes: only gathered).
int ncclType(DType t) {
  switch (t) {
  case DType::F32: return kFloat32;
  case DType::F16: return kFloat16;
  case DType::BF16: return kBfloat16;
  case DType::I32: return kInt32;
  case DType::I64: return kInt64;
  case DType::Bool: return kUint8;
  }
  return kUint8;
}
} // namespace

struct Nccl::Api {
  ncclResult (*getVersion)(int *);
  ncclResult (*getUniqueId)(UniqueId *);
  ncclResult (*commInitRank)(void **, int, UniqueId, int);
  ncclResult (*commDestroy)(void *);
  const char *(*getErrorString)(ncclResult);
  ncclResult (*allReduce)(const void *, void *, size_t, int, int, void *, CUstream);
  ncclResult (*allGather)(const void *, void *, size_t, int, void *, CUstream);
  ncclResult (*reduceScatter)(const void *, void *, size_t, int, int, void *, CUstream);

  rt::Error check(ncclResult r, const char *what) const {
    if (r == 0)
      return rt::Error::success();
    return rt::errorf("NCCL %s failed: %s (ncclResult %d)", what,
                      getErrorString ? getErrorString(r) : "?", r);
  }
};

rt::Expected<Nccl *> Nccl::get() {
  // Built once, thread-safely; never destroyed (NCCL keeps threads that do
  // not survive dlclose), like the CUDA driver and cuBLASLt.
  struct Loaded {
    Nccl *instance = nullptr;
    std::string error;
  };
  static const Loaded loaded = [] {
    Loaded result;
    // FUSEC_NCCL names the library where the loader would not find it (a
    // Python environment's nvidia-nccl wheel, say).
    std::vector<std::string> candidates;
    if (const char *given = std::getenv("FUSEC_NCCL"); given && *given)
      candidates.push_back(given);
    candidates.push_back("libnccl.so.2");
    if (const char *home = std::getenv("CUDA_HOME"); home && *home)
      candidates.push_back(std::string(home) + "/lib64/libnccl.so.2");
    candidates.push_back("/usr/local/cuda/lib64/libnccl.so.2");
    auto lib = DynamicLibrary::openFirst(candidates, "NCCL (libnccl.so.2), which a program "
                                                     "split over ranks needs");
    if (!lib) {
      result.error = lib.takeError().message();
      return result;
    }
    auto *api = new Api();
    auto need = [&](const char *name, auto &fn) -> bool {
      auto sym = lib->require(name);
      if (!sym) {
        result.error = sym.takeError().message();
        return false;
      }
      std::memcpy(&fn, &*sym, sizeof(void *));
      return true;
    };
    if (!need("ncclGetVersion", api->getVersion) || !need("ncclGetUniqueId", api->getUniqueId) ||
        !need("ncclCommInitRank", api->commInitRank) ||
        !need("ncclCommDestroy", api->commDestroy) ||
        !need("ncclGetErrorString", api->getErrorString) ||
        !need("ncclAllReduce", api->allReduce) || !need("ncclAllGather", api->allGather) ||
        !need("ncclReduceScatter", api->reduceScatter)) {
      delete api;
      return result;
    }
    int version = 0;
    if (rt::Error err = api->check(api->getVersion(&version), "ncclGetVersion")) {
      result.error = err.message();
      delete api;
      return result;
    }
    // bfloat16 and the numbering above are NCCL 2.10's and later.
    if (version < 21000) {
      result.error = "NCCL " + std::to_string(version) + " at " + lib->path() +
                     " is older than 2.10, which fusec needs";
      delete api;
      return result;
    }
    auto *nccl = new Nccl();
    nccl->api = api;
    nccl->libraryVersion = version;
    nccl->loadedFrom = lib->path();
    result.instance = nccl;
    return result;
  }();
  if (loaded.instance)
    return loaded.instance;
  return rt::Error::failure(loaded.error);
}

rt::Expected<NcclId> Nccl::uniqueId() const {
  UniqueId id;
  if (rt::Error err = api->check(api->getUniqueId(&id), "ncclGetUniqueId"))
    return std::move(err);
  NcclId out;
  std::memcpy(out.bytes.data(), id.internal, sizeof id.internal);
  return out;
}

rt::Expected<NcclComm> Nccl::communicator(const NcclId &id, int ranks, int rank) const {
  if (ranks < 1 || rank < 0 || rank >= ranks)
    return rt::errorf("NCCL: rank %d of %d ranks", rank, ranks);
  UniqueId raw;
  std::memcpy(raw.internal, id.bytes.data(), sizeof raw.internal);
  void *comm = nullptr;
  if (rt::Error err = api->check(api->commInitRank(&comm, ranks, raw, rank), "ncclCommInitRank"))
    return std::move(err);
  return comm;
}

void Nccl::destroy(NcclComm comm) const {
  if (comm)
    (void)api->commDestroy(comm);
}

rt::Error Nccl::enqueue(const PlanCollective &c, DType dtype, int64_t inBytes, CUdeviceptr in,
                        CUdeviceptr out, NcclComm comm, CUstream stream) const {
  const size_t count = size_t(inBytes / dtypeBytes(dtype));
  const int type = ncclType(dtype);
  const void *src = reinterpret_cast<const void *>(in);
  void *dst = reinterpret_cast<void *>(out);
  if (c.op == "all_reduce") {
    const int op = c.reduce == "max" ? kMax : c.reduce == "min" ? kMin : kSum;
    return api->check(api->allReduce(src, dst, count, type, op, comm, stream), "ncclAllReduce");
  }
  if (c.op == "all_gather")
    return api->check(api->allGather(src, dst, count, type, comm, stream), "ncclAllGather");
  if (c.op == "reduce_scatter")
    return api->check(api->reduceScatter(src, dst, count / size_t(c.ranks), type, kSum, comm,
                                         stream),
                      "ncclReduceScatter");
  return rt::errorf("NCCL: unknown collective '%s'", c.op.c_str());
}

} // namespace fusec
