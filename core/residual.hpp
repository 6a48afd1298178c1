// The residual's one definition, shared by the reference and every device.
//
// For interior cell (i, j), rho = Poisson5::residual (core/stencil_update.hpp),
// h*h times f - A u in the problem's precision (the iteration itself cannot
// resolve less), so r = rho / h^2; squares and sums are taken in double. A row's
// sum of rho^2 follows one fixed order: the row is cut into segments of 128
// cells (cells past nx count as 0); a segment's 128 squares are added as a
// balanced tree of neighbours (cell k += cell k + h for every k that is a
// multiple of 2h, for h = 1, 2, 4, ..., 64); the segments' results are added in
// column order, the rows in row order. A GPU warp folds a segment while it
// sweeps it: each thread adds its 4 cells, 5 shuffles add the threads. Whatever
// the split, the residual has the same bits, and so does every tolerance decision.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/stencil_update.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/progress.hpp"

namespace hetstencil {

constexpr int kResidualSegment = 128;

struct RowResidual {
  double sum_sq = 0.0;
  double max_abs = 0.0;
};

/// Residual of one row: n, c, s are the rows above, at and below (boundary
/// columns 0 and nx + 1 included); h2f is h*h*f for the row or nullptr (zero);
/// spike_col is the column where h*h*f = 1, or -1.
template <class T>
RowResidual residual_row(const T* n, const T* c, const T* s, const T* h2f, std::int64_t spike_col,
                         std::int64_t nx) {
  double row = 0.0;
  double max_abs = 0.0;
  for (std::int64_t j0 = 1; j0 <= nx; j0 += kResidualSegment) {
    double cell[kResidualSegment];
    for (int k = 0; k < kResidualSegment; ++k) {
      const std::int64_t j = j0 + k;
      if (j > nx) {
        cell[k] = 0.0;
        continue;
      }
      const T f = h2f ? h2f[j] : (j == spike_col ? T(1) : T(0));
      const double rho = double(Poisson5<T>::residual(n[j], s[j], c[j - 1], c[j + 1], c[j], f));
      cell[k] = rho * rho;
      max_abs = std::fmax(max_abs, std::fabs(rho));
    }
    for (int h = 1; h < kResidualSegment; h *= 2) {
      for (int k = 0; k < kResidualSegment; k += 2 * h) cell[k] += cell[k + h];
    }
    row += cell[0];
  }
  return {row, max_abs};
}

/// The residual norms from the row sums of rows 1..ny, added in row order.
inline Residual finish_residual(const double* row_sums, std::int64_t ny, double max_abs, double h) {
  double total = 0.0;
  for (std::int64_t i = 0; i < ny; ++i) total += row_sums[i];
  return {std::sqrt(total) / h, max_abs / (h * h)};
}

/// Whether iterate t with residual r meets the tolerance (r0: of iterate 0).
inline bool tolerance_met(const StopRule& stop, std::int64_t t, const Residual& r, const Residual& r0) {
  return stop.uses_tolerance() && t > 0 && r.l2 <= stop.tolerance * r0.l2;
}

/// Whether a solve stops after checking iterate t.
inline bool stops_after_check(const StopRule& stop, std::int64_t t, const Residual& r, const Residual& r0) {
  return t >= stop.max_iterations || tolerance_met(stop, t, r, r0);
}

}  // namespace hetstencil
