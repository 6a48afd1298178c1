// Linked when the build has no CUDA compiler: the public API is the same, with
// no GPUs.
#include "devices/cuda/cuda_info.hpp"

namespace hetstencil {

int cuda_device_count() { return 0; }
bool cuda_compiled() { return false; }

}  // namespace hetstencil
