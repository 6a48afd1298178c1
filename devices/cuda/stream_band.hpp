// The band of the streamed blocked kernel (variant_kernels.cuh): how many rows
// each warp walks down. A warp starts its band `depth` rows early and ends it
// `depth` rows late to build up its K iterates, so every band costs its rows
// plus 2 x depth: short bands waste that. Long bands leave SMs idle at the end,
// while the last blocks finish. Plain C++, so that the choice is tested without
// a GPU.
#pragma once

#include <cstdint>

namespace hetstencil::cuda {

/// How far behind the average block the last ones finish, in band walks: 0.2
/// fits the H200's float 16384^2 depth-8 passes on one GPU (bands of 128 rows
/// 5% faster than one wave of 1171) and on half the rows (one wave of 587 rows
/// 4% faster than bands of 64).
constexpr double kStreamTail = 0.2;

/// The band (rows) that finishes `depth` sweeps of `rows` rows first, for
/// `strip_blocks` blocks side by side and `resident_blocks` blocks the GPU runs
/// at once: the blocks' walks shared by the resident slots (a GPU not full is
/// no faster: each warp's speed is its latency's), then the tail.
inline std::int64_t stream_band(std::int64_t rows, std::int64_t strip_blocks, std::int64_t resident_blocks,
                                int depth) {
  const std::int64_t shortest = 4 * static_cast<std::int64_t>(depth);
  if (rows <= shortest || strip_blocks < 1 || resident_blocks < 1) return rows < 1 ? 1 : rows;
  std::int64_t best = rows;
  double best_cost = -1.0;
  // Of the bands that cut the rows into `bands`, the shortest costs least; from
  // one band up, so that of equal costs the longest wins (fewest rows swept twice).
  const std::int64_t most = (rows + shortest - 1) / shortest;
  for (std::int64_t bands = 1; bands <= most; ++bands) {
    const std::int64_t even = (rows + bands - 1) / bands;
    const std::int64_t band = even < shortest ? shortest : even;
    const std::int64_t blocks = strip_blocks * bands;
    const double waves = static_cast<double>(blocks > resident_blocks ? blocks : resident_blocks) /
                         static_cast<double>(resident_blocks);
    const double cost = (waves + kStreamTail) * static_cast<double>(band + 2 * depth);
    if (best_cost < 0.0 || cost < best_cost) {
      best = band;
      best_cost = cost;
    }
  }
  return best;
}

}  // namespace hetstencil::cuda
