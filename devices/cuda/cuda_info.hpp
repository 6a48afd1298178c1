// What the CUDA runtime says about this machine's GPUs: without a driver or
// GPU, there are none.
#pragma once

#include <vector>

#include "hetstencil/topology.hpp"

namespace hetstencil {

/// Number of CUDA GPUs visible to this process (0 without driver or GPU).
int cuda_device_count();

/// The CUDA driver's version (e.g. 13000), 0 without a driver.
int cuda_driver_version();

/// Each GPU's identity and size; numa and package are left unknown (-1) for the
/// topology to fill in from the PCI bus id.
std::vector<GpuInfo> cuda_gpus();

/// links[a][b] for every pair of GPUs: peer access, CUDA's performance rank,
/// and the link kind (NVLink where peer atomics are native, PCIe otherwise).
std::vector<std::vector<GpuLink>> cuda_links();

}  // namespace hetstencil
