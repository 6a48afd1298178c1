// The CPU sweep of any stencil description (core/stencil_terms.hpp), on a slab
// of whole units of the split axis (rows of a 2-D grid, planes of a 3-D one)
// laid out as a grid of its own: GridShape with the slab's units on the split
// axis and a ring `depth` deep, whose ghost units hold the neighbours' values
// or the boundary. The points' linear offsets are the grid's, so one table
// serves every slab of a grid.
//
// A row is updated point by point: out[j] = w_0 u[j + o_0], then
// out[j] = out[j] + w_k u[j + o_k] for each later point, then
// out[j] = (out[j] + s f[j]) / d. Each pass is a plain loop the compiler
// vectorizes, and every cell sees the operations of StencilTerms::update in
// its order, so the bits equal the sequential reference's for any split.
#pragma once

#include <cstdint>

#include "core/stencil_terms.hpp"
#include "hetstencil/grid.hpp"

namespace hetstencil {

/// s*f of a slab: per value of the slab (nullptr: zero) and the slab's index of
/// the spike (s*f = 1 there), or -1.
template <class T>
struct SlabSource {
  const T* sf = nullptr;
  std::int64_t spike_index = -1;
};

/// Updates the interior cells of the slab's interior units [begin, end)
/// (0-based, ghost units not counted) from `in` into `out`; both are laid out
/// as `slab`. Workers may sweep disjoint unit ranges of one slab at once.
template <class T>
void sweep_units(const StencilTerms<T>& terms, const GridShape& slab, const T* __restrict in, T* __restrict out,
                 const SlabSource<T>& source, std::int64_t begin, std::int64_t end) {
  const std::int64_t d = slab.depth;
  const bool three_d = slab.dimension() == 3;
  const std::int64_t nx = slab.nx;
  const std::size_t points = terms.offsets.size();
  const T diagonal = terms.diagonal;
  for (std::int64_t unit = begin; unit < end; ++unit) {
    const std::int64_t first_row = three_d ? d : d + unit;
    const std::int64_t last_row = three_d ? d + slab.ny - 1 : d + unit;
    const std::int64_t plane = three_d ? d + unit : 0;
    for (std::int64_t i = first_row; i <= last_row; ++i) {
      const std::int64_t row = (plane * slab.rows() + i) * slab.cols() + d;  // the row's first interior value
      const T* __restrict u = in + row;
      T* __restrict o = out + row;
      {
        const T w = terms.weights[0];
        const T* __restrict p = u + terms.offsets[0];
        for (std::int64_t j = 0; j < nx; ++j) o[j] = w * p[j];
      }
      for (std::size_t k = 1; k < points; ++k) {
        const T w = terms.weights[k];
        const T* __restrict p = u + terms.offsets[k];
        for (std::int64_t j = 0; j < nx; ++j) o[j] = o[j] + w * p[j];
      }
      if (source.sf) {
        const T* __restrict f = source.sf + row;
        for (std::int64_t j = 0; j < nx; ++j) o[j] = (o[j] + f[j]) / diagonal;
      } else {
        for (std::int64_t j = 0; j < nx; ++j) o[j] = (o[j] + T(0)) / diagonal;
        const std::int64_t spike = source.spike_index - row;
        if (spike >= 0 && spike < nx) o[spike] = terms.update(u + spike, T(1));
      }
    }
  }
}

}  // namespace hetstencil
