// The sequential reference: plain loops, one thread, no cleverness. Every device
// and every split is tested against it bit for bit.
#include "hetstencil/reference.hpp"

#include <chrono>
#include <cstring>
#include <variant>

#include "core/dispatch.hpp"
#include "core/residual.hpp"
#include "core/source_term.hpp"
#include "core/stencil_update.hpp"

namespace hetstencil {
namespace {

template <class T>
Residual residual_of(const Problem& p, const Grid<T>& u, const SourceTerm<T>& source) {
  std::vector<double> row_sums(static_cast<std::size_t>(p.ny));
  double max_abs = 0.0;
  for (std::int64_t i = 1; i <= p.ny; ++i) {
    const RowResidual r = residual_row<T>(u.row(i - 1), u.row(i), u.row(i + 1),
                                          source.h2f.empty() ? nullptr : source.h2f.data() + i * u.cols(),
                                          i == source.spike_row ? source.spike_col : -1, p.nx);
    row_sums[static_cast<std::size_t>(i - 1)] = r.sum_sq;
    max_abs = std::max(max_abs, r.max_abs);
  }
  return finish_residual(row_sums.data(), p.ny, max_abs, p.h());
}

template <class T>
Result reference_solve(const Problem& p) {
  const auto start = std::chrono::steady_clock::now();
  const SourceTerm<T> source = make_source_term<T>(p);
  Grid<T> u = initial_grid<T>(p);
  Grid<T> v = u;
  Report report;
  Residual r0;
  for (std::int64_t t = 0;; ++t) {
    if (p.stop.checks_at(t)) {
      const Residual r = residual_of(p, u, source);
      if (t == 0) r0 = r;
      report.residual = r;
      report.iterations = t;
      if (stops_after_check(p.stop, t, r, r0)) {
        report.converged = tolerance_met(p.stop, t, r, r0);
        break;
      }
    }
    for (std::int64_t i = 1; i <= p.ny; ++i) {
      for (std::int64_t j = 1; j <= p.nx; ++j) {
        v(i, j) = Poisson5<T>::update(u(i - 1, j), u(i + 1, j), u(i, j - 1), u(i, j + 1), source.at(i, j, u.cols()));
      }
    }
    std::swap(u, v);
  }
  report.nx = p.nx;
  report.ny = p.ny;
  report.precision = p.precision;
  report.initial_residual = r0;
  report.solve_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.devices.push_back(DeviceReport{"reference", 1, p.ny, report.solve_s, 0.0, 0.0, report.solve_s});
  return Result{report, std::move(u)};
}

}  // namespace

template <class T>
Grid<T> initial_grid(const Problem& p) {
  Grid<T> u(p.ny, p.nx);
  const double h = p.h();
  for (std::int64_t i = 0; i < u.rows(); ++i) {
    for (std::int64_t j = 0; j < u.cols(); ++j) {
      const bool ring = i == 0 || j == 0 || i == u.rows() - 1 || j == u.cols() - 1;
      if (ring) u(i, j) = static_cast<T>(p.boundary.at(static_cast<double>(j) * h, static_cast<double>(i) * h));
    }
  }
  return u;
}

template <class T>
Residual residual(const Problem& p, const Grid<T>& u) {
  return residual_of(p, u, make_source_term<T>(p));
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
        return x.rows() == y.rows() && x.cols() == y.cols() &&
               std::memcmp(x.data(), y.data(), x.values().size() * sizeof(x.values()[0])) == 0;
      },
      a);
}

}  // namespace hetstencil
