// The right-hand side as the devices use it: h*h*f in the problem's precision,
// computed once on the host (in double, then rounded), or the inline spike.
#pragma once

#include <cstdint>
#include <vector>

#include "hetstencil/problem.hpp"

namespace hetstencil {

template <class T>
struct SourceTerm {
  std::vector<T> h2f;  ///< (ny+2) x (nx+2), zero on the ring; empty for the spike
  std::int64_t spike_row = -1;
  std::int64_t spike_col = -1;

  /// h*h*f at (i, j), as every kernel adds it.
  T at(std::int64_t i, std::int64_t j, std::int64_t cols) const {
    if (!h2f.empty()) return h2f[static_cast<std::size_t>(i * cols + j)];
    return (i == spike_row && j == spike_col) ? T(1) : T(0);
  }
};

template <class T>
SourceTerm<T> make_source_term(const Problem& p) {
  SourceTerm<T> s;
  if (p.source.kind == Source::Kind::Spike) {
    s.spike_row = (p.ny + 1) / 2;
    s.spike_col = (p.nx + 1) / 2;
    return s;
  }
  const double h = p.h();
  const std::int64_t cols = p.nx + 2;
  s.h2f.assign(static_cast<std::size_t>((p.ny + 2) * cols), T(0));
  for (std::int64_t i = 1; i <= p.ny; ++i) {
    for (std::int64_t j = 1; j <= p.nx; ++j) {
      const double f = p.source.kind == Source::Kind::Function
                           ? p.source.function(static_cast<double>(j) * h, static_cast<double>(i) * h)
                           : p.source.values[static_cast<std::size_t>((i - 1) * p.nx + (j - 1))];
      s.h2f[static_cast<std::size_t>(i * cols + j)] = static_cast<T>(h * h * f);
    }
  }
  return s;
}

}  // namespace hetstencil
