// The update of any stencil description, written once (hetstencil/stencil.hpp):
//   u'(p) = (sum_k w_k u(p + o_k) + s f(p)) / d
//   rho   = s f(p) - (d u(p) - sum_k w_k u(p + o_k))
// in precision T, the sum in the description's order from its first term:
// the first term a product, every later one fused into the sum (`add_term`, one
// rounding, as a GPU's FFMA and a CPU's FMA instructions do it). For poisson5
// this is Poisson5 (core/stencil_update.hpp) bit for bit: weights of 1
// multiply exactly, so a fused term is the plain sum, and x / 4 and 0.25 * x
// are the same correctly rounded value.
// A variable stencil takes each cell's own weights and diagonal instead, a_k(p)
// = w_k c_k(p) and D(p) = d c_d(p), made once in double and rounded to T
// (core/source_term.hpp, CoefficientTerms), then the same operations:
//   u'(p) = (sum_k a_k(p) u(p + o_k) + s f(p)) / D(p)
//   rho   = s f(p) - (D(p) u(p) - sum_k a_k(p) u(p + o_k))
// Each grid a_k, then D, is laid out as the values of u (`stride` values
// apart), so a cell's a_k sits at the cell's index in grid k.
#pragma once

#include <cstdint>
#include <vector>

#include "core/stencil_update.hpp"
#include "hetstencil/grid.hpp"
#include "hetstencil/stencil.hpp"

namespace hetstencil {

template <class T>
struct StencilTerms {
  std::vector<std::int64_t> offsets;  ///< each point's offset in values of the grid's layout
  std::vector<T> weights;             ///< each point's weight, rounded to T
  T diagonal = T(0);                  ///< d, rounded to T

  /// sum_k w_k u[p + o_k], the first term first; p points at the cell.
  T neighbours(const T* p) const {
    T sum = weights[0] * p[offsets[0]];
    for (std::size_t k = 1; k < offsets.size(); ++k) sum = add_term(sum, weights[k], p[offsets[k]]);
    return sum;
  }
  /// The next iterate of the cell p points at; sf = s f there.
  T update(const T* p, T sf) const { return (neighbours(p) + sf) / diagonal; }
  /// s times the residual f - A u at the cell p points at.
  T residual(const T* p, T sf) const { return sf - (diagonal * p[0] - neighbours(p)); }

  /// A variable stencil's sum_k a_k(p) u[p + o_k]: a points at the cell's
  /// a_0, a_k is a[k * stride].
  T neighbours(const T* p, const T* a, std::int64_t stride) const {
    T sum = a[0] * p[offsets[0]];
    for (std::size_t k = 1; k < offsets.size(); ++k) {
      sum = add_term(sum, a[static_cast<std::int64_t>(k) * stride], p[offsets[k]]);
    }
    return sum;
  }
  /// A variable stencil's D(p), after the points' grids.
  T diagonal_at(const T* a, std::int64_t stride) const {
    return a[static_cast<std::int64_t>(offsets.size()) * stride];
  }
  /// A variable stencil's next iterate of the cell p points at.
  T update(const T* p, const T* a, std::int64_t stride, T sf) const {
    return (neighbours(p, a, stride) + sf) / diagonal_at(a, stride);
  }
  /// A variable stencil's s times the residual f - A u at the cell p points at.
  T residual(const T* p, const T* a, std::int64_t stride, T sf) const {
    return sf - (diagonal_at(a, stride) * p[0] - neighbours(p, a, stride));
  }
};

/// The stencil's terms for values laid out with lines `line` values apart and
/// planes `plane` values apart.
template <class T>
StencilTerms<T> stencil_terms(const Stencil& stencil, std::int64_t line, std::int64_t plane) {
  StencilTerms<T> terms;
  for (const StencilPoint& point : stencil.points) {
    terms.offsets.push_back(point.dz * plane + point.dy * line + point.dx);
    terms.weights.push_back(static_cast<T>(point.weight));
  }
  terms.diagonal = static_cast<T>(stencil.diagonal);
  return terms;
}

/// The stencil's terms for grids of `shape`, laid out as dense as the grid.
template <class T>
StencilTerms<T> stencil_terms(const Stencil& stencil, const GridShape& shape) {
  return stencil_terms<T>(stencil, shape.cols(), shape.rows() * shape.cols());
}

}  // namespace hetstencil
