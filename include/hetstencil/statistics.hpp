/// \file
/// Statistics of timing samples, as the library takes them.
#pragma once

#include <vector>

#include "hetstencil/export.hpp"

namespace hetstencil {

/// The median of samples (the mean of the middle two for an even count);
/// throws InvalidArgument for none.
HETSTENCIL_API double median(std::vector<double> values);

}  // namespace hetstencil
