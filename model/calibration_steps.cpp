#include "model/calibration_steps.hpp"

#include <algorithm>
#include <cmath>

#include "devices/backend.hpp"
#include "devices/sync.hpp"
#include "model/tune.hpp"

namespace hetstencil {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

DeviceProfile& entry_of(Profile& profile, const DeviceInfo& info) {
  DeviceProfile& d = profile.devices[device_key(info)];
  d.name = info.name;
  return d;
}

std::unique_ptr<Device> device_for(const Topology& topology, const DeviceSpec& spec) {
  return make_device(spec, spin_limit_for(spec.info.threads, topology.hardware_threads()));
}

Tuning tuning_of(const CalibrationOptions& o, const Device& device, const StencilJob& job) {
  const std::string& name = device.info().name;
  return usable_tuning(name, device.tunables(job), tuned_values(o.tuned, name, job.stencil, job.precision));
}

StencilJob timing_job(const CalibrationOptions& o, Precision precision, std::int64_t units) {
  StencilJob job;
  job.precision = precision;
  job.nx = o.nx;
  job.stencil = o.stencil;
  job.poisson5 = is_poisson5(o.stencil);
  const bool planes = o.stencil.dimension == 3;
  job.ny = planes ? o.ny : units;
  job.nz = planes ? units : 0;
  return job;
}

Problem problem_of(const CalibrationOptions& o, Precision precision) {
  Problem p;
  p.stencil = o.stencil;
  p.precision = precision;
  p.nx = o.nx;
  p.ny = o.stencil.dimension == 3 ? o.ny : o.nx;
  p.nz = o.stencil.dimension == 3 ? 1 : 0;
  return p;
}

std::vector<std::int64_t> row_counts(std::int64_t most, const std::vector<std::int64_t>& extra) {
  std::vector<std::int64_t> rows;
  for (std::int64_t r = 4; r < most; r *= 2) rows.push_back(r);
  rows.push_back(most);
  for (std::int64_t r : extra) {
    if (r >= 1 && r < most) rows.push_back(r);
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

std::int64_t edge_point(const std::vector<std::int64_t>& rows, const std::vector<double>& seconds) {
  const std::size_t points = std::min(rows.size(), seconds.size());
  const auto measured = [&](std::size_t i) { return seconds[i] > 0.0 && std::isfinite(seconds[i]); };
  double slowest = 0.0;
  for (std::size_t i = 0; i < points; ++i) slowest = measured(i) ? std::max(slowest, seconds[i]) : slowest;
  std::int64_t split = 0;
  double widest = 0.0;  // seconds
  for (std::size_t i = 0; i + 1 < points; ++i) {
    if (!measured(i) || !measured(i + 1)) continue;
    // Two neighbours too close leave no row count between them worth a point.
    if (rows[i + 1] - rows[i] < 2) continue;
    const auto lo = static_cast<double>(rows[i]);
    const auto hi = static_cast<double>(rows[i + 1]);
    if (hi < kEdgeLeastSpan * lo) continue;
    // The upper point's time beyond the lower point's pace: half of it is
    // what the interpolation halfway between them may be off.
    const double at_lower_pace = seconds[i] * hi / lo;
    const double excess = seconds[i + 1] - at_lower_pace;
    if (excess > kEdgePaceRise * at_lower_pace && excess > kEdgeLeastExcess * slowest && excess > widest) {
      widest = excess;
      split = rows[i] + (rows[i + 1] - rows[i]) / 2;
    }
  }
  return split;
}

std::vector<double> no_faster_than_below(const std::vector<std::int64_t>& rows, std::vector<double> seconds,
                                         const std::map<std::int64_t, std::int64_t>& below) {
  const auto index_of = [&](std::int64_t r) {
    return static_cast<std::size_t>(std::lower_bound(rows.begin(), rows.end(), r) - rows.begin());
  };
  // Ascending, so that a point added below another added one is raised first.
  for (std::size_t i = 0; i < rows.size() && i < seconds.size(); ++i) {
    const auto added = below.find(rows[i]);
    if (added == below.end()) continue;
    const std::size_t j = index_of(added->second);
    if (j >= i || rows[j] != added->second || !(seconds[j] > 0.0)) continue;
    seconds[i] = std::max(seconds[i], seconds[j] * static_cast<double>(rows[i]) / static_cast<double>(rows[j]));
  }
  return seconds;
}

}  // namespace hetstencil
