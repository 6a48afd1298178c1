// Small helpers shared by the tests.
#pragma once

#include "hetstencil/runtime.hpp"

namespace hetstencil::testing_support {

/// This machine's cores cut into `devices` CPU devices of `threads` workers
/// each, and no GPU.
inline RuntimeOptions cpu_devices(int devices, int threads) {
  RuntimeOptions o;
  o.cpu_devices = devices;
  o.threads_per_device = threads;
  o.devices = "cpu";
  return o;
}

}  // namespace hetstencil::testing_support
