// The CUDA GPU as a device. Declared without CUDA types, for the backend
// (cuda_backend.cu) and the GPU tests, which are plain C++.
#pragma once

#include <memory>
#include <vector>

#include "devices/device.hpp"

namespace hetstencil {

/// A device on CUDA GPU `gpu` whose host thread is bound to `host_cpus`.
/// own_core: that core is reserved for the thread, so it waits for the GPU by
/// spinning (lowest latency); otherwise it blocks, leaving the core to others.
std::unique_ptr<Device> make_cuda_device(DeviceInfo info, int gpu, std::vector<int> host_cpus, bool own_core);

}  // namespace hetstencil
