// Variable-coefficient problems shared by the CPU and GPU exactness tests: a
// stencil made variable, with random coefficient grids (c_k in [0.5, 1.5],
// c_d such that D = d c_d is 1.5 to 3 times sum |w_k|: the Jacobi iteration contracts).
#pragma once

#include <cmath>
#include <random>
#include <vector>

#include "hetstencil/problem.hpp"

namespace hetstencil::testing_support {

/// p's stencil made variable (if it is not yet), with coefficient grids for p's sizes drawn from `seed`: the
/// diagonal's as a grid; the points' as grids, but for one point per stencil a
/// function of the coordinates (both kinds of field).
inline void make_variable(Problem& p, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> point(0.5, 1.5);
  // D = d c_d at least 1.5 sum |w_k| >= sum |a_k|: the iteration contracts.
  double reach = 0.0;
  for (const StencilPoint& q : p.stencil.points) reach += std::fabs(q.weight);
  const double least = 1.5 * reach / std::fabs(p.stencil.diagonal);
  std::uniform_real_distribution<double> diagonal(least, 2.0 * least);
  if (!p.stencil.variable) p.stencil.name += "~variable";
  p.stencil.variable = true;
  const auto grid = [&](std::uniform_real_distribution<double>& draw) {
    std::vector<double> values(static_cast<std::size_t>(p.cells()));
    for (double& v : values) v = draw(rng);
    return Source::from_grid(std::move(values));
  };
  p.coefficients.points.clear();
  for (std::size_t k = 0; k < p.stencil.points.size(); ++k) {
    if (k == 1) {
      p.coefficients.points.push_back(
          p.dimension() == 3 ? Source::from_function_3d([](double x, double y, double z) { return 1 + x * y * z; })
                             : Source::from_function([](double x, double y) { return 1 + x * y; }));
    } else {
      p.coefficients.points.push_back(grid(point));
    }
  }
  p.coefficients.diagonal = grid(diagonal);
}

}  // namespace hetstencil::testing_support
