#include "devices/cuda/coefficient_kernels.cuh"

#include <algorithm>

#include "devices/cuda/segment_residual.cuh"
#include "hetstencil/stencil.hpp"

namespace hetstencil::cuda {
namespace {

// stencil_kernels.cu's layout: core/residual.hpp's segment, 4 warps a block,
// walks of 8 rows (2-D) or 32 planes (3-D).
constexpr int kLanes = 32;
constexpr int kCells = 4;
constexpr int kSegmentCells = kLanes * kCells;
constexpr int kWarps = 4;
constexpr int kWalkRows = 8;
constexpr int kWalkPlanes = 32;
constexpr int kMostPoints = (2 * kMaxStencilRadius + 1) * (2 * kMaxStencilRadius + 1) * (2 * kMaxStencilRadius + 1);
constexpr int kFewPoints = 32;

template <int Capacity>
struct OffsetTable {
  int count = 0;
  std::int64_t offset[Capacity];
};

// Cell `at` gets StencilTerms::update(p, a, stride, sf) of a variable
// stencil: sum = a_0 u[o_0], sum = sum + a_k u[o_k] in the points' order,
// then (sum + s f) / D; its residual sf - (D u - sum). Folded as stencil_kernel folds it.
template <class T, int Capacity, bool Update, bool Residual>
__global__ void __launch_bounds__(kLanes * kWarps)
    coefficient_kernel(const __grid_constant__ OffsetTable<Capacity> table, const StencilSlab slab,
                       const __grid_constant__ StencilPass<T> pass, const CoefficientGrids<T> grids,
                       std::int64_t chunks) {
  const int lane = static_cast<int>(threadIdx.x);
  const int warp = static_cast<int>(threadIdx.y);
  const bool three_d = slab.three_d;
  const std::int64_t line = three_d ? static_cast<std::int64_t>(blockIdx.y) * kWarps + warp : 0;
  if (line >= slab.lines) return;  // the whole warp
  const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * kSegmentCells + lane;
  bool valid[kCells];
#pragma unroll
  for (int c = 0; c < kCells; ++c) valid[c] = x + c * kLanes < slab.nx;
  const std::int64_t stride = grids.stride;
  const std::int64_t diagonal_grid = static_cast<std::int64_t>(table.count) * stride;
  for (std::int64_t chunk = three_d ? blockIdx.z : blockIdx.y; chunk < chunks; chunk += three_d ? gridDim.z : gridDim.y) {
    const std::int64_t first =
        pass.unit_begin + (three_d ? chunk * kWalkPlanes : (chunk * kWarps + warp) * kWalkRows);
    const int walk = three_d ? kWalkPlanes : kWalkRows;
    for (int step = 0; step < walk; ++step) {
      const std::int64_t unit = first + step;
      if (unit >= pass.unit_end) break;  // the whole warp
      const std::int64_t at = unit * slab.unit_values + (three_d ? (slab.depth + line) * slab.cols : 0) + slab.depth + x;
      const T* p = pass.in + at;
      const T* a = grids.a + at;
      T sum[kCells];
      {
        const std::int64_t o = table.offset[0];
#pragma unroll
        for (int c = 0; c < kCells; ++c) sum[c] = valid[c] ? a[c * kLanes] * p[o + c * kLanes] : T(0);
      }
#pragma unroll 4
      for (int k = 1; k < table.count; ++k) {
        const std::int64_t o = table.offset[k];
        const T* ak = a + k * stride;
#pragma unroll
        for (int c = 0; c < kCells; ++c) {
          if (valid[c]) sum[c] = add_term(sum[c], ak[c * kLanes], p[o + c * kLanes]);
        }
      }
      T sf[kCells];
      T diagonal[kCells];
#pragma unroll
      for (int c = 0; c < kCells; ++c) {
        const std::int64_t cell = at + c * kLanes;
        sf[c] = !valid[c] ? T(0) : pass.sf ? pass.sf[cell] : cell == pass.spike ? T(1) : T(0);
        diagonal[c] = valid[c] ? a[diagonal_grid + c * kLanes] : T(1);
      }
      if (Update) {
#pragma unroll
        for (int c = 0; c < kCells; ++c) {
          if (valid[c]) pass.out[at + c * kLanes] = (sum[c] + sf[c]) / diagonal[c];
        }
      }
      if (Residual && unit >= pass.check_begin && unit < pass.check_end) {
        static_assert(kLanes == 32 && kCells == 4, "store_segment_residual's segment");
        T rho[kCells];
#pragma unroll
        for (int c = 0; c < kCells; ++c) rho[c] = valid[c] ? T(sf[c] - (diagonal[c] * p[c * kLanes] - sum[c])) : T(0);
        const std::int64_t k = ((unit - pass.check_begin) * slab.lines + line) * slab.segments + blockIdx.x;
        store_segment_residual(rho, lane, k, pass.segment_sums, pass.segment_max);
      }
    }
  }
}

template <class T, int Capacity, bool Update, bool Residual>
void launch_with(const OffsetTable<Capacity>& table, const StencilSlab& slab, const StencilPass<T>& pass,
                 const CoefficientGrids<T>& grids, cudaStream_t stream) {
  const std::int64_t units = pass.unit_end - pass.unit_begin;
  const bool three_d = slab.three_d;
  const std::int64_t per_chunk = three_d ? kWalkPlanes : kWarps * kWalkRows;
  const std::int64_t chunks = (units + per_chunk - 1) / per_chunk;
  const std::int64_t most = 65535;
  dim3 grid(static_cast<unsigned>(slab.segments), 1, 1);
  if (three_d) {
    grid.y = static_cast<unsigned>((slab.lines + kWarps - 1) / kWarps);
    grid.z = static_cast<unsigned>(std::min(chunks, most));
  } else {
    grid.y = static_cast<unsigned>(std::min(chunks, most));
  }
  coefficient_kernel<T, Capacity, Update, Residual>
      <<<grid, dim3(kLanes, kWarps), 0, stream>>>(table, slab, pass, grids, chunks);
}

template <class T, int Capacity>
void launch_table(const OffsetTable<Capacity>& table, const StencilSlab& slab, const StencilPass<T>& pass,
                  const CoefficientGrids<T>& grids, cudaStream_t stream) {
  if (!pass.out) {
    launch_with<T, Capacity, false, true>(table, slab, pass, grids, stream);
  } else if (pass.check_end > pass.check_begin) {
    launch_with<T, Capacity, true, true>(table, slab, pass, grids, stream);
  } else {
    launch_with<T, Capacity, true, false>(table, slab, pass, grids, stream);
  }
}

template <class T, int Capacity>
void fill(OffsetTable<Capacity>& table, const StencilTerms<T>& terms) {
  table.count = static_cast<int>(terms.offsets.size());
  for (int k = 0; k < table.count; ++k) table.offset[k] = terms.offsets[static_cast<std::size_t>(k)];
}

}  // namespace

template <class T>
struct CoefficientCode<T>::Tables {
  OffsetTable<kFewPoints> few;
  std::unique_ptr<OffsetTable<kMostPoints>> most;
};

template <class T>
CoefficientCode<T>::CoefficientCode(const StencilTerms<T>& terms) : tables_(std::make_unique<Tables>()) {
  if (terms.offsets.size() <= static_cast<std::size_t>(kFewPoints)) {
    fill(tables_->few, terms);
  } else {
    tables_->most = std::make_unique<OffsetTable<kMostPoints>>();
    fill(*tables_->most, terms);
  }
}

template <class T>
CoefficientCode<T>::~CoefficientCode() = default;

template <class T>
void CoefficientCode<T>::launch(const StencilSlab& slab, const StencilPass<T>& pass, const CoefficientGrids<T>& grids,
                                cudaStream_t stream) const {
  if (pass.unit_end <= pass.unit_begin || slab.nx <= 0) return;
  if (tables_->most) {
    launch_table(*tables_->most, slab, pass, grids, stream);
  } else {
    launch_table(tables_->few, slab, pass, grids, stream);
  }
}

template class CoefficientCode<float>;
template class CoefficientCode<double>;

}  // namespace hetstencil::cuda
