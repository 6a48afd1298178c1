// The GPU sweep. Each warp owns one 128-cell segment of a band of rows and walks
// down it, keeping the rows above and at in registers, so each value is read
// from memory about once; each thread holds 4 neighbouring cells (one 16-byte
// load for float, two for double). The loads of a whole band are independent of
// each other, so they are all in flight at once. Each cell is updated by
// Poisson5::update (core/stencil_update.hpp) and the build uses -fmad=false, so
// the bits equal the CPU's. The same pass can also fold the residual of the
// iterate it reads, in the canonical order of core/residual.hpp, at no extra
// memory traffic.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "core/residual.hpp"
#include "core/stencil_update.hpp"
#include "devices/cuda/cuda_check.hpp"
#include "devices/cuda/sweep_band.hpp"

namespace hetstencil::cuda {

constexpr int kSegment = 128;       // cells per warp and row; the residual's segment
constexpr int kWarpsPerBlock = kResidualGroup;  // segments side by side in a block: the residual's group
constexpr int kThreads = 32 * kWarpsPerBlock;

/// Where a slab lives on the GPU. Column j of slab row r is at
/// base + r * pitch + offset + j; offset puts column 1 on a 128-byte boundary.
struct SlabLayout {
  std::int64_t pitch = 0;
  std::int64_t offset = 0;
  std::int64_t nx = 0;
  std::int64_t segments = 0;  // ceil(nx / 128)
  std::int64_t groups = 0;    // of segments, a block's: ceil(segments / 8)
};

template <class T>
SlabLayout make_layout(std::int64_t nx) {
  SlabLayout s;
  const std::int64_t align = 128 / static_cast<std::int64_t>(sizeof(T));
  s.nx = nx;
  s.segments = (nx + kSegment - 1) / kSegment;
  s.groups = (s.segments + kWarpsPerBlock - 1) / kWarpsPerBlock;
  s.offset = align - 1;
  // Room for every segment's cells and the east neighbour of the last one.
  s.pitch = (align + s.segments * kSegment + 1 + align - 1) / align * align;
  return s;
}

/// A lane's 4 cells: columns j0 + 4 * lane + i.
template <class T>
struct Cells {
  T v[4];
};

__device__ __forceinline__ Cells<float> load_cells(const float* row, std::int64_t j0, int lane) {
  const float4 q = *reinterpret_cast<const float4*>(row + j0 + 4 * lane);
  return {{q.x, q.y, q.z, q.w}};
}

__device__ __forceinline__ Cells<double> load_cells(const double* row, std::int64_t j0, int lane) {
  const double2 a = *reinterpret_cast<const double2*>(row + j0 + 4 * lane);
  const double2 b = *reinterpret_cast<const double2*>(row + j0 + 4 * lane + 2);
  return {{a.x, a.y, b.x, b.y}};
}

// Streaming stores: the next iterate is not read again in this sweep, so it
// should not push the rows that neighbouring bands still read out of L2.
__device__ __forceinline__ void store_full(float* p, const Cells<float>& c) {
  __stcs(reinterpret_cast<float4*>(p), make_float4(c.v[0], c.v[1], c.v[2], c.v[3]));
}

__device__ __forceinline__ void store_full(double* p, const Cells<double>& c) {
  __stcs(reinterpret_cast<double2*>(p), make_double2(c.v[0], c.v[1]));
  __stcs(reinterpret_cast<double2*>(p) + 1, make_double2(c.v[2], c.v[3]));
}

template <class T>
__device__ __forceinline__ void store_cells(T* row, std::int64_t j0, int lane, const Cells<T>& c, std::int64_t nx) {
  const std::int64_t j = j0 + 4 * lane;
  if (j + 3 <= nx) {
    store_full(row + j, c);
  } else {
    for (int i = 0; i < 4; ++i) {
      if (j + i <= nx) row[j + i] = c.v[i];
    }
  }
}

// West and east neighbours of a lane's cells; `outer` is row[j0 - 1] on lane 0
// and row[j0 + 128] on lane 31.
template <class T>
__device__ __forceinline__ void neighbours(const Cells<T>& c, T outer, int lane, Cells<T>& w, Cells<T>& e) {
  const T left = __shfl_up_sync(0xffffffffu, c.v[3], 1);
  const T right = __shfl_down_sync(0xffffffffu, c.v[0], 1);
  w = {{lane == 0 ? outer : left, c.v[0], c.v[1], c.v[2]}};
  e = {{c.v[1], c.v[2], c.v[3], lane == 31 ? outer : right}};
}

// The segment's 128 squares added in T as core/residual.hpp defines: each lane
// adds its 4 cells as (c0 + c1) + (c2 + c3), then lanes 2d apart add the
// neighbour d lanes away, for d = 1, 2, ..., 16. A band's 4 rows are folded
// together: at d = 1 and 2 a lane sends its partner the rows it does not keep,
// so 4 rows take 5 shuffles instead of 20. a + b and b + a are the same bits,
// so both lanes of a pair hold the canonical sum of their rows.
//
// pair_rows: d = 1 for rows k and k + 1 (k even) as soon as both are summed,
// so that a lane holds no more than two sums; lane l keeps row k + (l & 1).
template <class T>
__device__ __forceinline__ T pair_rows(T row_k, T row_k1, int lane) {
  const bool odd = lane & 1;
  return (odd ? row_k1 : row_k) + __shfl_xor_sync(0xffffffffu, odd ? row_k : row_k1, 1);
}

// d = 2 to 16 for the pairs of rows 0-1 and 2-3: lane l < 4 gets band row l's sum.
template <class T>
__device__ __forceinline__ T fold_pairs(T rows01, T rows23, int lane) {
  const bool upper = lane & 2;
  T sum = (upper ? rows23 : rows01) + __shfl_xor_sync(0xffffffffu, upper ? rows01 : rows23, 2);
  for (int d = 4; d < 32; d *= 2) sum += __shfl_xor_sync(0xffffffffu, sum, d);
  return sum;
}

struct SweepArgs {
  SlabLayout layout;
  std::int64_t row_begin = 1;   // slab rows [row_begin, row_end) are updated
  std::int64_t row_end = 1;
  std::int64_t spike_row = -1;  // slab row and column of the spike, -1 when none
  std::int64_t spike_col = -1;
  // With the residual, per group of segments: [(row - 1) * groups + group].
  double* group_sums = nullptr;  // the folded squares of every row
  double* group_max = nullptr;   // the largest |rho| of the band, at each of its rows
  int multiprocessors = 0;       // the GPU's (multiprocessors()): sweep_band
};

/// The current GPU's multiprocessors, for SweepArgs.
inline int multiprocessors(const std::string& context) {
  int gpu = 0, count = 0;
  HETSTENCIL_CUDA_CHECK(cudaGetDevice(&gpu), context + ": finding its GPU");
  HETSTENCIL_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, gpu), context + ": counting its SMs");
  return count;
}

// Blocks per SM the register budget must allow: more warps hide more memory
// latency until the registers spill. Measured on an H200 (1 to 6 tried): the
// float sweep, with or without the residual, is fastest at 6 (a float residual
// sweep of 16384^2 took 547 us at 6, 570 us at 5); the double residual sweep
// spills at 4 (64 registers).
template <class T, bool kResidual>
constexpr int min_blocks() {
  if (sizeof(T) == 4) return 6;
  return kResidual ? 3 : 4;
}

/// kWrite: write the next iterate; kResidual: fold the residual of this one;
/// kSource: h2f is a grid (else h*h*f is 0 but for the spike). A float residual
/// sweep issues an instruction on 73% of an H200's cycles, so every instruction
/// it spares counts: the source's loads and the per-cell bounds of the
/// residual are compiled out where they cannot apply (547 us instead of 587 us
/// for 16384^2 with both).
template <class T, bool kWrite, bool kResidual, bool kSource, int kBand = kRows>
__global__ void __launch_bounds__(kThreads, min_blocks<T, kResidual>()) sweep_kernel(const T* __restrict__ u, T* __restrict__ v,
                                                         const T* __restrict__ h2f, SweepArgs a) {
  static_assert(!kResidual || kBand == 4, "the residual folds a band of 4 rows");
  const SlabLayout& s = a.layout;
  const std::int64_t band = blockIdx.x / s.groups;
  const std::int64_t group = blockIdx.x % s.groups;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const std::int64_t segment = group * kWarpsPerBlock + warp;
  const std::int64_t r0 = a.row_begin + band * kBand;
  // A warp past the last segment sweeps the last one again but stores
  // nothing; with the residual its sums are +0.0, added to its block's (the
  // same bits).
  const bool active = segment < s.segments;
  if (!kResidual && !active) return;  // a whole warp at once
  const std::int64_t j0 = 1 + (active ? segment : s.segments - 1) * kSegment;
  // Every cell of the warp's band is inside: its residual needs no bounds (the same for the whole warp).
  const bool full = active && j0 + kSegment - 1 <= s.nx && r0 + kBand <= a.row_end;
  // Rows past the band's end are clamped to the ghost row: every load stays in
  // bounds, so none has to wait for a bounds check.
  auto row = [&](const T* base, std::int64_t r) {
    return base + (r <= a.row_end ? r : a.row_end) * s.pitch + s.offset;
  };

  Cells<T> n = load_cells(row(u, r0 - 1), j0, lane);
  Cells<T> c = load_cells(row(u, r0), j0, lane);
  T largest = T(0);   // |rho| is exact in T, and so is its maximum: no conversions
  T lane_sum = T(0);  // kResidual: the row before's, while k is odd
  T pairs[2];         // kResidual: rows 0-1 and 2-3, paired
#pragma unroll
  for (int k = 0; k < kBand; ++k) {
    const std::int64_t r = r0 + k;
    const Cells<T> south = load_cells(row(u, r + 1), j0, lane);
    const T* centre = row(u, r);
    const T outer = lane == 0 ? centre[j0 - 1] : (lane == 31 ? centre[j0 + kSegment] : T(0));
    Cells<T> f = kSource ? load_cells(row(h2f, r), j0, lane) : Cells<T>{{T(0), T(0), T(0), T(0)}};
    Cells<T> w, e;
    neighbours(c, outer, lane, w, e);
    if (r == a.spike_row) {
      for (int i = 0; i < 4; ++i) {
        if (j0 + 4 * lane + i == a.spike_col) f.v[i] = T(1);
      }
    }
    const bool inside = active && r < a.row_end;
    if (kWrite && inside) {
      Cells<T> out;
      for (int i = 0; i < 4; ++i) out.v[i] = Poisson5<T>::update(n.v[i], south.v[i], w.v[i], e.v[i], f.v[i]);
      store_cells(v + r * s.pitch + s.offset, j0, lane, out, s.nx);
    }
    if (kResidual) {
      T q[4];
      for (int i = 0; i < 4; ++i) {
        const T rho = Poisson5<T>::residual(n.v[i], south.v[i], w.v[i], e.v[i], c.v[i], f.v[i]);
        if (full) {  // two code paths, so that the common one carries no selects
          q[i] = rho * rho;
          largest = fmax(largest, fabs(rho));
        } else {
          const bool cell = inside && j0 + 4 * lane + i <= s.nx;
          q[i] = cell ? rho * rho : T(0);
          largest = cell ? fmax(largest, fabs(rho)) : largest;
        }
      }
      const T sum = (q[0] + q[1]) + (q[2] + q[3]);
      if (k % 2 == 0) {
        lane_sum = sum;
      } else {
        pairs[k / 2] = pair_rows(lane_sum, sum, lane);
      }
    }
    n = c;
    c = south;
  }
  if (kResidual) {
    // The block's group of segments, added in column order for each band row
    // by lanes 0-3 of warp 0.
    __shared__ T band_sums[kWarpsPerBlock][4];
    __shared__ T band_max[kWarpsPerBlock];
    const T folded = fold_pairs(pairs[0], pairs[1], lane);
    for (int d = 1; d < 32; d *= 2) largest = fmax(largest, __shfl_xor_sync(0xffffffffu, largest, d));
    if (lane < 4) band_sums[warp][lane] = folded;
    if (lane == 0) band_max[warp] = largest;
    __syncthreads();
    const int k = static_cast<int>(threadIdx.x);
    if (k < 4 && r0 + k < a.row_end) {
      double sum = 0.0;
      T most = T(0);
      for (int w = 0; w < kWarpsPerBlock; ++w) {
        sum += double(band_sums[w][k]);
        most = fmax(most, band_max[w]);
      }
      // The band's largest at every row: each row swept is written, so nothing
      // has to be cleared before a check, whatever bands a launch cuts.
      a.group_sums[(r0 + k - 1) * s.groups + group] = sum;
      a.group_max[(r0 + k - 1) * s.groups + group] = double(most);
    }
  }
}

template <class T, bool kWrite, bool kResidual, int kBand>
void launch_band(const T* u, T* v, const T* h2f, const SweepArgs& a, cudaStream_t stream) {
  const std::int64_t bands = (a.row_end - a.row_begin + kBand - 1) / kBand;
  const unsigned blocks = static_cast<unsigned>(a.layout.groups * bands);
  if (h2f) {
    sweep_kernel<T, kWrite, kResidual, true, kBand><<<blocks, kThreads, 0, stream>>>(u, v, h2f, a);
  } else {
    sweep_kernel<T, kWrite, kResidual, false, kBand><<<blocks, kThreads, 0, stream>>>(u, v, h2f, a);
  }
}

/// The sweep of a's rows; one with the residual folds bands of kRows rows.
template <class T, bool kWrite, bool kResidual>
void launch_sweep(const T* u, T* v, const T* h2f, const SweepArgs& a, cudaStream_t stream) {
  if (a.row_end <= a.row_begin) return;
  if constexpr (!kResidual) {
    if (sweep_band(a.layout.segments, a.row_end - a.row_begin, a.multiprocessors) == 1) {
      return launch_band<T, kWrite, false, 1>(u, v, h2f, a, stream);
    }
  }
  launch_band<T, kWrite, kResidual, kRows>(u, v, h2f, a, stream);
}

}  // namespace hetstencil::cuda
