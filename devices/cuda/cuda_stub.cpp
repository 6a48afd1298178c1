// Linked when the build has no CUDA compiler: the same API, with no GPUs.
#include "devices/cuda/cuda_info.hpp"

namespace hetstencil {

bool cuda_compiled() { return false; }
int cuda_device_count() { return 0; }
std::vector<GpuInfo> cuda_gpus() { return {}; }
std::vector<std::vector<GpuLink>> cuda_links() { return {}; }

}  // namespace hetstencil
