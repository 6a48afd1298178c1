// The marches of the staged sweep (staged_codegen.hpp): how many planes each
// block walks. A march reads 2 x radius planes beyond its own, so short
// marches read more; a block takes a large part of an SM's shared memory, and
// a last wave that leaves some of the GPU's block slots empty takes as long as
// a full one: a block's pace is its ring's latency, not the memory's, so the
// blocks of that wave do not go faster for being fewer. Unlike the streamed
// blocked kernel's bands (stream_band.hpp), whose many small blocks share the
// slots as fractions of a wave, waves are counted whole. Plain C++, so that
// the choice is tested without a GPU.
#pragma once

#include <algorithm>
#include <cstdint>

namespace hetstencil::cuda {

/// The planes a march that finishes `units` planes first, for `tiles` blocks
/// side by side in a plane, `resident` blocks the GPU runs at once, marches of
/// at most `longest` planes and a stencil of `radius`: whole waves times the
/// planes a march reads. On an H200, star4 float (128 tiles, 264 slots), 512^2
/// planes: of 4 to 128 planes a march, this choice swept fastest at 32 to 512
/// planes (16 of 32, 32 of 64, 64 of 128, 128 of 256 and 512), where the
/// marches that make 1.45 waves of blocks took 1.2-1.3 times as long; in
/// double (256 tiles) it swept within 1.1% of the fastest.
inline std::int64_t staged_march(std::int64_t units, std::int64_t tiles, std::int64_t resident, std::int64_t longest,
                                 int radius) {
  longest = std::max<std::int64_t>(1, longest);
  if (units <= 1) return 1;
  if (tiles < 1 || resident < 1) return std::min(units, longest);
  const auto above = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
  // From the longest march down, so that of equal costs the longest wins
  // (fewest planes read twice).
  std::int64_t best = std::min(units, longest);
  std::int64_t best_cost = -1;
  for (std::int64_t planes = best; planes >= 1; --planes) {
    const std::int64_t waves = above(tiles * above(units, planes), resident);
    const std::int64_t cost = waves * (planes + 2 * static_cast<std::int64_t>(radius));
    if (best_cost < 0 || cost < best_cost) {
      best = planes;
      best_cost = cost;
    }
  }
  return best;
}

}  // namespace hetstencil::cuda
