//===- SharedLaunch.h - independent small kernels in one launch -----------===//
#pragma once

#include "compiler/plan/PlanDesc.h"

namespace fusec {

/// Joins each pair of neighbouring kernel steps that are independent (neither
/// reads or writes what the other writes) and each predicted at most
/// `smallUs` into one launch, their grids side by side along x
/// (SharedLaunch.cpp says which kernels qualify).
void shareLaunches(PlanDesc &plan, double smallUs = 10.0);

/// How kernel `name` of the plan runs: its step's schedule, or, where it
/// shares a launch, its own part of that launch's schedule. Empty when no
/// kernel step has that name (a library call).
std::string kernelSchedule(const PlanDesc &plan, const std::string &name);

} // namespace fusec
