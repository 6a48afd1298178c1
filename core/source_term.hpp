// The right-hand side as the devices use it: s*f in the problem's precision
// (s the stencil's source scale, h*h for poisson5), computed once on the host
// (in double, then rounded), or the inline spike; and a variable stencil's
// weights per cell, a_k = w_k c_k and D = d c_d (core/stencil_terms.hpp), made
// the same way.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "hetstencil/error.hpp"
#include "hetstencil/problem.hpp"

namespace hetstencil {

/// Calls visit(index, plane, row, column, value) for every interior cell of
/// p's grid, planes, rows and columns in order: index in the grid's values,
/// plane/row/column counted from the first interior cell (plane 0 in 2-D),
/// value the field's there (a grid's value, or its function at the cell's
/// coordinates). `field` is a function or a grid (Problem::validate checks it).
template <class Visit>
void visit_field(const Problem& p, const Source& field, Visit visit) {
  const GridShape shape = p.shape();
  const std::int64_t d = shape.depth;
  const bool three_d = shape.dimension() == 3;
  const double h = p.h();
  // Physical coordinates: the first interior value sits at h, the ring around it.
  auto coordinate = [&](std::int64_t index) { return static_cast<double>(index - d + 1) * h; };
  const std::int64_t first_plane = three_d ? d : 0;
  const std::int64_t last_plane = three_d ? d + p.nz - 1 : 0;
  for (std::int64_t k = first_plane; k <= last_plane; ++k) {
    for (std::int64_t i = d; i < d + p.ny; ++i) {
      for (std::int64_t j = d; j < d + p.nx; ++j) {
        double f = 0.0;
        if (field.kind == Source::Kind::Grid) {
          f = field.values[static_cast<std::size_t>(((k - first_plane) * p.ny + (i - d)) * p.nx + (j - d))];
        } else if (three_d) {
          f = field.function3(coordinate(j), coordinate(i), coordinate(k));
        } else {
          f = field.function(coordinate(j), coordinate(i));
        }
        visit((k * shape.rows() + i) * shape.cols() + j, k - first_plane, i - d, j - d, f);
      }
    }
  }
}

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
  const double scale = p.stencil.source_scale.at(p.h());
  s.h2f.assign(static_cast<std::size_t>(shape.values()), T(0));
  visit_field(p, p.source, [&](std::int64_t index, std::int64_t, std::int64_t, std::int64_t, double f) {
    s.h2f[static_cast<std::size_t>(index)] = static_cast<T>(scale * f);
  });
  return s;
}

/// Throws InvalidArgument naming what is wrong with p's coefficient fields
/// (Problem::coefficients): none may be given to a constant stencil; a variable
/// one needs one field per point and the diagonal's, each a function of p's
/// coordinates or a grid of its interior. Without `required`, a variable
/// stencil may have none yet (the model plans it without its grids).
void check_coefficients(const Problem& p, bool required);

/// x as the shortest text that reads back as x ("1e+300", "0.1", "nan").
inline std::string shortest(double x) {
  char text[32];
  const std::to_chars_result r = std::to_chars(text, text + sizeof text, x);
  return std::string(text, r.ptr);
}

/// A variable stencil's weights per cell: grids a_0 .. a_{K-1}, then D, each
/// laid out as the grid's values (zero on the ring), `stride` values apart.
/// Empty for a constant stencil.
template <class T>
struct CoefficientTerms {
  std::vector<T> values;
  std::int64_t stride = 0;  ///< values of one grid: GridShape::values()

  /// Where the cell of the grid's value `index` finds its a_0 (nullptr when empty).
  const T* at(std::int64_t index) const { return values.empty() ? nullptr : values.data() + index; }
};

/// The coefficient grids of p (Problem::coefficients) as a variable stencil's
/// weights in precision T: a_k = T(w_k c_k), D = T(d c_d), the products in
/// double. Throws InvalidArgument naming the field and the cell where a
/// coefficient or a_k is not finite, or D is not finite or is zero.
template <class T>
CoefficientTerms<T> make_coefficient_terms(const Problem& p) {
  CoefficientTerms<T> c;
  check_coefficients(p, true);
  if (!p.stencil.variable) return c;
  const GridShape shape = p.shape();
  const std::size_t points = p.stencil.points.size();
  c.stride = shape.values();
  c.values.assign(static_cast<std::size_t>(c.stride) * (points + 1), T(0));
  const auto fill = [&](std::size_t k, const Source& field, double factor, const std::string& name, bool divisor) {
    T* grid = c.values.data() + static_cast<std::int64_t>(k) * c.stride;
    visit_field(p, field, [&](std::int64_t index, std::int64_t plane, std::int64_t row, std::int64_t col, double v) {
      const T a = static_cast<T>(factor * v);
      grid[index] = a;
      if (std::isfinite(v) && std::isfinite(a) && (!divisor || a != T(0))) return;
      std::ostringstream what;
      what << "the stencil '" << p.stencil.name << "': coefficients." << name << " at interior cell (column "
           << col << ", row " << row;
      if (shape.dimension() == 3) what << ", plane " << plane;
      what << ") is " << shortest(v);
      if (std::isfinite(v)) {
        what << ", which times the " << (divisor ? "diagonal " : "weight ") << shortest(factor) << " gives "
             << shortest(static_cast<double>(a)) << " in " << to_string(p.precision);
      }
      what << "; " << (divisor ? "the diagonal's coefficients must be finite and make D = d c_d non-zero"
                               : "a point's coefficients must be finite and make a_k = w_k c_k finite");
      HETSTENCIL_THROW(InvalidArgument, what.str());
    });
  };
  for (std::size_t k = 0; k < points; ++k) {
    fill(k, p.coefficients.points[k], p.stencil.points[k].weight, "points[" + std::to_string(k) + "]", false);
  }
  fill(points, p.coefficients.diagonal, p.stencil.diagonal, "diagonal", true);
  return c;
}

/// Coefficient grids to time a variable stencil's sweeps on (calibration, the
/// benchmarks): c_k = c_d = 1 everywhere, so a_k = w_k and D = d; the memory
/// traffic of any grids. Empty for a constant stencil.
template <class T>
CoefficientTerms<T> timing_coefficients(const Stencil& stencil, const GridShape& shape) {
  CoefficientTerms<T> c;
  if (!stencil.variable) return c;
  c.stride = shape.values();
  c.values.reserve(static_cast<std::size_t>(c.stride) * (stencil.points.size() + 1));
  for (const StencilPoint& point : stencil.points) {
    c.values.insert(c.values.end(), static_cast<std::size_t>(c.stride), static_cast<T>(point.weight));
  }
  c.values.insert(c.values.end(), static_cast<std::size_t>(c.stride), static_cast<T>(stencil.diagonal));
  return c;
}

}  // namespace hetstencil
