//===- SharedLaunch.h - independent small kernels in one launch -----------===//
#pragma once

#include "runtime/PlanDesc.h"

namespace fusec {

/// Joins each pair of neighbouring kernel steps that are independent (neither
/// reads or writes what the other writes) and each predicted at most
/// `smallUs` into one launch, their grids side by side along x
/// (SharedLaunch.cpp says which kernels qualify).
void shareLaunches(PlanDesc &plan, double smallUs = 10.0);

} // namespace fusec
