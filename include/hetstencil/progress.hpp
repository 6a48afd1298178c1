/// \file
/// The residual of an iterate, and a look at a solve in flight.
#pragma once

#include <cstdint>

namespace hetstencil {

/// The discrete residual r = f - A u over the interior, A u = (4u - neighbours) / h^2.
/// Thread safety (this and Progress): a value, safe to copy across threads.
/// l2 is the grid norm sqrt(h^2 * sum r^2), max the largest |r|. The sum follows one
/// fixed order (see core/residual.hpp), so every split gives the same bits.
struct Residual {
  double l2 = 0.0;   ///< sqrt(h^2 * sum r^2)
  double max = 0.0;  ///< max |r|
};

/// A look at a solve in flight, for progress displays.
struct Progress {
  std::int64_t iteration = 0;       ///< iterates that every device has completed
  std::int64_t max_iterations = 0;  ///< the stop rule's most
  double elapsed_s = 0.0;           ///< since the iterations began
  bool checked = false;             ///< a residual check has been made (then `residual` is its result)
  Residual residual;                ///< of the last check, when `checked`
  Residual initial_residual;        ///< with a tolerance: the baseline the checks compare with
};

}  // namespace hetstencil
