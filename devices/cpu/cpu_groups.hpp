// Which cores make up each CPU device.
#pragma once

#include <vector>

#include "devices/topology.hpp"
#include "hetstencil/device_info.hpp"

namespace hetstencil {

struct CpuDeviceSpec {
  DeviceInfo info;                            ///< name, NUMA node, cores, description
  std::vector<std::vector<int>> worker_cpus;  ///< OS processor indices each worker is bound to
};

/// count == 0: one device per NUMA node that has cores (one per socket on most
/// machines). count > 0: the cores in topology order cut into `count` groups
/// of consecutive cores (a core serves several devices when count exceeds the
/// cores). threads == 0: one worker per core of the device; more workers than
/// cores are placed round-robin. Binding is left out for topologies that are
/// not this machine's.
std::vector<CpuDeviceSpec> cpu_device_specs(const Topology& topology, int count, int threads);

}  // namespace hetstencil
