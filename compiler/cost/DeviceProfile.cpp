//===- DeviceProfile.cpp - named device profiles --------------------------===//
#include "compiler/cost/DeviceProfile.h"

#include "compiler/support/TargetVersion.h"

#include <algorithm>
#include <cctype>

namespace fusec {

const std::vector<DeviceProfile> &deviceProfiles() {
  // Bandwidths are measured copy rates (read + write), not datasheet peaks: the
  // roofline a memory-bound kernel can actually reach. Launch overhead is what
  // each small kernel costs in a stream of back-to-back launches: 4.2 us on an
  // H100, fitted to short streams of decode-sized kernels (docs/cost-model.md,
  // "Predicted time").
  // fusec's GEMMs are rated separately from cuBLAS: the planner picks between
  // them with these numbers. Compute rates are those of a sustained load: an
  // H100 past its 700 W limit runs at about 1600-1700 MHz, not the 1980 MHz of
  // a first burst, and `fusec bench` times after 0.5 s of warm-up. There
  // cuBLAS runs at ~725 TFLOP/s (8192^3 in 1515 us) and fusec's TMA + wgmma
  // kernel at ~715-740; the fp32 rate and the portable mma.sync kernel (290
  // TFLOP/s at the boost clock) are scaled by the same clock ratio. At the
  // boost clock the wgmma kernel is 1.01x cuBLAS on the largest shapes and
  // 0.87-0.99x on smaller ones (docs/matmul.md, "Where it stands"). Memory
  // rates do not move with the cap: the dot-product kernel for 1-8 rows
  // streams at 86-92% of the copy bandwidth, cuBLAS at ~85%, the portable
  // kernel at 40-77% (decode linears; docs/cost-model.md, "Predicted time").
  // Collectives: NCCL's all-reduce of 8 KB takes 15.5 us inside a CUDA graph
  // on two NVLink-connected H100s (measured in this workplace, issue 35); the
  // link rates are NCCL's usual bus bandwidth on NVLink 4 (H100, H200) and 3
  // (A100) without NVLink SHARP, and PCIe 4 for the L40S: not measured here
  // yet (docs/tensor-parallel.md). fusec's one-shot all-reduce of 8 KB adds
  // 5.4 us to a CUDA graph on two H200s (bench/RESULTS.md, issue 35); the
  // H100's is taken as the same, the A100's a guess.
  static const std::vector<DeviceProfile> profiles = {
      {"h100", "sm_90a", 3.0e12, 725e12, 266e12, 715e12, 0.6, 0.9, 0.85, 50e12, 4.2e-6, 2.6e-6, 132, 50 << 20, 227 << 10, 65536, 360e9, 15.5e-6, 5.4e-6,
       "H100 SXM 80GB: copy 3.0 TB/s and bf16 matmul ~725 TFLOP/s (sustained, power-capped "
       "clock) measured in this workplace (2026-11)"},
      {"h200", "sm_90a", 4.3e12, 790e12, 290e12, 780e12, 0.6, 0.9, 0.85, 60e12, 4.2e-6, 2.6e-6, 132, 60 << 20, 227 << 10, 65536, 360e9, 15.5e-6, 5.4e-6,
       "H200: copy 4.3 TB/s and bf16 matmul ~790 TFLOP/s measured in this workplace "
       "(2026-10)"},
      {"a100", "sm_80", 1.7e12, 280e12, 200e12, 0, 0.6, 0.9, 0.85, 19.5e12, 3.0e-6, 0, 108, 40 << 20, 163 << 10, 65536, 230e9, 15.5e-6, 6e-6,
       "A100 SXM 80GB: datasheet 2.0 TB/s and 312 TFLOP/s, derated to typical achieved rates"},
      {"l40s", "sm_89", 0.8e12, 330e12, 200e12, 0, 0.6, 0.9, 0.85, 90e12, 3.0e-6, 0, 142, 96 << 20, 99 << 10, 65536, 22e9, 20e-6, 0,
       "L40S: datasheet 864 GB/s and 362 TFLOP/s, derated to typical achieved rates"},
  };
  return profiles;
}

const DeviceProfile *findDeviceProfile(const std::string &name) {
  for (const DeviceProfile &p : deviceProfiles())
    if (p.name == name)
      return &p;
  return nullptr;
}

DeviceProfile withMeasurements(DeviceProfile p, const MeasuredDevice &m) {
  if (m.copyBytesPerSec > 0) {
    p.hbmBytesPerSec = m.copyBytesPerSec;
    p.measuredOn = (m.deviceName.empty() ? std::string("this machine") : m.deviceName) +
                   (m.date.empty() ? "" : ", " + m.date);
  }
  if (m.smCount > 0)
    p.smCount = m.smCount;
  return p;
}

std::optional<DeviceProfile> measuredProfile(const std::string &name, const MeasuredDevice &m) {
  if (const DeviceProfile *p = findDeviceProfile(name))
    return withMeasurements(*p, m);
  return std::nullopt;
}

const DeviceProfile &defaultDeviceProfile() { return deviceProfiles().front(); }

const DeviceProfile *profileForDeviceName(const std::string &deviceName) {
  std::string lower(deviceName);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  for (const DeviceProfile &p : deviceProfiles())
    if (lower.find(p.name) != std::string::npos)
      return &p;
  return nullptr;
}

bool isCompileTarget(const std::string &arch) {
  std::optional<TargetVersion> v = parseTarget(arch);
  return v && v->major >= 8 && (!v->specific || v->major >= 9);
}

} // namespace fusec
