//===- ProgramExplanation.h - a compiled program's explanation ------------===//
#pragma once

#include "compiler/pipeline/Explain.h"
#include "include/fusec/fusec.h"

#include <string>
#include <vector>

namespace fusec::cli {

/// `fusec explain`'s explanation of a compiled program: its fused module's
/// kernels with what the plan adds (sizes bound, shared launches, whether
/// launches overlap, each kernel's schedule). `fusec bench` prices a plan
/// with the same whole-graph figure.
Explanation explainProgram(Program &program, const std::vector<std::string> &bind);

} // namespace fusec::cli
