// The GPU sweep of a variable stencil (core/stencil_terms.hpp): each cell's
// weights a_k and diagonal D come from grids laid out as the slab, one after
// the other. The kernel has stencil_kernels.cuh's shape (a warp a 128-cell
// segment of a line, 4 cells a lane 32 apart, walking along the split axis)
// and folds the residual in core/residual.hpp's order the same way, into the
// same StencilPass sums, so stencil_unit_sums finishes it; its launch and
// reduction are a known duplicate of stencil_kernels.cu's, kept apart while
// that kernel is tuned for constant weights.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>

#include "core/stencil_terms.hpp"
#include "devices/cuda/stencil_kernels.cuh"

namespace hetstencil::cuda {

/// A variable stencil's weights on the GPU: grid a_0 laid out as the slab
/// (StencilSlab), grid k (a_k, then D after the last point) `stride` values on.
template <class T>
struct CoefficientGrids {
  const T* a = nullptr;
  std::int64_t stride = 0;
};

/// A variable stencil's points (their offsets) for the kernel, made once per solve.
template <class T>
class CoefficientCode {
 public:
  explicit CoefficientCode(const StencilTerms<T>& terms);
  ~CoefficientCode();
  CoefficientCode(const CoefficientCode&) = delete;
  CoefficientCode& operator=(const CoefficientCode&) = delete;

  /// Queues `pass` with the cells' weights from `grids` on `stream` (nothing
  /// when it has no units); launch errors are the caller's to check with
  /// cudaGetLastError.
  void launch(const StencilSlab& slab, const StencilPass<T>& pass, const CoefficientGrids<T>& grids,
              cudaStream_t stream) const;

 private:
  struct Tables;
  std::unique_ptr<Tables> tables_;
};

}  // namespace hetstencil::cuda
