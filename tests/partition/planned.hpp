// A plan's devices as the model takes them, for tests that price it again.
#pragma once

#include <vector>

#include "partition/planner.hpp"

namespace hetstencil::testing_support {

/// Part k of `plan` (whose parts index `candidates`) with the rows it got and
/// what the planner sized it for.
inline std::vector<PlannedDevice> planned_of(const Plan& plan, const std::vector<Candidate>& candidates) {
  std::vector<PlannedDevice> out;
  for (std::size_t k = 0; k < plan.parts.size(); ++k) {
    const Candidate& c = candidates.at(plan.parts[k].device);
    out.push_back({c.name, c.kind, plan.parts[k].rows, plan.prediction->devices.at(k).sized_slower});
  }
  return out;
}

}  // namespace hetstencil::testing_support
