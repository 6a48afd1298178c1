// A plan: which device owns which interior rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hetstencil {

/// Interior rows [first_row, first_row + rows) of the grid (1-based: row 0 is the
/// boundary) given to device `device` (an index into Runtime::devices()).
struct Assignment {
  std::size_t device = 0;
  std::int64_t first_row = 1;
  std::int64_t rows = 0;
};

/// Assignments in row order; together they cover rows 1..ny exactly once.
/// Neighbouring assignments exchange ghost rows every iteration.
struct Plan {
  std::vector<Assignment> parts;
};

}  // namespace hetstencil
