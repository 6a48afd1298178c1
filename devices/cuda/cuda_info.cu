#include <cuda_runtime.h>

#include <string>

#include "devices/cuda/cuda_info.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {

int cuda_device_count() {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  // No driver or no device means zero GPUs, not a failure.
  if (rc == cudaErrorNoDevice || rc == cudaErrorInsufficientDriver) {
    (void)cudaGetLastError();
    return 0;
  }
  if (rc != cudaSuccess) {
    HETSTENCIL_THROW(Error, std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(rc));
  }
  return count;
}

bool cuda_compiled() { return true; }

}  // namespace hetstencil
