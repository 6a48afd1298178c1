// The sequential reference: plain loops, one thread, no cleverness. Every device
// and every split is tested against it bit for bit.
#include "hetstencil/reference.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <variant>

#include "core/dispatch.hpp"
#include "core/residual.hpp"
#include "core/source_term.hpp"
#include "core/stencil_terms.hpp"

namespace hetstencil {
namespace {

// The interior of a grid: planes (one in 2-D), rows and columns, ring excluded.
struct Interior {
  std::int64_t first_plane, last_plane, first, last_row, last_col;

  explicit Interior(const GridShape& shape)
      : first_plane(shape.dimension() == 3 ? shape.depth : 0),
        last_plane(shape.dimension() == 3 ? shape.depth + shape.nz - 1 : 0),
        first(shape.depth),
        last_row(shape.depth + shape.ny - 1),
        last_col(shape.depth + shape.nx - 1) {}
};

// A stencil's update and residual at the grid's value `index`: the constant
// weights, or a variable stencil's own (core/stencil_terms.hpp).
template <class T>
struct CellTerms {
  const StencilTerms<T>& terms;
  const CoefficientTerms<T>& coefficients;

  T update(const T* u, std::int64_t index, T sf) const {
    if (coefficients.values.empty()) return terms.update(u + index, sf);
    return terms.update(u + index, coefficients.at(index), coefficients.stride, sf);
  }
  T residual(const T* u, std::int64_t index, T sf) const {
    if (coefficients.values.empty()) return terms.residual(u + index, sf);
    return terms.residual(u + index, coefficients.at(index), coefficients.stride, sf);
  }
};

template <class T>
Residual residual_of(const Problem& p, const Grid<T>& u, const SourceTerm<T>& source, const CellTerms<T>& terms) {
  const GridShape& shape = u.shape();
  const Interior in(shape);
  const bool three_d = shape.dimension() == 3;
  std::vector<double> sums;  // of rows in 2-D, of planes in 3-D
  double max_abs = 0.0;
  for (std::int64_t k = in.first_plane; k <= in.last_plane; ++k) {
    double plane_sum = 0.0;
    for (std::int64_t i = in.first; i <= in.last_row; ++i) {
      const std::int64_t row = (k * shape.rows() + i) * shape.cols();
      const RowResidual r = residual_segments<T>(in.first, shape.nx, [&](std::int64_t j) {
        return terms.residual(u.data(), row + j, source.at_index(row + j));
      });
      if (three_d) {
        plane_sum += r.sum_sq;
      } else {
        sums.push_back(r.sum_sq);
      }
      max_abs = std::max(max_abs, r.max_abs);
    }
    if (three_d) sums.push_back(plane_sum);
  }
  double l2_divisor = 0.0;
  double max_divisor = 0.0;
  residual_divisors(p.stencil.source_scale, shape.dimension(), p.h(), l2_divisor, max_divisor);
  return finish_residual(sums.data(), static_cast<std::int64_t>(sums.size()), max_abs, l2_divisor, max_divisor);
}

template <class T>
Result reference_solve(const Problem& p) {
  const auto start = std::chrono::steady_clock::now();
  const SourceTerm<T> source = make_source_term<T>(p);
  Grid<T> u = initial_grid<T>(p);
  Grid<T> v = u;
  const StencilTerms<T> constant = stencil_terms<T>(p.stencil, u.shape());
  const CoefficientTerms<T> coefficients = make_coefficient_terms<T>(p);
  const CellTerms<T> terms{constant, coefficients};
  const Interior in(u.shape());
  Report report;
  Residual r0;
  for (std::int64_t t = 0;; ++t) {
    if (p.stop.checks_at(t)) {
      const Residual r = residual_of(p, u, source, terms);
      if (t == 0) r0 = r;
      report.residual = r;
      report.iterations = t;
      if (stops_after_check(p.stop, t, r, r0)) {
        report.converged = tolerance_met(p.stop, t, r, r0);
        break;
      }
    }
    for (std::int64_t k = in.first_plane; k <= in.last_plane; ++k) {
      for (std::int64_t i = in.first; i <= in.last_row; ++i) {
        const std::int64_t row = (k * u.rows() + i) * u.cols();
        for (std::int64_t j = in.first; j <= in.last_col; ++j) {
          v.data()[row + j] = terms.update(u.data(), row + j, source.at_index(row + j));
        }
      }
    }
    std::swap(u, v);
  }
  report.nx = p.nx;
  report.ny = p.ny;
  report.precision = p.precision;
  report.initial_residual = r0;
  report.solve_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The split axis is the slowest: rows in 2-D, planes in 3-D.
  const std::int64_t split = p.units();
  report.devices.push_back(DeviceReport{"reference", 1, split, report.solve_s, 0.0, 0.0, report.solve_s});
  return Result{report, std::move(u)};
}

}  // namespace

template <class T>
Grid<T> initial_grid(const Problem& p) {
  Grid<T> u(p.shape());
  const Interior in(u.shape());
  const bool three_d = u.shape().dimension() == 3;
  const double h = p.h();
  // Physical coordinates: the first interior value sits at h, the ring around it.
  auto x = [&](std::int64_t index) { return static_cast<double>(index - u.depth() + 1) * h; };
  for (std::int64_t k = 0; k < u.planes(); ++k) {
    for (std::int64_t i = 0; i < u.rows(); ++i) {
      for (std::int64_t j = 0; j < u.cols(); ++j) {
        const bool inside = k >= in.first_plane && k <= in.last_plane && i >= in.first && i <= in.last_row &&
                            j >= in.first && j <= in.last_col;
        if (inside) continue;
        u(k, i, j) = static_cast<T>(three_d ? p.boundary.at(x(j), x(i), x(k)) : p.boundary.at(x(j), x(i)));
      }
    }
  }
  return u;
}

template <class T>
Residual residual(const Problem& p, const Grid<T>& u) {
  const StencilTerms<T> constant = stencil_terms<T>(p.stencil, u.shape());
  const CoefficientTerms<T> coefficients = make_coefficient_terms<T>(p);
  return residual_of(p, u, make_source_term<T>(p), CellTerms<T>{constant, coefficients});
}

Result solve_reference(const Problem& p) {
  p.validate();
  return dispatch(p.precision, [&](auto zero) { return reference_solve<decltype(zero)>(p); });
}

template Grid<float> initial_grid<float>(const Problem&);
template Grid<double> initial_grid<double>(const Problem&);
template Residual residual<float>(const Problem&, const Grid<float>&);
template Residual residual<double>(const Problem&, const Grid<double>&);

bool same_bits(const Solution& a, const Solution& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto& x) {
        const auto& y = std::get<std::decay_t<decltype(x)>>(b);
        return x.planes() == y.planes() && x.rows() == y.rows() && x.cols() == y.cols() &&
               std::memcmp(x.data(), y.data(), x.values().size() * sizeof(x.values()[0])) == 0;
      },
      a);
}

}  // namespace hetstencil
