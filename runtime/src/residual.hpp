// The residual's one definition, shared by the reference and every device.
//
// For interior cell (i, j), rho = h*h*f - (4 u - (((n + s) + w) + e)), in double,
// so r = rho / h^2. A row's sum of rho^2 follows one fixed order: cell j goes to
// lane (j - 1) % 32, each lane adds its squares in column order, and the lanes
// are folded pairwise (lane l += lane l + 16, then 8, 4, 2, 1). A GPU warp does
// exactly this with a lane per thread and a shuffle-down reduction, a CPU with
// vector registers. Row sums are then added in row order. Whatever the split,
// the residual has the same bits, and so does every tolerance decision.
#pragma once

#include <cmath>
#include <cstdint>

#include "hetstencil/problem.hpp"
#include "hetstencil/report.hpp"

namespace hetstencil {

constexpr int kResidualLanes = 32;

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
  double lane[kResidualLanes] = {};
  double max_abs = 0.0;
  for (std::int64_t j0 = 1; j0 <= nx; j0 += kResidualLanes) {
    const int width = static_cast<int>(nx - j0 + 1 < kResidualLanes ? nx - j0 + 1 : kResidualLanes);
    for (int l = 0; l < width; ++l) {
      const std::int64_t j = j0 + l;
      const double f = h2f ? double(h2f[j]) : (j == spike_col ? 1.0 : 0.0);
      const double neighbours = ((double(n[j]) + double(s[j])) + double(c[j - 1])) + double(c[j + 1]);
      const double rho = f - (4.0 * double(c[j]) - neighbours);
      lane[l] += rho * rho;
      max_abs = std::fmax(max_abs, std::fabs(rho));
    }
  }
  for (int half = kResidualLanes / 2; half >= 1; half /= 2) {
    for (int l = 0; l < half; ++l) lane[l] += lane[l + half];
  }
  return {lane[0], max_abs};
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
