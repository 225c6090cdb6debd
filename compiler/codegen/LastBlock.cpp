//===- LastBlock.cpp - the last of a split's blocks combines its partials -===//
#include "compiler/codegen/LastBlock.h"

namespace fusec::codegen::detail {

std::string lastBlockHandshake(const std::string &in, const std::string &counter,
                               const std::string &total, const std::string &leave) {
  std::string s;
  s += in + "__threadfence();  // this block's partials, before it is counted\n";
  s += in + "__syncthreads();\n";
  s += in + "if (threadIdx.x == 0) {\n";
  s += in + "  unsigned *const fz_count = " + counter + ";\n";
  s += in + "  fz_last = atomicAdd(fz_count, 1u) == " + total + " - 1;\n";
  s += in + "  if (fz_last) *fz_count = 0;  // ready for the next launch\n";
  s += in + "}\n";
  s += in + "__syncthreads();\n";
  if (!leave.empty())
    s += in + "if (!fz_last) " + leave + "\n";
  s += in + "__threadfence();  // the other blocks' partials, before they are read\n";
  return s;
}

} // namespace fusec::codegen::detail
