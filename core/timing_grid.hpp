// A grid to time sweeps on: values in [0.5, 1.5), no zeros and none of the
// subnormals a point load decays into, which can time differently from real data.
#pragma once

#include <cstdint>

#include "hetstencil/grid.hpp"

namespace hetstencil {

/// Made by a multiplicative hash of the index rather than a random engine:
/// std::mt19937 with a uniform distribution takes 4.6 s for a 16384^2 float grid
/// on a 2-core VM, most of a calibration's budget; this takes 0.2 s.
template <class T>
Grid<T> timing_grid(const GridShape& shape) {
  Grid<T> g(shape);
  T* v = g.data();
  const std::int64_t count = shape.values();
  for (std::int64_t k = 0; k < count; ++k) {
    const std::uint32_t hash = static_cast<std::uint32_t>(k) * 2654435761u;  // Knuth's multiplier
    v[k] = static_cast<T>(0.5 + static_cast<double>(hash >> 8) / 16777216.0);
  }
  return g;
}

/// A 2-D ny x nx grid, its ring one deep.
template <class T>
Grid<T> timing_grid(std::int64_t ny, std::int64_t nx) {
  return timing_grid<T>(GridShape{0, ny, nx, 1});
}

}  // namespace hetstencil
