#include "model/learn.hpp"

#include <algorithm>

#include "model/curves.hpp"

namespace hetstencil {
namespace {

constexpr double kSlowdownForgottenPerRun = 0.05;

}  // namespace

int learn(Profile& profile, const Report& report, double weight, const VariantChoice& variant) {
  if (report.iterations <= 0 || !report.poisson5) return 0;
  const std::size_t n = report.devices.size();
  const auto kind = [&](const DeviceReport& d) {
    const auto it = profile.devices.find(d.name);
    return it == profile.devices.end() ? DeviceKind::Cpu : kind_of(it->second);
  };
  const bool gpus = std::any_of(report.devices.begin(), report.devices.end(),
                                [&](const DeviceReport& d) { return kind(d) == DeviceKind::Gpu; });
  int moved = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const DeviceReport& d = report.devices[k];
    const auto device = profile.devices.find(d.name);
    if (device == profile.devices.end()) continue;
    DeviceProfile& dp = device->second;
    const auto curve = dp.rates.find(rate_key(report.precision, report.nx, swept_by(kind_of(dp), variant)));
    if (curve == dp.rates.end() || d.rows < 1) continue;
    const int neighbours = (k > 0 ? 1 : 0) + (k + 1 < n ? 1 : 0);
    const std::int64_t swept = rows_swept(d.rows, neighbours, variant);
    double measured = d.compute_s / static_cast<double>(report.iterations);
    const double expected = curve->second.seconds(swept);
    if (!(measured > 0.0) || !(expected > 0.0)) continue;
    // A CPU device priced by what the others swept meanwhile
    // (SplitModel::share_memory) is learnt as if they swept as many rows as
    // it: its time scaled by its curve's over what the model priced.
    if (dp.rest.count(curve->first) && report.predicted) {
      for (const DevicePrediction& p : report.predicted->devices) {
        if (p.name == d.name && p.compute_s > 0.0) measured *= expected / p.compute_s;
      }
    }
    if (gpus && kind_of(dp) == DeviceKind::Cpu) {
      // Its curve was calibrated beside loaded GPUs and stays; what moves
      // is how much slower it can be: its slow iterations (the GPU waits for
      // those, not for its mean: on the H100 host a CPU share whose mean sweep
      // is within 2% of its curve and 17% under the GPU's makes it wait 0.05 ms
      // an iteration) in the slowest run, forgotten slowly: a slowdown returns
      // after faster runs (H100 host: 2.3x slower than its curve five runs
      // after a 2.6x one), and a share sized for the faster runs makes the GPUs
      // wait. A whole run's average is no spike: runs 4x slower than the
      // curve happen there.
      // Rows its curve sweeps in a cache may sweep at the curve's pace past
      // it, where others share the cache: the prediction gives that figure
      // beside its own (SplitModel::price_uncached), so a run up to that pace
      // is no slowdown, lest the second figure count the cache twice.
      const double past_cache = curve->second.slowest_row_s(swept) * static_cast<double>(swept);
      const double paced = past_cache >= kCacheStep * expected ? past_cache : expected;
      const double slow = std::max(measured, d.compute_p90_s);
      const double forgotten = 1.0 + (dp.slowdown_beside_gpus - 1.0) * (1.0 - kSlowdownForgottenPerRun);
      dp.slowdown_beside_gpus = std::max({1.0, slow / paced, forgotten});
    } else if (measured <= 4.0 * expected && 4.0 * measured >= expected) {
      curve->second.update(swept, measured, weight);
    } else {
      continue;
    }
    ++moved;
  }
  return moved;
}

}  // namespace hetstencil
