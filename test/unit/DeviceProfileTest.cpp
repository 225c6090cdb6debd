//===- DeviceProfileTest.cpp - profiles with this machine's measurements ---===//
#include "compiler/cost/DeviceProfile.h"

#include <gtest/gtest.h>

using namespace fusec;

namespace {

TEST(DeviceProfile, ProfileTakesOnlyWhatWasMeasured) {
  DeviceProfile p = *findDeviceProfile("h100");
  DeviceProfile same = withMeasurements(p, {});
  EXPECT_EQ(same.hbmBytesPerSec, p.hbmBytesPerSec);
  EXPECT_EQ(same.smCount, p.smCount);
  EXPECT_TRUE(same.measuredOn.empty());
  DeviceProfile m = withMeasurements(p, {2.5e12, 114, "NVIDIA H100 PCIe", "2026-11-22"});
  EXPECT_DOUBLE_EQ(m.hbmBytesPerSec, 2.5e12);
  EXPECT_EQ(m.smCount, 114);
  EXPECT_EQ(m.measuredOn, "NVIDIA H100 PCIe, 2026-11-22");
  EXPECT_EQ(m.tensorFlopsPerSec, p.tensorFlopsPerSec);  // not measured: the table's
}

} // namespace
