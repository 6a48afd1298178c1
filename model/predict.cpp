#include "model/predict.hpp"

#include <algorithm>

#include "hetstencil/error.hpp"

namespace hetstencil {

Prediction predict(const Profile& profile, const std::vector<PlannedDevice>& devices, Precision precision,
                   std::int64_t nx, const StopRule& stop) {
  Prediction out;
  out.iterations = stop.max_iterations;
  for (std::int64_t t = 0; t <= stop.max_iterations; ++t) out.checks += stop.checks_at(t) ? 1 : 0;
  const double row_bytes = static_cast<double>((nx + 2) * static_cast<std::int64_t>(value_bytes(precision)));
  auto link = [&](const std::string& from, const std::string& to) {
    const auto it = profile.links.find(link_key(from, to));
    if (it != profile.links.end()) return it->second.seconds(row_bytes);
    out.notes.push_back("no figure for the link " + link_key(from, to) + ": taken as free");
    return 0.0;
  };
  // From having its ghost rows to publishing its edge rows.
  std::vector<double> ready(devices.size(), 0.0);
  for (std::size_t k = 0; k < devices.size(); ++k) {
    const PlannedDevice& d = devices[k];
    const auto curve = profile.rate(d.name, precision, nx);
    if (!curve) {
      HETSTENCIL_THROW(InvalidArgument, "the profile has no " + to_string(precision) + " rate curve for " + d.name +
                                            " (run hetstencil calibrate)");
    }
    DevicePrediction p;
    p.name = d.name;
    p.rows = d.rows;
    p.compute_s = curve->seconds(d.rows);
    for (std::size_t nb : {k - 1, k + 1}) {
      if (nb >= devices.size()) continue;  // k - 1 wraps for k == 0
      p.exchange_s += link(devices[nb].name, d.name);
      const bool host_neighbour = devices[nb].kind == DeviceKind::Cpu;
      if (d.kind == DeviceKind::Gpu && host_neighbour) p.exchange_s += link(d.name, devices[nb].name);
    }
    const auto dev = profile.devices.find(d.name);
    double step = 0.0;
    if (dev != profile.devices.end() && dev->second.step.count(rate_key(precision, nx))) {
      step = dev->second.step.at(rate_key(precision, nx));
    } else {
      out.notes.push_back("no loop figure for " + d.name + ": its loop taken as free");
    }
    if (d.kind == DeviceKind::Gpu) {
      // The exchange runs while the interior sweeps: only what outlasts it
      // shows. The host's loop bounds the iteration from below.
      const double edges = curve->seconds(std::min<std::int64_t>(d.rows, 2));
      const double interior = curve->seconds(std::max<std::int64_t>(d.rows - 2, 0));
      const double overlapped = p.compute_s + std::max(0.0, edges + p.exchange_s - interior);
      p.exposed_s = std::max(overlapped, step) - p.compute_s;
      ready[k] = edges;
      const double slab = row_bytes * static_cast<double>(d.rows + 2);
      if (dev != profile.devices.end() && !dev->second.setup_in.empty()) {
        p.setup_s = dev->second.setup_in.seconds(slab);
        p.teardown_s = dev->second.setup_out.seconds(row_bytes * static_cast<double>(d.rows));
      } else {
        out.notes.push_back("no set-up figures for " + d.name + ": taken as free");
      }
    } else {
      p.exposed_s = p.exchange_s + step;  // after the sweep, behind a barrier
      ready[k] = p.compute_s + step;
    }
    p.iteration_s = p.compute_s + p.exposed_s;
    if (const auto check = profile.check(d.name, precision, nx)) {
      p.check_s = check->seconds(d.rows);
    } else {
      out.notes.push_back("no check figures for " + d.name + ": checks taken as free");
    }
    out.iteration_s = std::max(out.iteration_s, p.iteration_s);
    out.check_s = std::max(out.check_s, p.check_s);
    out.setup_s = std::max(out.setup_s, p.setup_s);
    out.teardown_s = std::max(out.teardown_s, p.teardown_s);
    out.devices.push_back(p);
  }
  // Neighbours A and B each need the other's last iterate: over two iterations
  // the chain runs A's work, the trip to B, B's work, the trip back.
  for (std::size_t k = 0; k + 1 < devices.size(); ++k) {
    const std::string& a = devices[k].name;
    const std::string& b = devices[k + 1].name;
    out.iteration_s = std::max(out.iteration_s, 0.5 * (ready[k] + ready[k + 1] + link(a, b) + link(b, a)));
  }
  out.total_s = out.setup_s + static_cast<double>(out.iterations) * out.iteration_s +
                static_cast<double>(out.checks) * out.check_s + out.teardown_s;
  std::sort(out.notes.begin(), out.notes.end());
  out.notes.erase(std::unique(out.notes.begin(), out.notes.end()), out.notes.end());
  return out;
}

}  // namespace hetstencil
