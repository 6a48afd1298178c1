// What the GPU benchmarks and calibration time their kernels with: data that
// times as real data does, and a median of GPU-timed repetitions.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "devices/cuda/cuda_check.hpp"
#include "devices/cuda/cuda_resources.hpp"

namespace hetstencil::cuda {

// Values in [0.5, 1.5) from a hash of the index: never zeros, which can time
// differently from real data.
template <class T>
__global__ void fill_random(T* p, std::size_t count) {
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    unsigned x = static_cast<unsigned>(k * 2654435761u) ^ 0x9e3779b9u;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 12;
    p[k] = T(0.5) + T(x & 0xffffff) / T(0x1000000);
  }
}

/// Median seconds of `repetitions` runs of `body` on `stream` (after two
/// warm-ups), timed by events.
template <class F>
double median_seconds(const std::string& what, int repetitions, cudaStream_t stream, F&& body) {
  Event begin(what, true), end(what, true);
  std::vector<float> ms;
  for (int rep = -2; rep < repetitions; ++rep) {
    HETSTENCIL_CUDA_CHECK(cudaEventRecord(begin, stream), what);
    body();
    HETSTENCIL_CUDA_CHECK(cudaEventRecord(end, stream), what);
    HETSTENCIL_CUDA_CHECK(cudaEventSynchronize(end), what);
    float t = 0.0f;
    HETSTENCIL_CUDA_CHECK(cudaEventElapsedTime(&t, begin, end), what);
    if (rep >= 0) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2] * 1e-3;
}

}  // namespace hetstencil::cuda
