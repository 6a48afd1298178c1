#include "model/learn.hpp"

namespace hetstencil {

int learn(Profile& profile, const Report& report, double weight, const VariantChoice& variant) {
  if (report.iterations <= 0) return 0;
  const std::size_t n = report.devices.size();
  int moved = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const DeviceReport& d = report.devices[k];
    const auto device = profile.devices.find(d.name);
    if (device == profile.devices.end()) continue;
    const auto curve =
        device->second.rates.find(rate_key(report.precision, report.nx, swept_by(kind_of(device->second), variant)));
    if (curve == device->second.rates.end() || d.rows < 1) continue;
    const int neighbours = (k > 0 ? 1 : 0) + (k + 1 < n ? 1 : 0);
    const std::int64_t swept = rows_swept(d.rows, neighbours, variant);
    const double measured = d.compute_s / static_cast<double>(report.iterations);
    const double expected = curve->second.seconds(swept);
    if (!(measured > 0.0) || measured > 4.0 * expected || 4.0 * measured < expected) continue;
    curve->second.update(swept, measured, weight);
    ++moved;
  }
  return moved;
}

}  // namespace hetstencil
