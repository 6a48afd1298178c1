// The generic stencil kernels' residual fold (stencil_kernels.cu and
// coefficient_kernels.cu): a warp's segment of 128 cells, 4 a lane, 32 apart.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace hetstencil::cuda {

/// Folds a warp's segment of rho in core/residual.hpp's order and has lane 0
/// store its sum of squares and largest |rho| at sums[k] and maxima[k]: cells
/// k and k + h for h = 1..16 are lanes h apart, so lane 0 ends with each
/// 32-cell chunk's tree, then chunks 0 + 1, 2 + 3, and their sum.
template <class T>
__device__ __forceinline__ void store_segment_residual(const T (&rho)[4], int lane, std::int64_t k, double* sums,
                                                       double* maxima) {
  constexpr unsigned kAll = 0xffffffffu;
  T square[4];
  T largest = T(0);
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    square[c] = rho[c] * rho[c];
    largest = fmax(largest, fabs(rho[c]));
  }
#pragma unroll
  for (int h = 1; h < 32; h *= 2) {
#pragma unroll
    for (int c = 0; c < 4; ++c) square[c] += __shfl_down_sync(kAll, square[c], h);
    largest = fmax(largest, __shfl_xor_sync(kAll, largest, h));
  }
  if (lane == 0) {
    sums[k] = double((square[0] + square[1]) + (square[2] + square[3]));
    maxima[k] = double(largest);
  }
}

}  // namespace hetstencil::cuda
