// The band of the GPU sweep (jacobi_kernels.cuh): how many rows each warp walks
// down. Plain C++, so that the choice is tested without a GPU.
#pragma once

#include <cstdint>

namespace hetstencil::cuda {

// Rows each warp walks down: few enough for many warps and registers to spare,
// enough that the rows above and below are not read too often (measured on an
// H200: 4 beats 1, 2, 6, 8, 16 and 32 on grids that fill the GPU). The residual
// is folded over bands of this many rows.
constexpr int kRows = 4;

// A sweep without the residual whose warps, at bands of kRows rows, would be
// fewer than this a multiprocessor walks bands of one row: four times the
// warps, each with its loads in flight at once, where a small slab's sweep is
// a few rounds of memory latency. Measured on an H200 (132 SMs; double, graphs
// of 64 sweeps, us an iteration at bands of 4 / 1 row): 256^2 2.27 / 1.57,
// 512 x 512 2.72 / 2.32, 1024 x 256 3.01 / 2.38, 4096 x 64 3.06 / 2.40 (512
// warps at 4 rows); 1024 x 512 and 2048 x 256 (1024 warps) 3.19 / 3.17;
// 1024^2, 2048 x 512 and 4096 x 256 (2048 warps) 4.63-4.71 / 5.01-5.06.
constexpr std::int64_t kLeastWarpsPerSm = 8;

/// Rows a warp walks down in a sweep without the residual of `rows` rows of
/// `segments` warps each, on a GPU of `multiprocessors` (0: unknown, kRows).
constexpr int sweep_band(std::int64_t segments, std::int64_t rows, int multiprocessors) {
  const std::int64_t warps = segments * ((rows + kRows - 1) / kRows);
  return warps < kLeastWarpsPerSm * multiprocessors ? 1 : kRows;
}

}  // namespace hetstencil::cuda
