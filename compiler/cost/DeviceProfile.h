//===- DeviceProfile.h - the numbers the cost model predicts from ---------===//
//
// A profile is data: bandwidth, math rates, launch overhead, on-chip sizes.
// Named entries come from measurements where we have them (see the table in
// DeviceProfile.cpp); `fusec bench` replaces them with values measured on the
// GPU at hand.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fusec {

struct DeviceProfile {
  std::string name;           ///< "h100"
  std::string arch;           ///< NVRTC target, "sm_90a"
  double hbmBytesPerSec;      ///< device-to-device copy, bytes read + written per second
  double tensorFlopsPerSec;   ///< dense bf16/f16 matmul rate (fp32 accumulate), cuBLAS
  double gemmFlopsPerSec;     ///< the same for fusec's portable GEMM (mma.sync, GemmKernel.cpp)
  double wgmmaFlopsPerSec;    ///< and for its Hopper GEMM (TMA + wgmma, WgmmaGemm.cpp); 0: none
  /// The fraction of the copy bandwidth fusec's GEMM streams operands at when
  /// memory-bound (decode shapes); cuBLAS is taken to reach it fully.
  double gemmBandwidthFraction;
  /// The same for its dot-product kernel of 1-8 rows (decode).
  double gemvBandwidthFraction;
  /// The fraction cuBLAS reaches on memory-bound (decode) matmuls.
  double libraryBandwidthFraction;
  double fp32FlopsPerSec;     ///< CUDA-core fp32 rate (FMA = 2 flops)
  double launchSeconds;       ///< cost of one kernel launch in a stream of launches
  /// Where launches overlap (sm_90's programmatic dependent launch: a kernel
  /// is launched as the previous one's blocks exit), the least one kernel
  /// after the first adds to a chain of them: a kernel adds the larger of its
  /// work and this, its launch hidden (Explanation::predictedUs). 0: no overlap.
  double chainedLaunchSeconds;
  int smCount;
  int64_t l2Bytes;
  int64_t smemPerBlock;       ///< opt-in maximum dynamic shared memory per block
  int64_t registersPerSm;     ///< 32-bit registers
  /// GPU-to-GPU bus bandwidth NCCL's collectives reach between GPUs of one
  /// host (NVLink, else PCIe), bytes a rank sends per second, and the
  /// least one collective takes (NCCL's latency, in a CUDA graph).
  double linkBytesPerSec;
  double collectiveSeconds;
  /// The least a one-shot all-reduce over peer memory takes (its launch and
  /// the flag round trip between GPUs, in a CUDA graph); 0 where GPUs do not
  /// reach each other's memory (families/Collective.cpp).
  double peerCollectiveSeconds;
  std::string source;         ///< where the numbers come from
  /// Where and when `fusec bench` measured the copy bandwidth; empty: the table's.
  std::string measuredOn = {};
};

/// What `fusec bench` measured on the GPU at hand (runtime/DeviceMeasurements):
/// compiles for that profile predict with these instead of the table's.
struct MeasuredDevice {
  double copyBytesPerSec = 0;  ///< 0: not measured
  int smCount = 0;             ///< 0: not known
  std::string deviceName, date;
};

/// `p` with the measured values that are present; `measuredOn` says so.
DeviceProfile withMeasurements(DeviceProfile p, const MeasuredDevice &m);

/// The profile named `name` with this machine's measurements; nullopt for an
/// unknown name.
std::optional<DeviceProfile> measuredProfile(const std::string &name, const MeasuredDevice &m);

/// The named profiles ("h100", "h200", "a100", "l40s").
const std::vector<DeviceProfile> &deviceProfiles();
/// A named profile, or nullptr.
const DeviceProfile *findDeviceProfile(const std::string &name);
/// The profile used when none is named and no GPU is present.
const DeviceProfile &defaultDeviceProfile();
/// The profile whose name best matches a device name such as "NVIDIA H100 80GB HBM3".
const DeviceProfile *profileForDeviceName(const std::string &deviceName);

/// Whether `arch` is an NVRTC target fusec generates kernels for:
/// "sm_<major><minor>" from sm_80 on, with the architecture-specific "a"
/// from sm_90a on.
bool isCompileTarget(const std::string &arch);

} // namespace fusec
