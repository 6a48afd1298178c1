// The residual's one definition, shared by the reference and every device.
//
// For interior cell (i, j), rho = Poisson5::residual (core/stencil_update.hpp),
// h*h times f - A u in the problem's precision T (the iteration itself cannot
// resolve less), so r = rho / h^2. Any other stencil's rho is
// StencilTerms::residual (core/stencil_terms.hpp), s times f - A u, and
// r = rho / s. A row's sum of rho^2 follows one fixed order: the row is cut into
// segments of 128 cells (cells past nx count as 0); a segment's 128 squares are
// taken in T and added in T as a balanced tree of neighbours (cell k += cell
// k + h for every k that is a multiple of 2h, for h = 1, 2, 4, ..., 64); the
// segments' results are added in double in column order in groups of 8 (1024
// cells, the last group what is left), the groups' sums in column order; the
// rows' sums are added as a balanced binary tree over their indices
// (core/tree_sum.hpp), so that processes exchange a few nodes of it, not rows;
// a 3-D grid's rows are added in row order into its planes' sums, the planes
// like the rows of 2-D. A GPU block sweeps a group and adds it,
// so a check gathers 16 numbers a row of 16384 cells, not 128. Squares in T
// spare a GPU a conversion to double for every cell (16 a clock an SM), which
// cost a float sweep that checks every iteration 3% of its time on an H200. A
// segment's tree in float is exact
// to a few units in the last place, far below any tolerance a float iteration
// can reach. A float grid with |rho| above 1.8e19 has an infinite norm, which
// meets no tolerance. A GPU warp folds a segment while it sweeps it. Whatever
// the split, the residual has the same bits, and so does every tolerance decision.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/stencil_update.hpp"
#include "core/tree_sum.hpp"
#include "hetstencil/stencil.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/progress.hpp"

namespace hetstencil {

constexpr int kResidualSegment = 128;
constexpr int kResidualGroup = 8;  // segments

struct RowResidual {
  double sum_sq = 0.0;
  double max_abs = 0.0;
};

/// Residual of the row of columns first .. first + nx - 1, in the fixed order;
/// rho_at(j) is the cell's rho in T.
template <class T, class RhoAt>
RowResidual residual_segments(std::int64_t first, std::int64_t nx, RhoAt rho_at) {
  double row = 0.0;
  double group = 0.0;
  T max_abs = T(0);  // |rho| is exact in T, and so is its maximum
  const std::int64_t end = first + nx;
  for (std::int64_t j0 = first; j0 < end; j0 += kResidualSegment) {
    T cell[kResidualSegment];
    for (int k = 0; k < kResidualSegment; ++k) {
      const std::int64_t j = j0 + k;
      if (j >= end) {
        cell[k] = T(0);
        continue;
      }
      const T rho = rho_at(j);
      cell[k] = rho * rho;
      max_abs = std::fmax(max_abs, std::fabs(rho));
    }
    for (int h = 1; h < kResidualSegment; h *= 2) {
      for (int k = 0; k < kResidualSegment; k += 2 * h) cell[k] += cell[k + h];
    }
    group += double(cell[0]);
    const std::int64_t segment = (j0 - first) / kResidualSegment;
    if (segment % kResidualGroup == kResidualGroup - 1 || j0 + kResidualSegment >= end) {
      row += group;
      group = 0.0;
    }
  }
  return {row, double(max_abs)};
}

/// Residual of one row: n, c, s are the rows above, at and below (boundary
/// columns 0 and nx + 1 included); h2f is h*h*f for the row or nullptr (zero);
/// spike_col is the column where h*h*f = 1, or -1.
template <class T>
RowResidual residual_row(const T* n, const T* c, const T* s, const T* h2f, std::int64_t spike_col,
                         std::int64_t nx) {
  return residual_segments<T>(1, nx, [&](std::int64_t j) {
    const T f = h2f ? h2f[j] : (j == spike_col ? T(1) : T(0));
    return Poisson5<T>::residual(n[j], s[j], c[j - 1], c[j + 1], c[j], f);
  });
}

/// The residual norms from the sum of every squared rho:
/// l2 = sqrt(total) / l2_divisor, max = max_abs / max_divisor.
inline Residual residual_norms(double total, double max_abs, double l2_divisor, double max_divisor) {
  return {std::sqrt(total) / l2_divisor, max_abs / max_divisor};
}

/// The residual norms from the sums of n rows (planes in 3-D), added as their tree.
inline Residual finish_residual(const double* sums, std::int64_t n, double max_abs, double l2_divisor,
                                double max_divisor) {
  return residual_norms(tree_sum(sums, n), max_abs, l2_divisor, max_divisor);
}

/// The residual norms of poisson5 from the row sums of rows 1..ny: r = rho / h^2,
/// ||r||_2 = sqrt(sum r^2 h^2).
inline Residual finish_residual(const double* row_sums, std::int64_t ny, double max_abs, double h) {
  return finish_residual(row_sums, ny, max_abs, h, h * h);
}

/// The divisors of finish_residual for a stencil of scale s in `dimension`
/// dimensions: r = rho / s, ||r||_2 = sqrt(sum r^2 h^dimension); for s = h^2 in
/// 2-D exactly (h, h * h), as poisson5's.
inline void residual_divisors(const SourceScale& scale, int dimension, double h, double& l2_divisor,
                              double& max_divisor) {
  const double cell_side = dimension == 3 ? std::sqrt(h * h * h) : h;
  const double factor = std::fabs(scale.factor);
  l2_divisor = scale.times_h2 ? (dimension == 3 ? factor * (h * h / cell_side) : factor * h) : factor / cell_side;
  max_divisor = std::fabs(scale.at(h));
}

/// Whether iterate t with residual r meets the tolerance (r0: of iterate 0). An
/// infinite or NaN norm meets none, nor does any norm measured against one.
inline bool tolerance_met(const StopRule& stop, std::int64_t t, const Residual& r, const Residual& r0) {
  return stop.uses_tolerance() && t > 0 && std::isfinite(r0.l2) && r.l2 <= stop.tolerance * r0.l2;
}

/// Whether the residual of iterate t is infinite or NaN while iterate 0's is
/// finite: the iteration diverged (or the iterate overflowed), and no later
/// iterate meets the tolerance, its values staying infinite or NaN.
inline bool residual_blew_up(const StopRule& stop, std::int64_t t, const Residual& r, const Residual& r0) {
  return stop.uses_tolerance() && t > 0 && std::isfinite(r0.l2) && !std::isfinite(r.l2);
}

/// Whether a solve stops after checking iterate t: its last, one that meets
/// the tolerance, or one whose residual blew up.
inline bool stops_after_check(const StopRule& stop, std::int64_t t, const Residual& r, const Residual& r0) {
  return t >= stop.max_iterations || tolerance_met(stop, t, r, r0) || residual_blew_up(stop, t, r, r0);
}

}  // namespace hetstencil
