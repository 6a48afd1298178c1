// What the GPU tests of stencils share: the runtime on named devices, and the
// device sets this machine's GPUs allow.
#pragma once

#include <string>
#include <vector>

#include "devices/cuda/cuda_info.hpp"
#include "hetstencil/runtime.hpp"

namespace hetstencil::testing_support {

inline RuntimeOptions on(const std::string& devices) {
  RuntimeOptions o;
  o.devices = devices;
  return o;
}

// A GPU alone and beside a CPU device; with two GPUs, the two, and a CPU device between them.
inline std::vector<std::string> device_sets() {
  std::vector<std::string> sets = {"gpu0", "cpu0,gpu0"};
  if (cuda_device_count() >= 2) sets.insert(sets.end(), {"gpu0,gpu1", "gpu0,cpu0,gpu1"});
  return sets;
}

}  // namespace hetstencil::testing_support
