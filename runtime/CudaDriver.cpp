//===- CudaDriver.cpp - the CUDA Driver API, loaded at run time ----------===//
#include "runtime/CudaDriver.h"

#include "compiler/support/TargetVersion.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <utility>

namespace fusec {
namespace {

/// Two steps so that the argument is macro-expanded (cuMemAlloc ->
/// cuMemAlloc_v2) before it is turned into the symbol's name.
#define FUSEC_STRINGIFY_EXPANDED(x) FUSEC_STRINGIFY(x)
#define FUSEC_STRINGIFY(x) #x

/// Said with every "no GPU here" failure: what still works, what does not.
constexpr const char *kNeedsGpu =
    "running kernels (`fusec run`, `fusec bench`, the API's Program::run) needs a GPU, "
    "while `fusec compile`, `fusec explain` and `fusec eval` work without one";

rt::Error makeError(const std::string &message) { return rt::Error::failure(message); }

/// "a, b, c".
std::string joined(const std::vector<const char *> &names) {
  std::string text;
  for (const char *n : names)
    text += (text.empty() ? "" : ", ") + std::string(n);
  return text;
}

/// A decimal ordinal (surrounding blanks allowed) into `ordinal`.
bool parseOrdinal(const char *text, int &ordinal) {
  char *end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (end == text || errno != 0 || v < 0 || v > 1 << 20)
    return false;
  while (*end == ' ' || *end == '\t' || *end == '\n')
    ++end;
  if (*end)
    return false;
  ordinal = int(v);
  return true;
}

/// "13.0" for 13000.
std::string versionString(int version) {
  return std::to_string(version / 1000) + "." +
         std::to_string((version % 1000) / 10);
}

/// Names CUDA_VISIBLE_DEVICES when it is set: an empty or mistyped value is
/// the usual reason a machine with GPUs shows none.
std::string visibleDevicesNote() {
  const char *visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!visible)
    return "";
  return std::string(" (CUDA_VISIBLE_DEVICES='") + visible + "')";
}

} // namespace

rt::Expected<CudaDriver *> CudaDriver::get() {
  // A function-local static is initialized exactly once even when several
  // threads arrive together; the failure is kept as text because an
  // rt::Error can be reported only once.
  struct Loaded {
    std::unique_ptr<CudaDriver> driver;
    std::string failure;
  };
  static const Loaded loaded = [] {
    Loaded result;
    auto driver = load({"libcuda.so.1"});
    if (driver)
      result.driver = std::move(*driver);
    else
      result.failure = driver.takeError().message();
    return result;
  }();
  if (loaded.driver)
    return loaded.driver.get();
  return makeError(loaded.failure);
}

rt::Expected<std::unique_ptr<CudaDriver>>
CudaDriver::load(const std::vector<std::string> &candidates) {
  std::string what = candidates.size() == 1 ? candidates.front()
                                            : std::string("the CUDA driver");
  auto library = DynamicLibrary::openFirst(candidates, what);
  if (!library)
    return makeError("no NVIDIA driver found (" +
                     library.takeError().message() + "); " + kNeedsGpu);
  std::unique_ptr<CudaDriver> driver(new CudaDriver(std::move(*library)));
  if (rt::Error err = driver->resolveEntryPoints())
    return err;
  if (rt::Error err = driver->initialize())
    return err;
  return driver;
}

rt::Error CudaDriver::resolveEntryPoints() {
  std::vector<const char *> missing;
#define FUSEC_CUDA_DRIVER_RESOLVE(name)                                        \
  {                                                                            \
    const char *symbol = FUSEC_STRINGIFY_EXPANDED(name);                       \
    name = reinterpret_cast<decltype(name)>(library.lookup(symbol));           \
    if (!name)                                                                 \
      missing.push_back(symbol);                                               \
  }
  FUSEC_CUDA_DRIVER_ENTRY_POINTS(FUSEC_CUDA_DRIVER_RESOLVE)
#undef FUSEC_CUDA_DRIVER_RESOLVE
  if (missing.empty())
    return rt::Error::success();

  // An older driver lacks the newest versioned symbols that <cuda.h> maps
  // to (cuEventElapsedTime_v2, say); name the driver and what would fix it.
  std::string found = "an unknown version";
  int version = 0;
  if (cuDriverGetVersion && cuDriverGetVersion(&version) == CUDA_SUCCESS)
    found = "CUDA " + versionString(version);
  return makeError(
      "the NVIDIA driver at " + library.path() + " (" + found +
      ") lacks entry points fusec needs: " + joined(missing) +
      "; fusec is built for CUDA " + versionString(CUDA_VERSION) +
      ", so please install a driver that supports it");
}

rt::Error CudaDriver::initialize() {
  CUresult result = cuInit(0);
  if (result == CUDA_ERROR_NO_DEVICE)
    return makeError("the NVIDIA driver reports no CUDA device" +
                     visibleDevicesNote() + "; " + kNeedsGpu);
  if (result == CUDA_ERROR_STUB_LIBRARY)
    return makeError("no NVIDIA driver found (" + library.path() +
                     " is the CUDA toolkit's stub library, not a driver); " +
                     kNeedsGpu);
  if (rt::Error err = check(result, "cuInit"))
    return err;
  if (rt::Error err =
          check(cuDriverGetVersion(&driverVersion), "cuDriverGetVersion"))
    return err;
  int count = 0;
  if (rt::Error err = check(cuDeviceGetCount(&count), "cuDeviceGetCount"))
    return err;
  if (count == 0)
    return makeError("the NVIDIA driver reports no CUDA device" +
                     visibleDevicesNote() + "; " + kNeedsGpu);
  return rt::Error::success();
}

rt::Error CudaDriver::check(CUresult result, const char *what) const {
  if (result == CUDA_SUCCESS)
    return rt::Error::success();
  const char *name = nullptr;
  const char *description = nullptr;
  if (!cuGetErrorName || cuGetErrorName(result, &name) != CUDA_SUCCESS)
    name = nullptr;
  if (!cuGetErrorString ||
      cuGetErrorString(result, &description) != CUDA_SUCCESS)
    description = nullptr;
  std::string message = std::string(what) + " failed: ";
  message += name ? name : "CUresult " + std::to_string(result);
  if (description)
    message += std::string(" (") + description + ")";
  return makeError(message);
}

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

std::string DeviceInfo::nvrtcArch() const {
  std::string arch = "sm_" + std::to_string(ccMajor) + std::to_string(ccMinor);
  return ccMajor >= 9 ? arch + "a" : arch;
}

bool DeviceInfo::runs(const std::string &arch) const {
  std::optional<TargetVersion> v = parseTarget(arch);
  if (!v || v->major != ccMajor)
    return false;
  return v->specific ? v->minor == ccMinor : v->minor <= ccMinor;
}

namespace {

/// Checks that `ordinal` names a device and returns its handle.
rt::Expected<CUdevice> deviceHandle(CudaDriver &driver, int ordinal) {
  int count = 0;
  if (rt::Error err =
          driver.check(driver.cuDeviceGetCount(&count), "cuDeviceGetCount"))
    return err;
  if (ordinal < 0 || ordinal >= count)
    return makeError("CUDA device " + std::to_string(ordinal) +
                     " does not exist: the driver reports " +
                     std::to_string(count) + " device(s), numbered from 0" +
                     visibleDevicesNote());
  CUdevice device = 0;
  if (rt::Error err =
          driver.check(driver.cuDeviceGet(&device, ordinal), "cuDeviceGet"))
    return err;
  return device;
}

} // namespace

rt::Expected<DeviceInfo> queryDevice(int ordinal) {
  auto driver = CudaDriver::get();
  if (!driver)
    return driver.takeError();
  CudaDriver &drv = **driver;
  auto device = deviceHandle(drv, ordinal);
  if (!device)
    return device.takeError();

  DeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  if (rt::Error err =
          drv.check(drv.cuDeviceGetName(name, sizeof(name) - 1, *device),
                    "cuDeviceGetName"))
    return err;
  info.name = name;
  if (rt::Error err = drv.check(drv.cuDeviceTotalMem(&info.totalMem, *device),
                                  "cuDeviceTotalMem"))
    return err;

  const std::pair<int *, CUdevice_attribute> attributes[] = {
      {&info.smCount, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
      {&info.ccMajor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR},
      {&info.ccMinor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR},
      {&info.maxSmemPerBlockOptin,
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
      {&info.smemPerSm,
       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR},
      {&info.l2Bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE},
      {&info.clockKHz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE},
      {&info.memClockKHz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE},
      {&info.busWidthBits, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH},
  };
  for (const auto &[field, attribute] : attributes)
    if (rt::Error err =
            drv.check(drv.cuDeviceGetAttribute(field, attribute, *device),
                      "cuDeviceGetAttribute"))
      return err;
  return info;
}

rt::Expected<int> selectedDeviceOrdinal() {
  const char *value = std::getenv("FUSEC_DEVICE");
  if (!value || !*value)
    return 0;
  int ordinal = 0;
  if (!parseOrdinal(value, ordinal))
    return makeError(std::string("FUSEC_DEVICE='") + value +
                     "' is not a device ordinal (0, 1, ...)");
  return ordinal;
}

//===----------------------------------------------------------------------===//
// GpuContext
//===----------------------------------------------------------------------===//

rt::Expected<GpuContext> GpuContext::create() {
  auto ordinal = selectedDeviceOrdinal();
  if (!ordinal)
    return ordinal.takeError();
  return create(*ordinal);
}

rt::Expected<GpuContext> GpuContext::create(int ordinal) {
  auto driver = CudaDriver::get();
  if (!driver)
    return driver.takeError();
  CudaDriver &drv = **driver;
  auto device = deviceHandle(drv, ordinal);
  if (!device)
    return device.takeError();
  CUcontext ctx = nullptr;
  if (rt::Error err = drv.check(drv.cuDevicePrimaryCtxRetain(&ctx, *device),
                                  "cuDevicePrimaryCtxRetain"))
    return err;
  // From here the context is owned, so a failure below releases it.
  GpuContext context(&drv, *device, ctx, ordinal);
  if (rt::Error err = context.makeCurrent())
    return err;
  return context;
}

GpuContext::GpuContext(GpuContext &&other) noexcept
    : cudaDriver(other.cudaDriver), dev(other.dev),
      ctx(std::exchange(other.ctx, nullptr)),
      deviceOrdinal(other.deviceOrdinal) {}

GpuContext &GpuContext::operator=(GpuContext &&other) noexcept {
  if (this == &other)
    return *this;
  release();
  cudaDriver = other.cudaDriver;
  dev = other.dev;
  ctx = std::exchange(other.ctx, nullptr);
  deviceOrdinal = other.deviceOrdinal;
  return *this;
}

GpuContext::~GpuContext() { release(); }

rt::Error GpuContext::makeCurrent() const {
  return cudaDriver->check(cudaDriver->cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
}

void GpuContext::release() {
  if (!ctx)
    return;
  // A thread left pointing at a released context would fail its next call
  // with an unhelpful "invalid context"; clear it here while we know.
  CUcontext current = nullptr;
  if (cudaDriver->cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == ctx)
    (void)cudaDriver->cuCtxSetCurrent(nullptr);
  // Nothing can be done about a failure in a destructor; the driver reclaims
  // the context at process exit regardless.
  (void)cudaDriver->cuDevicePrimaryCtxRelease(dev);
  ctx = nullptr;
}

} // namespace fusec
