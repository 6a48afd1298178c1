/// \file
/// The sequential reference: the plain loops of the update, one thread. It is the
/// oracle every device and every split is compared with, bit for bit.
#pragma once

#include "hetstencil/export.hpp"
#include "hetstencil/grid.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/report.hpp"

namespace hetstencil {

/// Runs the problem's stop rule on one thread and returns the final iterate.
HETSTENCIL_API Result solve_reference(const Problem& problem);

/// The residual of u for the problem (the same definition and order the devices use).
template <class T>
HETSTENCIL_API Residual residual(const Problem& problem, const Grid<T>& u);

/// Whether two solutions hold the same precision, shape and bits (not just
/// equal values: -0 and +0 differ, as a bitwise-exact runtime must notice).
HETSTENCIL_API bool same_bits(const Solution& a, const Solution& b);

/// The initial iterate: zero inside, the boundary values on the ring.
template <class T>
HETSTENCIL_API Grid<T> initial_grid(const Problem& problem);

}  // namespace hetstencil
