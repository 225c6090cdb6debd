//===- LastBlock.cpp - the last of a split's blocks combines its partials -===//
#include "compiler/codegen/LastBlock.h"

namespace fusec::codegen::detail {

std::string lastBlockHandshake(const std::string &in, const std::string &counter,
                               const std::string &total, const std::string &leave,
                               const std::string &sync, const std::string &leader) {
  // The barrier orders every thread's partials before the leader's fence,
  // which is cumulative: one fence a block publishes them all, and one
  // after the count makes the other blocks' visible to the threads the
  // second barrier releases. (A fence in every thread costs a round trip
  // to the memory system each, under the whole GPU's traffic.)
  std::string s;
  s += in + sync + "  // this block's partials are stored\n";
  s += in + "if (" + leader + ") {\n";
  s += in + "  __threadfence();  // ... and visible before the block is counted\n";
  s += in + "  unsigned *const fz_count = " + counter + ";\n";
  s += in + "  fz_last = atomicAdd(fz_count, 1u) == " + total + " - 1;\n";
  s += in + "  if (fz_last) *fz_count = 0;  // ready for the next launch\n";
  s += in + "  __threadfence();  // the other blocks' partials, before they are read\n";
  s += in + "}\n";
  s += in + sync + "\n";
  if (!leave.empty())
    s += in + "if (!fz_last) " + leave + "\n";
  return s;
}

} // namespace fusec::codegen::detail
