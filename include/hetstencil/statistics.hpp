/// \file
/// Statistics of timing samples, as the library takes them.
#pragma once

#include <vector>

namespace hetstencil {

/// The median of samples (the mean of the middle two for an even count);
/// throws InvalidArgument for none.
double median(std::vector<double> values);

}  // namespace hetstencil
