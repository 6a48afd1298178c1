// The band of the streamed blocked kernel (variant_kernels.cuh): how many rows
// each warp walks down. A warp starts its band `depth` rows early and ends it
// `depth` rows late to build up its K iterates, so every band costs its rows
// plus 2 x depth; short bands waste that, long ones leave SMs idle in the last
// wave of blocks. Plain C++, so that the choice is tested without a GPU.
#pragma once

#include <cstdint>

namespace hetstencil::cuda {

/// The band (rows) that finishes `depth` sweeps of `rows` rows first, for
/// `strip_blocks` blocks side by side and `resident_blocks` blocks the GPU runs
/// at once: blocks run in waves, each as long as one band's walk (a wave that
/// does not fill the GPU is no faster: each warp's speed is its latency's).
inline std::int64_t stream_band(std::int64_t rows, std::int64_t strip_blocks, std::int64_t resident_blocks,
                                int depth) {
  const std::int64_t shortest = 4 * static_cast<std::int64_t>(depth);
  if (rows <= shortest || strip_blocks < 1 || resident_blocks < 1) return rows < 1 ? 1 : rows;
  std::int64_t best = rows;
  std::int64_t best_cost = -1;
  // Of the bands that cut the rows into `bands`, the shortest costs least; from
  // one band up, so that of equal costs the longest wins (fewest rows swept twice).
  const std::int64_t most = (rows + shortest - 1) / shortest;
  for (std::int64_t bands = 1; bands <= most; ++bands) {
    const std::int64_t even = (rows + bands - 1) / bands;
    const std::int64_t band = even < shortest ? shortest : even;
    const std::int64_t waves = (strip_blocks * bands + resident_blocks - 1) / resident_blocks;
    const std::int64_t cost = waves * (band + 2 * depth);
    if (best_cost < 0 || cost < best_cost) {
      best = band;
      best_cost = cost;
    }
  }
  return best;
}

}  // namespace hetstencil::cuda
