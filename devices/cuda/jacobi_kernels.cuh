// The GPU sweep. Each warp owns one 128-cell segment of a row band and walks
// down kRows rows, keeping the rows above and at in registers, so each value is
// read from memory about once; each thread holds 4 cells (one 16-byte load for
// float, two for double). The update is evaluated in the reference's order and
// the build uses -fmad=false, so the bits equal the CPU's. The same pass can
// also fold the residual of the iterate it reads, in the canonical order of
// runtime/src/residual.hpp, at no extra memory traffic.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace hetstencil::cuda {

constexpr int kSegment = 128;       // cells per warp and row; the residual's segment
constexpr int kWarpsPerBlock = 8;   // segments side by side in a block
constexpr int kRows = 16;           // rows each warp walks down
constexpr int kThreads = 32 * kWarpsPerBlock;

/// Where a slab lives on the GPU. Column j of slab row r is at
/// base + r * pitch + offset + j; offset puts column 1 on a 128-byte boundary.
struct SlabLayout {
  std::int64_t pitch = 0;
  std::int64_t offset = 0;
  std::int64_t nx = 0;
  std::int64_t segments = 0;  // ceil(nx / 128)
};

template <class T>
SlabLayout make_layout(std::int64_t nx) {
  SlabLayout s;
  const std::int64_t align = 128 / static_cast<std::int64_t>(sizeof(T));
  s.nx = nx;
  s.segments = (nx + kSegment - 1) / kSegment;
  s.offset = align - 1;
  // Room for every segment's cells and the east neighbour of the last one.
  s.pitch = (align + s.segments * kSegment + 1 + align - 1) / align * align;
  return s;
}

template <class T>
struct Cells {
  T v[4];
};

// The column (1-based) of a lane's cell i in the segment starting at j0.
template <class T>
__device__ __forceinline__ std::int64_t cell_column(std::int64_t j0, int lane, int i) {
  if (sizeof(T) == 4) return j0 + 4 * lane + i;
  return j0 + (i < 2 ? 2 * lane + i : 64 + 2 * lane + (i - 2));
}

__device__ __forceinline__ Cells<float> load_cells(const float* row, std::int64_t j0, int lane) {
  const float4 q = *reinterpret_cast<const float4*>(row + j0 + 4 * lane);
  return {{q.x, q.y, q.z, q.w}};
}

__device__ __forceinline__ Cells<double> load_cells(const double* row, std::int64_t j0, int lane) {
  const double2 a = *reinterpret_cast<const double2*>(row + j0 + 2 * lane);
  const double2 b = *reinterpret_cast<const double2*>(row + j0 + 64 + 2 * lane);
  return {{a.x, a.y, b.x, b.y}};
}

__device__ __forceinline__ void store_cells(float* row, std::int64_t j0, int lane, const Cells<float>& c,
                                            std::int64_t nx) {
  const std::int64_t j = j0 + 4 * lane;
  if (j + 3 <= nx) {
    *reinterpret_cast<float4*>(row + j) = make_float4(c.v[0], c.v[1], c.v[2], c.v[3]);
  } else {
    for (int i = 0; i < 4; ++i) {
      if (j + i <= nx) row[j + i] = c.v[i];
    }
  }
}

__device__ __forceinline__ void store_cells(double* row, std::int64_t j0, int lane, const Cells<double>& c,
                                            std::int64_t nx) {
  for (int half = 0; half < 2; ++half) {
    const std::int64_t j = j0 + 64 * half + 2 * lane;
    if (j + 1 <= nx) {
      *reinterpret_cast<double2*>(row + j) = make_double2(c.v[2 * half], c.v[2 * half + 1]);
    } else if (j <= nx) {
      row[j] = c.v[2 * half];
    }
  }
}

// West and east neighbours of a lane's cells; `outer` is row[j0 - 1] on lane 0
// and row[j0 + 128] on lane 31.
__device__ __forceinline__ void neighbours(const Cells<float>& c, float outer, int lane, Cells<float>& w,
                                           Cells<float>& e) {
  const float left = __shfl_up_sync(0xffffffffu, c.v[3], 1);
  const float right = __shfl_down_sync(0xffffffffu, c.v[0], 1);
  w = {{lane == 0 ? outer : left, c.v[0], c.v[1], c.v[2]}};
  e = {{c.v[1], c.v[2], c.v[3], lane == 31 ? outer : right}};
}

// Double cells: v0, v1 at 2l, 2l+1 and v2, v3 at 64+2l, 65+2l.
__device__ __forceinline__ void neighbours(const Cells<double>& c, double outer, int lane, Cells<double>& w,
                                           Cells<double>& e) {
  const double left_a = __shfl_up_sync(0xffffffffu, c.v[1], 1);
  const double left_b = __shfl_up_sync(0xffffffffu, c.v[3], 1);
  const double right_a = __shfl_down_sync(0xffffffffu, c.v[0], 1);
  const double right_b = __shfl_down_sync(0xffffffffu, c.v[2], 1);
  const double cell63 = __shfl_sync(0xffffffffu, c.v[1], 31);
  const double cell64 = __shfl_sync(0xffffffffu, c.v[2], 0);
  w = {{lane == 0 ? outer : left_a, c.v[0], lane == 0 ? cell63 : left_b, c.v[2]}};
  e = {{c.v[1], lane == 31 ? cell64 : right_a, c.v[3], lane == 31 ? outer : right_b}};
}

// Folds a segment's 128 squares by halves (cell k += cell k + h for h = 64 ... 1),
// as runtime/src/residual.hpp defines; the result is valid on lane 0.
__device__ __forceinline__ double fold_segment(double q[4], bool four_per_lane_in_a_row) {
  if (four_per_lane_in_a_row) {  // float: cells 4l .. 4l+3
    for (int d = 16; d >= 1; d /= 2) {
      for (int i = 0; i < 4; ++i) q[i] += __shfl_down_sync(0xffffffffu, q[i], d);
    }
    q[0] += q[2];
    q[1] += q[3];
  } else {  // double: cells 2l, 2l+1, 64+2l, 65+2l
    q[0] += q[2];
    q[1] += q[3];
    for (int d = 16; d >= 1; d /= 2) {
      q[0] += __shfl_down_sync(0xffffffffu, q[0], d);
      q[1] += __shfl_down_sync(0xffffffffu, q[1], d);
    }
  }
  return q[0] + q[1];
}

struct SweepArgs {
  SlabLayout layout;
  std::int64_t row_begin = 1;   // slab rows [row_begin, row_end) are updated
  std::int64_t row_end = 1;
  std::int64_t spike_row = -1;  // slab row and column of the spike, -1 when none
  std::int64_t spike_col = -1;
  double* segment_sums = nullptr;  // [(row - 1) * segments + segment], with the residual
  unsigned long long* max_bits = nullptr;  // largest |rho| as bits (rho >= 0 orders like its bits)
};

/// kWrite: write the next iterate; kResidual: fold the residual of this one.
template <class T, bool kWrite, bool kResidual>
__global__ void __launch_bounds__(kThreads) sweep_kernel(const T* __restrict__ u, T* __restrict__ v,
                                                         const T* __restrict__ h2f, SweepArgs a) {
  const SlabLayout& s = a.layout;
  const std::int64_t segment_blocks = (s.segments + kWarpsPerBlock - 1) / kWarpsPerBlock;
  const std::int64_t band = blockIdx.x / segment_blocks;
  const int lane = threadIdx.x & 31;
  const std::int64_t segment = (blockIdx.x % segment_blocks) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (segment >= s.segments) return;  // a whole warp at once
  const std::int64_t j0 = 1 + segment * kSegment;
  const std::int64_t r0 = a.row_begin + band * kRows;
  auto row = [&](const T* base, std::int64_t r) { return base + r * s.pitch + s.offset; };

  Cells<T> n = load_cells(row(u, r0 - 1), j0, lane);
  Cells<T> c = load_cells(row(u, r0), j0, lane);
  double largest = 0.0;
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const std::int64_t r = r0 + k;
    // Loads stay in bounds (the ghost row at most), so all of them can be in flight at once.
    const Cells<T> south = load_cells(row(u, r + 1 < a.row_end + 1 ? r + 1 : a.row_end), j0, lane);
    if (r >= a.row_end) break;
    const T* centre = row(u, r);
    const T outer = lane == 0 ? centre[j0 - 1] : (lane == 31 ? centre[j0 + kSegment] : T(0));
    Cells<T> w, e;
    neighbours(c, outer, lane, w, e);
    Cells<T> f = h2f ? load_cells(row(h2f, r), j0, lane) : Cells<T>{{T(0), T(0), T(0), T(0)}};
    if (r == a.spike_row) {
      for (int i = 0; i < 4; ++i) {
        if (cell_column<T>(j0, lane, i) == a.spike_col) f.v[i] = T(1);
      }
    }
    if (kWrite) {
      Cells<T> out;
      for (int i = 0; i < 4; ++i) out.v[i] = T(0.25) * ((((n.v[i] + south.v[i]) + w.v[i]) + e.v[i]) + f.v[i]);
      store_cells(v + r * s.pitch + s.offset, j0, lane, out, s.nx);
    }
    if (kResidual) {
      double q[4];
      for (int i = 0; i < 4; ++i) {
        const double nb = ((double(n.v[i]) + double(south.v[i])) + double(w.v[i])) + double(e.v[i]);
        const double rho = double(f.v[i]) - (4.0 * double(c.v[i]) - nb);
        const bool inside = cell_column<T>(j0, lane, i) <= s.nx;
        q[i] = inside ? rho * rho : 0.0;
        largest = inside ? fmax(largest, fabs(rho)) : largest;
      }
      const double folded = fold_segment(q, sizeof(T) == 4);
      if (lane == 0) a.segment_sums[(r - 1) * s.segments + segment] = folded;
    }
    n = c;
    c = south;
  }
  if (kResidual) {
    for (int d = 16; d >= 1; d /= 2) largest = fmax(largest, __shfl_down_sync(0xffffffffu, largest, d));
    if (lane == 0) atomicMax(a.max_bits, static_cast<unsigned long long>(__double_as_longlong(largest)));
  }
}

template <class T, bool kWrite, bool kResidual>
void launch_sweep(const T* u, T* v, const T* h2f, const SweepArgs& a, cudaStream_t stream) {
  if (a.row_end <= a.row_begin) return;
  const std::int64_t segment_blocks = (a.layout.segments + kWarpsPerBlock - 1) / kWarpsPerBlock;
  const std::int64_t bands = (a.row_end - a.row_begin + kRows - 1) / kRows;
  sweep_kernel<T, kWrite, kResidual>
      <<<static_cast<unsigned>(segment_blocks * bands), kThreads, 0, stream>>>(u, v, h2f, a);
}

}  // namespace hetstencil::cuda
