#include "model/learn.hpp"

namespace hetstencil {

int learn(Profile& profile, const Report& report, double weight) {
  if (report.iterations <= 0) return 0;
  int moved = 0;
  for (const DeviceReport& d : report.devices) {
    const auto device = profile.devices.find(d.name);
    if (device == profile.devices.end()) continue;
    const auto curve = device->second.rates.find(rate_key(report.precision, report.nx));
    if (curve == device->second.rates.end() || d.rows < 1) continue;
    const double measured = d.compute_s / static_cast<double>(report.iterations);
    const double expected = curve->second.seconds(d.rows);
    if (!(measured > 0.0) || measured > 4.0 * expected || 4.0 * measured < expected) continue;
    curve->second.update(d.rows, measured, weight);
    ++moved;
  }
  return moved;
}

}  // namespace hetstencil
