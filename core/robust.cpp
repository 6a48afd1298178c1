#include "core/robust.hpp"

#include <algorithm>
#include <cmath>

#include "hetstencil/error.hpp"

namespace hetstencil {

double median(std::vector<double> values) {
  if (values.empty()) HETSTENCIL_THROW(InvalidArgument, "the median of no samples");
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

double percentile(std::vector<double> values, double q) {
  if (values.empty()) HETSTENCIL_THROW(InvalidArgument, "a percentile of no samples");
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
  const std::size_t k = std::min(values.size() - 1, rank > 0 ? rank - 1 : 0);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
  return values[k];
}

double mad(const std::vector<double>& values) {
  const double m = median(values);
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::fabs(v - m));
  return 1.4826 * median(deviations);
}

std::vector<double> without_outliers(const std::vector<double>& values, double k) {
  const double m = median(values);
  const double spread = mad(values);
  if (spread == 0.0) return values;
  std::vector<double> kept;
  for (double v : values) {
    if (std::fabs(v - m) <= k * spread) kept.push_back(v);
  }
  return kept;
}

double robust_time(const std::vector<double>& values) {
  const std::vector<double> kept = without_outliers(values);
  double sum = 0.0;
  for (double v : kept) sum += v;
  return sum / static_cast<double>(kept.size());
}

}  // namespace hetstencil
