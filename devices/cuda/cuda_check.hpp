// The one CUDA error check: a failing call becomes an exception that names the
// call, the device and what it was doing.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "hetstencil/error.hpp"

namespace hetstencil {

class CudaError : public Error {
 public:
  using Error::Error;
};

inline void cuda_check(cudaError_t rc, const char* call, const std::string& context, const char* file, int line) {
  if (rc == cudaSuccess) return;
  throw CudaError(context + ": " + call + " failed: " + cudaGetErrorName(rc) + " (" + cudaGetErrorString(rc) + ")",
                  file, line);
}

}  // namespace hetstencil

/// HETSTENCIL_CUDA_CHECK(cudaMalloc(&p, n), "gpu0: allocating the slab")
#define HETSTENCIL_CUDA_CHECK(call, context) ::hetstencil::cuda_check((call), #call, (context), __FILE__, __LINE__)
