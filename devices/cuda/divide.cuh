// The generic stencil kernels' division by the centre coefficient.
#pragma once

#include <cuda_runtime.h>

namespace hetstencil::cuda {

/// x / d, the bits of IEEE division. A GPU's division guards a dividend too
/// small for its fast path, and zero counts as one: the slow path it then
/// takes made a sweep of a spike problem (zeros but near the spike) 1.5 times
/// as long as one of random values (H200, double box9 4096^2: 135 us against
/// 89 us, the same bytes). A zero's quotient is the signed zero x times the
/// sign of d, with no division at all. The generated kernels write the same
/// expression (stencil_codegen.cpp).
template <class T>
__device__ __forceinline__ T divide(T x, T d) {
  return x == T(0) ? x * copysign(T(1), d) : x / d;
}

}  // namespace hetstencil::cuda
