// The CPU sweep: one Jacobi update of a row, written so that GCC vectorizes the
// loop (contiguous unit-stride loads, no aliasing) while keeping the reference's
// order of operations. The build turns off FMA contraction (-ffp-contract=off),
// so the bits equal the sequential reference.
#pragma once

#include <cstdint>

namespace hetstencil {

/// out[j] for j in 1..nx from the rows above (n), at (c) and below (s); h2f is
/// h*h*f for the row or nullptr (zero); spike_col is where h*h*f = 1, or -1.
template <class T>
inline void jacobi_row(const T* __restrict n, const T* __restrict c, const T* __restrict s,
                       const T* __restrict h2f, std::int64_t spike_col, T* __restrict out, std::int64_t nx) {
  const T quarter = T(0.25);
  if (h2f) {
    for (std::int64_t j = 1; j <= nx; ++j) out[j] = quarter * ((((n[j] + s[j]) + c[j - 1]) + c[j + 1]) + h2f[j]);
  } else {
    for (std::int64_t j = 1; j <= nx; ++j) out[j] = quarter * ((((n[j] + s[j]) + c[j - 1]) + c[j + 1]) + T(0));
    if (spike_col > 0) {
      const std::int64_t j = spike_col;
      out[j] = quarter * ((((n[j] + s[j]) + c[j - 1]) + c[j + 1]) + T(1));
    }
  }
}

/// The bandwidth yardstick for jacobi_row: the same bytes read and written.
template <class T>
inline void copy_row(const T* __restrict c, T* __restrict out, std::int64_t nx) {
  for (std::int64_t j = 1; j <= nx; ++j) out[j] = c[j];
}

}  // namespace hetstencil
