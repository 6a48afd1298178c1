// The right-hand side as the devices use it: s*f in the problem's precision
// (s the stencil's source scale, h*h for poisson5), computed once on the host
// (in double, then rounded), or the inline spike.
#pragma once

#include <cstdint>
#include <vector>

#include "hetstencil/problem.hpp"

namespace hetstencil {

template <class T>
struct SourceTerm {
  std::vector<T> h2f;  ///< s*f over the whole grid (GridShape::values()), zero on the ring; empty for the spike
  std::int64_t spike_plane = -1;  ///< the spike's plane (0 in 2-D), -1 when none
  std::int64_t spike_row = -1;    ///< the spike's row, -1 when none
  std::int64_t spike_col = -1;    ///< the spike's column, -1 when none
  std::int64_t spike_index = -1;  ///< the spike's index in the grid's values, -1 when none

  /// s*f at (i, j) of a 2-D grid, as every kernel adds it.
  T at(std::int64_t i, std::int64_t j, std::int64_t cols) const { return at_index(i * cols + j); }
  /// s*f at the grid's value `index`.
  T at_index(std::int64_t index) const {
    if (!h2f.empty()) return h2f[static_cast<std::size_t>(index)];
    return index == spike_index ? T(1) : T(0);
  }
};

template <class T>
SourceTerm<T> make_source_term(const Problem& p) {
  SourceTerm<T> s;
  const GridShape shape = p.shape();
  const std::int64_t d = shape.depth;
  const bool three_d = shape.dimension() == 3;
  if (p.source.kind == Source::Kind::Spike) {
    s.spike_plane = three_d ? d - 1 + (p.nz + 1) / 2 : 0;
    s.spike_row = d - 1 + (p.ny + 1) / 2;
    s.spike_col = d - 1 + (p.nx + 1) / 2;
    s.spike_index = (s.spike_plane * shape.rows() + s.spike_row) * shape.cols() + s.spike_col;
    return s;
  }
  const double h = p.h();
  const double scale = p.stencil.source_scale.at(h);
  // Physical coordinates: the first interior value sits at h, the ring around it.
  auto coordinate = [&](std::int64_t index) { return static_cast<double>(index - d + 1) * h; };
  s.h2f.assign(static_cast<std::size_t>(shape.values()), T(0));
  const std::int64_t first_plane = three_d ? d : 0;
  const std::int64_t last_plane = three_d ? d + p.nz - 1 : 0;
  for (std::int64_t k = first_plane; k <= last_plane; ++k) {
    for (std::int64_t i = d; i < d + p.ny; ++i) {
      for (std::int64_t j = d; j < d + p.nx; ++j) {
        double f = 0.0;
        if (p.source.kind == Source::Kind::Grid) {
          f = p.source.values[static_cast<std::size_t>(((k - first_plane) * p.ny + (i - d)) * p.nx + (j - d))];
        } else if (three_d) {
          f = p.source.function3(coordinate(j), coordinate(i), coordinate(k));
        } else {
          f = p.source.function(coordinate(j), coordinate(i));
        }
        s.h2f[static_cast<std::size_t>((k * shape.rows() + i) * shape.cols() + j)] = static_cast<T>(scale * f);
      }
    }
  }
  return s;
}

}  // namespace hetstencil
