// Statistics that one bad sample cannot poison.
#pragma once

#include <vector>

#include "hetstencil/statistics.hpp"

namespace hetstencil {

/// The value that a fraction `q` (0..1) of the samples do not exceed (nearest rank).
double percentile(std::vector<double> values, double q);

/// Median absolute deviation from the median, scaled by 1.4826 so that it
/// estimates the standard deviation of normal data.
double mad(const std::vector<double>& values);

/// The samples within `k` scaled MADs of the median (all of them when the MAD
/// is zero, i.e. when more than half are equal).
std::vector<double> without_outliers(const std::vector<double>& values, double k = 3.0);

/// The mean of the samples that survive outlier rejection: what every timing
/// in the model is. A 70 ms spike among 1 ms samples changes nothing; the
/// mean, not the median, because a solve's time is the sum of its sweeps
/// (a CPU device's samples on a shared host spread by 1.5-2x, skewed slow).
double robust_time(const std::vector<double>& values);

}  // namespace hetstencil
