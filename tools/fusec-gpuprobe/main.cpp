//===- main.cpp - fusec-gpuprobe: measure the numbers the cost model uses -===//
//
// The cost model predicts max(bytes / BW, flops / peak) + launches x overhead.
// This tool measures those three quantities on the GPU at hand, so a device
// profile can be filled from the machine rather than from a data sheet:
//
//   bandwidth  cuMemcpyDtoDAsync of one buffer into another, counted as read +
//              write (2 x size), median of 20 event-timed copies after 3
//              warm-ups;
//   peak       a bf16 8192^3 matmul through cuBLASLt on random data (tensor
//              cores draw less power on zeros, which would flatter the rate);
//   overhead   a 4-byte cuMemsetD32Async, as a proxy for a kernel launch: the
//              probe compiles no kernels, so it times the cheapest operation
//              the driver enqueues, both as host cost per call and as stream
//              time per operation.
//
// Usage: fusec-gpuprobe [--json] [--size-mib N]
//
//===----------------------------------------------------------------------===//
#include "compiler/support/DType.h"
#include "runtime/CublasLt.h"
#include "runtime/CudaDriver.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>
#include "compiler/support/LlvmError.h"

using namespace fusec;

namespace {

constexpr int kWarmups = 3;
constexpr int kTimed = 20;

struct Options {
  bool json = false;
  int64_t sizeMiB = 1024;
};

/// Errors may span lines (a library search lists every candidate); the probe
/// promises one line.
std::string oneLine(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

std::optional<Options> parseArgs(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--json") {
      options.json = true;
      continue;
    }
    if (arg == "--size-mib" && i + 1 < argc) {
      if (!llvm::to_integer(argv[++i], options.sizeMiB, 10) ||
          options.sizeMiB < 1)
        return std::nullopt;
      continue;
    }
    return std::nullopt;
  }
  return options;
}

/// One device allocation, freed when it goes out of scope.
class DeviceBuffer {
public:
  DeviceBuffer(CudaDriver &driver, CUdeviceptr ptr) : driver(&driver), ptr(ptr) {}
  DeviceBuffer(DeviceBuffer &&other) noexcept
      : driver(other.driver), ptr(std::exchange(other.ptr, 0)) {}
  DeviceBuffer(const DeviceBuffer &) = delete;
  ~DeviceBuffer() {
    if (ptr)
      driver->cuMemFree(ptr);
  }
  static llvm::Expected<DeviceBuffer> allocate(CudaDriver &driver,
                                               size_t bytes) {
    CUdeviceptr ptr = 0;
    if (auto err = driver.check(driver.cuMemAlloc(&ptr, bytes),
                                "cuMemAlloc"))
      return std::move(err);
    return DeviceBuffer(driver, ptr);
  }
  CUdeviceptr get() const { return ptr; }

private:
  CudaDriver *driver;
  CUdeviceptr ptr;
};

/// A stream with two events, for timing work enqueued on it.
struct Timer {
  CudaDriver &driver;
  CUstream stream = nullptr;
  CUevent start = nullptr, stop = nullptr;

  explicit Timer(CudaDriver &driver) : driver(driver) {}
  ~Timer() {
    if (start)
      driver.cuEventDestroy(start);
    if (stop)
      driver.cuEventDestroy(stop);
    if (stream)
      driver.cuStreamDestroy(stream);
  }
  llvm::Error init() {
    if (auto err = driver.check(
            driver.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
            "cuStreamCreate"))
      return err;
    if (auto err = driver.check(driver.cuEventCreate(&start, CU_EVENT_DEFAULT),
                                "cuEventCreate"))
      return err;
    return driver.check(driver.cuEventCreate(&stop, CU_EVENT_DEFAULT),
                        "cuEventCreate");
  }

  /// Milliseconds `work` takes on the stream (after `work` enqueues it).
  llvm::Expected<float> time(const std::function<llvm::Error()> &work) {
    if (auto err = driver.check(driver.cuEventRecord(start, stream),
                                "cuEventRecord"))
      return std::move(err);
    if (auto err = work())
      return std::move(err);
    if (auto err = driver.check(driver.cuEventRecord(stop, stream),
                                "cuEventRecord"))
      return std::move(err);
    if (auto err = driver.check(driver.cuEventSynchronize(stop),
                                "cuEventSynchronize"))
      return std::move(err);
    float ms = 0;
    if (auto err = driver.check(driver.cuEventElapsedTime(&ms, start, stop),
                                "cuEventElapsedTime"))
      return std::move(err);
    return ms;
  }

  /// Median of kTimed runs of `work` after kWarmups untimed ones.
  llvm::Expected<float> median(const std::function<llvm::Error()> &work) {
    std::vector<float> samples;
    for (int i = 0; i < kWarmups + kTimed; ++i) {
      auto ms = time(work);
      if (!ms)
        return ms.takeError();
      if (i >= kWarmups)
        samples.push_back(*ms);
    }
    std::nth_element(samples.begin(), samples.begin() + kTimed / 2,
                     samples.end());
    return samples[kTimed / 2];
  }
};

llvm::Expected<llvm::json::Object> measureCopy(CudaDriver &driver, Timer &timer,
                                               int64_t sizeMiB) {
  size_t bytes = size_t(sizeMiB) << 20;
  auto src = DeviceBuffer::allocate(driver, bytes);
  if (!src)
    return src.takeError();
  auto dst = DeviceBuffer::allocate(driver, bytes);
  if (!dst)
    return dst.takeError();
  if (auto err = driver.check(
          driver.cuMemsetD8Async(src->get(), 0x5a, bytes, timer.stream),
          "cuMemsetD8Async"))
    return std::move(err);
  auto ms = timer.median([&] {
    return driver.check(
        driver.cuMemcpyDtoDAsync(dst->get(), src->get(), bytes, timer.stream),
        "cuMemcpyDtoDAsync");
  });
  if (!ms)
    return ms.takeError();
  double counted = 2.0 * double(bytes);
  return llvm::json::Object{
      {"method", "cuMemcpyDtoDAsync"},
      {"buffer_bytes", int64_t(bytes)},
      {"counted_bytes", int64_t(counted)},
      {"median_ms", *ms},
      {"gb_per_s", counted / (*ms * 1e-3) / 1e9},
  };
}

/// Random bf16 values of magnitude [0.5, 1) and random sign, built directly
/// as bit patterns (exponent 126) so that 2 x 64 Mi values take no time.
std::vector<uint16_t> randomBF16(size_t count, uint64_t seed) {
  std::vector<uint16_t> bits(count);
  uint64_t state = seed;
  for (uint16_t &b : bits) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    b = uint16_t(((state >> 20) & 0x8000) | (126u << 7) | (state & 0x7f));
  }
  return bits;
}

llvm::Expected<llvm::json::Object> measureMatmul(CudaDriver &driver,
                                                 Timer &timer) {
  constexpr int64_t n = 8192;
  constexpr size_t kWorkspace = size_t(32) << 20;
  auto lt = CublasLt::get();
  if (!lt)
    return lt.takeError();
  MatmulDesc desc;
  desc.dtype = DType::BF16;
  desc.a = desc.b = desc.c = MatrixLayout{n, n, n};
  auto plan = (*lt)->plan(desc, kWorkspace);
  if (!plan)
    return plan.takeError();

  size_t bytes = size_t(n * n) * sizeof(uint16_t);
  std::vector<DeviceBuffer> buffers;
  for (size_t size : {bytes, bytes, bytes, std::max<size_t>(kWorkspace, 1)}) {
    auto buffer = DeviceBuffer::allocate(driver, size);
    if (!buffer)
      return buffer.takeError();
    buffers.push_back(std::move(*buffer));
  }
  for (int i = 0; i < 2; ++i) {
    std::vector<uint16_t> host = randomBF16(size_t(n * n), 0x9e3779b9 + i);
    if (auto err = driver.check(
            driver.cuMemcpyHtoD(buffers[i].get(), host.data(), bytes),
            "cuMemcpyHtoD"))
      return std::move(err);
  }
  auto ms = timer.median([&] {
    return (*lt)->run(*plan, buffers[0].get(), buffers[1].get(),
                      buffers[2].get(), 0, buffers[3].get(), kWorkspace,
                      timer.stream);
  });
  if (!ms)
    return ms.takeError();
  double flops = 2.0 * double(n) * double(n) * double(n);
  return llvm::json::Object{
      {"library", (*lt)->libraryInfo()},
      {"problem", CublasLt::describe(desc)},
      {"m", n},
      {"n", n},
      {"k", n},
      {"workspace_bytes", int64_t(plan->workspaceBytes)},
      {"median_ms", *ms},
      {"tflops", flops / (*ms * 1e-3) / 1e12},
  };
}

llvm::Expected<llvm::json::Object> measureLaunchProxy(CudaDriver &driver,
                                                      Timer &timer) {
  constexpr int kOps = 1000;
  auto target = DeviceBuffer::allocate(driver, 4);
  if (!target)
    return target.takeError();
  auto enqueueAll = [&]() -> llvm::Error {
    for (int i = 0; i < kOps; ++i)
      if (auto err = driver.check(
              driver.cuMemsetD32Async(target->get(), i, 1, timer.stream),
              "cuMemsetD32Async"))
        return err;
    return llvm::Error::success();
  };
  // Host cost per call: enqueue only; the stream drains afterwards.
  std::vector<double> hostUs;
  for (int round = 0; round < kWarmups + kTimed; ++round) {
    auto begin = std::chrono::steady_clock::now();
    if (auto err = enqueueAll())
      return std::move(err);
    auto end = std::chrono::steady_clock::now();
    if (auto err = driver.check(driver.cuStreamSynchronize(timer.stream),
                                "cuStreamSynchronize"))
      return std::move(err);
    if (round >= kWarmups)
      hostUs.push_back(
          std::chrono::duration<double, std::micro>(end - begin).count() /
          kOps);
  }
  std::nth_element(hostUs.begin(), hostUs.begin() + kTimed / 2, hostUs.end());
  // Stream time per operation, back to back: what a chain of tiny kernels
  // costs beyond their own work.
  auto ms = timer.median(enqueueAll);
  if (!ms)
    return ms.takeError();
  return llvm::json::Object{
      {"method", "cuMemsetD32Async of 4 bytes (proxy for a kernel launch)"},
      {"ops_per_sample", kOps},
      {"host_enqueue_us", hostUs[kTimed / 2]},
      {"stream_us_per_op", *ms * 1e3 / kOps},
  };
}

/// A measurement that failed is reported in place, so one missing library
/// (cuBLASLt) does not hide the other numbers.
llvm::json::Value orError(llvm::Expected<llvm::json::Object> result) {
  if (result)
    return std::move(*result);
  return llvm::json::Object{
      {"error", oneLine(llvm::toString(result.takeError()))}};
}

void printText(const llvm::json::Object &report) {
  // Sections in a fixed order and keys sorted: llvm::json::Object is a hash
  // map, and the text should read the same on every run.
  for (const char *section : {"device", "copy", "matmul", "launch_proxy"}) {
    const llvm::json::Object *fields = report.getObject(section);
    if (!fields)
      continue;
    llvm::outs() << section << ":\n";
    std::vector<std::string> keys;
    for (const auto &entry : *fields)
      keys.push_back(entry.first.str());
    std::sort(keys.begin(), keys.end());
    for (const std::string &key : keys)
      llvm::outs() << llvm::formatv("  {0,-18} {1}\n", key,
                                    *fields->get(key));
  }
}

} // namespace

int main(int argc, char **argv) {
  auto options = parseArgs(argc, argv);
  if (!options) {
    llvm::errs() << "usage: fusec-gpuprobe [--json] [--size-mib N]\n";
    return 2;
  }
  auto context = GpuContext::create();
  if (!context) {
    llvm::errs() << "fusec-gpuprobe: no GPU: "
                 << oneLine(llvm::toString(context.takeError())) << "\n";
    return 1;
  }
  CudaDriver &driver = context->driver();
  auto info = queryDevice(context->ordinal());
  if (!info) {
    llvm::errs() << "fusec-gpuprobe: "
                 << oneLine(llvm::toString(info.takeError())) << "\n";
    return 1;
  }
  Timer timer(driver);
  if (auto err = timer.init()) {
    llvm::errs() << "fusec-gpuprobe: " << oneLine(llvm::toString(std::move(err)))
                 << "\n";
    return 1;
  }

  llvm::json::Object report{
      {"device",
       llvm::json::Object{
           {"name", info->name},
           {"ordinal", info->ordinal},
           {"compute_capability",
            std::to_string(info->ccMajor) + "." + std::to_string(info->ccMinor)},
           {"sm_count", info->smCount},
           {"l2_bytes", info->l2Bytes},
           {"total_mem_bytes", int64_t(info->totalMem)},
           {"driver_cuda_version", driver.version()},
       }},
      {"copy", orError(measureCopy(driver, timer, options->sizeMiB))},
      {"matmul", orError(measureMatmul(driver, timer))},
      {"launch_proxy", orError(measureLaunchProxy(driver, timer))},
  };
  if (options->json) {
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(report)))
                 << "\n";
    return 0;
  }
  printText(report);
  return 0;
}
