//===- DeviceMeasurementsTest.cpp - what fusec bench keeps for compiles ---===//
#include "runtime/DeviceMeasurements.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace fusec;

namespace {

std::string tempPath() {
  llvm::SmallString<128> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("fusec-measured", dir));
  llvm::sys::path::append(dir, "sub", "device-measurements.json");  // save creates "sub"
  return dir.str().str();
}

TEST(DeviceMeasurements, NothingMeasuredIsZero) {
  MeasuredDevice m = loadMeasuredDevice(tempPath(), "h100");
  EXPECT_EQ(m.copyBytesPerSec, 0);
  EXPECT_EQ(m.smCount, 0);
}

TEST(DeviceMeasurements, SavedValuesLoadBackPerProfile) {
  std::string path = tempPath();
  ASSERT_FALSE(bool(saveMeasuredDevice(path, "h100", {2.71e12, 132, "NVIDIA H100", "2026-11-22"})));
  ASSERT_FALSE(bool(saveMeasuredDevice(path, "a100", {1.5e12, 108, "NVIDIA A100", "2026-11-21"})));
  MeasuredDevice h = loadMeasuredDevice(path, "h100");  // kept when a100 was added
  EXPECT_DOUBLE_EQ(h.copyBytesPerSec, 2.71e12);
  EXPECT_EQ(h.smCount, 132);
  EXPECT_EQ(h.deviceName, "NVIDIA H100");
  EXPECT_EQ(h.date, "2026-11-22");
  EXPECT_DOUBLE_EQ(loadMeasuredDevice(path, "a100").copyBytesPerSec, 1.5e12);
  EXPECT_EQ(loadMeasuredDevice(path, "h200").copyBytesPerSec, 0);
}

// The device name and date are printed (explain, bench): a file holding an
// escape sequence or a newline gives them escaped.
TEST(DeviceMeasurements, PrintedFieldsComeBackPrintable) {
  std::string path = tempPath();
  ASSERT_FALSE(bool(saveMeasuredDevice(path, "h100", {2.71e12, 132, "GPU\x1b[2J\n", "2026\\11"})));
  MeasuredDevice m = loadMeasuredDevice(path, "h100");
  EXPECT_EQ(m.deviceName, "GPU\\x1b[2J\\x0a");
  EXPECT_EQ(m.date, "2026\\x5c11");
}

TEST(DeviceMeasurements, ImplausibleValuesAreNotTrusted) {
  std::string path = tempPath();
  ASSERT_FALSE(bool(saveMeasuredDevice(path, "h100", {12.0, -3, "x", "y"})));
  MeasuredDevice m = loadMeasuredDevice(path, "h100");
  EXPECT_EQ(m.copyBytesPerSec, 0);
  EXPECT_EQ(m.smCount, 0);
  // Too fast to be a copy (a hand-edited 1e300 once printed a 300-digit rate).
  ASSERT_FALSE(bool(saveMeasuredDevice(path, "h100", {1e300, 132, "x", "y"})));
  EXPECT_EQ(loadMeasuredDevice(path, "h100").copyBytesPerSec, 0);
  EXPECT_EQ(loadMeasuredDevice(path, "h100").smCount, 132);
}
} // namespace
