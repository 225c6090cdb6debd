//===- PlanJson.h - a plan as JSON, and back, checked ---------------------===//
//
// How an artifact (runtime/ArtifactFile.h) holds a plan. Every field of
// PlanDesc is written except the kernels' texts: a kernel names its body by
// number (`bodies` holds each distinct source once). Reading checks more than
// the types: every buffer, argument and tensor-map index in range, every
// temporary inside the arena, launch shapes the driver can take, so that a
// damaged plan is an error naming the field instead of a wild address.
// Without LLVM: the runtime reads plans.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/plan/PlanDesc.h"
#include "compiler/support/Error.h"

#include <nlohmann/json.hpp>

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace fusec {

/// `plan` as JSON; `bodies` receives each distinct kernel source once, in
/// kernelBodies(plan).firstStep order (the kernels refer to them by index).
nlohmann::json planToJson(const PlanDesc &plan, std::vector<std::string> &bodies);

/// The plan `j` describes, its kernels' sources taken from `bodies` (each
/// distinct, as planToJson gives them). `where` names the document for
/// messages.
rt::Expected<PlanDesc> planFromJson(const nlohmann::json &j, const std::vector<std::string> &bodies,
                                    const std::string &where);

/// `j` as an integer of type T: a JSON integer (not a float, which would
/// convert out of range) within T's range.
template <typename T>
inline T jsonInteger(const nlohmann::json &j) {
  if (j.is_number_unsigned()) {
    uint64_t v = j.get<uint64_t>();
    if (v <= uint64_t(std::numeric_limits<T>::max()))
      return T(v);
  } else if (j.is_number_integer()) {
    int64_t v = j.get<int64_t>();
    if (v >= int64_t(std::numeric_limits<T>::min()) &&
        (v < 0 || uint64_t(v) <= uint64_t(std::numeric_limits<T>::max())))
      return T(v);
  } else {
    throw std::runtime_error("expected an integer, found " + std::string(j.type_name()) + " " +
                             j.dump().substr(0, 40));
  }
  throw std::runtime_error("integer " + j.dump() + " out of range");
}

/// A JSON library exception's text without its "[json.exception...] " tag.
std::string jsonWhy(const std::exception &e);

/// The checks planFromJson makes after reading (exposed for tests).
rt::Error checkPlan(const PlanDesc &plan, const std::string &where);

} // namespace fusec
