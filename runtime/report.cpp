// A report with the prediction beside it: per device and in total, as a table
// or as JSON.
#include <algorithm>
#include <cmath>
#include <iterator>

#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

#include "core/schema.hpp"
#include "hetstencil/report.hpp"
#include "model/tune.hpp"

namespace hetstencil {
namespace {

/// Per iteration, in seconds. Measured: compute is the device's sweeps; exposed
/// exchange is the rest of its iterations (waiting for neighbours, copying ghost
/// rows), its checks left out. Predicted likewise: a device that finishes first
/// waits for the slowest. Predicted values are absent without a prediction.
struct DeviceFigures {
  double share = 0.0;
  double measured_compute = 0.0, measured_exposed = 0.0, measured_iteration = 0.0;
  std::optional<double> predicted_compute, predicted_exposed, predicted_iteration;
};

DeviceFigures figures_of(const Report& r, const DeviceReport& d) {
  const double iterations = static_cast<double>(std::max<std::int64_t>(r.iterations, 1));
  DeviceFigures f;
  f.share = static_cast<double>(d.rows) / static_cast<double>(r.ny);
  f.measured_compute = d.compute_s / iterations;
  f.measured_exposed = std::max(0.0, d.total_s - d.compute_s - d.check_s) / iterations;
  f.measured_iteration = f.measured_compute + f.measured_exposed;
  if (r.predicted) {
    const auto& all = r.predicted->devices;
    const auto p = std::find_if(all.begin(), all.end(), [&](const DevicePrediction& x) { return x.name == d.name; });
    if (p != all.end()) {
      // Neighbours wait for each other: every device's iteration is the
      // run's, what it does not sweep it waits or copies (as measured).
      f.predicted_compute = p->compute_s;
      f.predicted_iteration = std::max(p->iteration_s, r.predicted->iteration_s);
      f.predicted_exposed = *f.predicted_iteration - p->compute_s;
    }
  }
  return f;
}

double measured_total(const Report& r) { return r.setup_s + r.solve_s + r.teardown_s; }

std::string ms(const std::optional<double>& seconds) {
  return seconds ? fmt::format("{:.4f}", *seconds * 1e3) : std::string("-");
}

nlohmann::json or_null(const std::optional<double>& seconds) {
  return seconds ? nlohmann::json(*seconds) : nlohmann::json(nullptr);
}

}  // namespace

double iteration_s(const Report& r) { return r.solve_s / static_cast<double>(std::max<std::int64_t>(r.iterations, 1)); }

std::optional<double> predicted_iteration_s(const Report& r) {
  if (!r.predicted) return std::nullopt;
  const Prediction& p = *r.predicted;
  const double solve =
      p.fixed_s + static_cast<double>(p.iterations) * p.iteration_s + static_cast<double>(p.checks) * p.check_s;
  return solve / static_cast<double>(std::max<std::int64_t>(r.iterations, 1));
}

std::optional<double> uncached_iteration_s(const Report& r) {
  const std::optional<double> predicted = predicted_iteration_s(r);
  if (!predicted || r.predicted->uncached_iteration_s <= 0.0) return std::nullopt;
  const double more = r.predicted->uncached_iteration_s - r.predicted->iteration_s;
  return *predicted + more * static_cast<double>(r.predicted->iterations) /
                          static_cast<double>(std::max<std::int64_t>(r.iterations, 1));
}

double error_percent(double predicted, double measured) {
  return measured > 0.0 ? 100.0 * (predicted - measured) / measured : 0.0;
}

std::string host_disturbance(const Report& r) {
  const std::string crowd = r.host.load.describe();
  return crowd.empty() ? "" : crowd + ": the measurement carries them as much as the model's error";
}

std::string slow_sweeps(const Report& r) {
  std::string out;
  for (const auto& d : r.devices) {
    const DeviceFigures f = figures_of(r, d);
    if (!f.predicted_compute || !(*f.predicted_compute > 0.0)) continue;
    const double times = f.measured_compute / *f.predicted_compute;
    if (!(times >= kSlowSweeps)) continue;
    out += fmt::format("{}{} swept {:.2f} times its prediction ({:.4f} against {:.4f} ms an iteration)",
                       out.empty() ? "" : "; ", d.name, times, f.measured_compute * 1e3, *f.predicted_compute * 1e3);
  }
  return out;
}

std::string format_report(const Report& r) {
  std::string out;
  auto put = std::back_inserter(out);
  fmt::format_to(put, "{:<8} {:>9} {:>7} | {:>21} | {:>21} | {:>21}\n", "", "", "", "compute ms/iter",
                 "exposed exchange ms", "iteration ms");
  fmt::format_to(put, "{:<8} {:>9} {:>7} | {:>10} {:>10} | {:>10} {:>10} | {:>10} {:>10} {:>7}\n", "device", "rows",
                 "share", "predicted", "measured", "predicted", "measured", "predicted", "measured", "error");
  for (const auto& d : r.devices) {
    const DeviceFigures f = figures_of(r, d);
    const std::string error = f.predicted_iteration
                                  ? fmt::format("{:+.1f}%", error_percent(*f.predicted_iteration, f.measured_iteration))
                                  : "-";
    fmt::format_to(put, "{:<8} {:>9} {:>6.2f}% | {:>10} {:>10.4f} | {:>10} {:>10.4f} | {:>10} {:>10.4f} {:>7}\n", d.name,
                   d.rows, 100.0 * f.share, ms(f.predicted_compute), f.measured_compute * 1e3, ms(f.predicted_exposed),
                   f.measured_exposed * 1e3, ms(f.predicted_iteration), f.measured_iteration * 1e3, error);
  }
  const double measured = iteration_s(r);
  if (const auto predicted = predicted_iteration_s(r)) {
    // The set-up beside the run: on a guest that gives freed memory back, its
    // first touches can take many times their prediction (docs/model.md,
    // "Set-up: first touches").
    fmt::format_to(put,
                   "predicted {:.4f} ms an iteration, measured {:.4f} ms ({:+.1f}%); the run predicted {:.4f} s, "
                   "measured {:.4f} s ({:+.1f}%), its set-up {:.4f} s against {:.4f}\n",
                   *predicted * 1e3, measured * 1e3, error_percent(*predicted, measured), r.predicted->total_s,
                   measured_total(r), error_percent(r.predicted->total_s, measured_total(r)), r.predicted->setup_s,
                   r.setup_s);
    if (const auto uncached = uncached_iteration_s(r)) {
      fmt::format_to(put,
                     "a CPU slab fits a cache in its curve: at the pace past it (where other programs or guests share "
                     "the cache, as a virtual machine's L3) the prediction is {:.4f} ms an iteration ({:+.1f}%)\n",
                     *uncached * 1e3, error_percent(*uncached, measured));
    }
  } else {
    fmt::format_to(put, "measured {:.4f} ms an iteration, the run {:.4f} s (no model to predict it)\n", measured * 1e3,
                   measured_total(r));
  }
  fmt::format_to(put, "{} x {}{} {}: {} iterations in {:.4f} s, {:.3f} GCells/s; set-up {:.4f} s, tear-down {:.4f} s\n",
                 r.nx, r.ny, r.nz > 0 ? " x " + std::to_string(r.nz) : std::string(), to_string(r.precision), r.iterations, r.solve_s, r.gcells_per_s, r.setup_s, r.teardown_s);
  fmt::format_to(put, "residual: l2 {:.6e}, max {:.6e}", r.residual.l2, r.residual.max);
  if (r.initial_residual.l2 > 0.0 && std::isfinite(r.initial_residual.l2) && !std::isfinite(r.residual.l2)) {
    fmt::format_to(put, " (no longer finite: the iteration diverged; stopped at iteration {})", r.iterations);
  } else if (r.initial_residual.l2 > 0.0) {
    fmt::format_to(put, " ({:.3e} of the initial l2; {})", r.residual.l2 / r.initial_residual.l2,
                   r.converged ? "tolerance met" : "tolerance not met");
  }
  fmt::format_to(put, "\nsplit: {}\n", r.split);
  std::string tuned;
  for (const auto& d : r.devices) {
    if (!d.tuning.empty()) tuned += fmt::format("{}{} {}", tuned.empty() ? "" : "; ", d.name, tuning_text(d.tuning));
  }
  if (!tuned.empty()) fmt::format_to(put, "tuned: {} (from the profile: hetstencil profile show)\n", tuned);
  for (const auto& l : r.left_out) fmt::format_to(put, "left out: {}: {}\n", l.name, l.reason);
  if (const std::string slow = slow_sweeps(r); !slow.empty()) fmt::format_to(put, "slow sweeps: {}\n", slow);
  if (const std::string host = host_disturbance(r); !host.empty()) fmt::format_to(put, "host: {}\n", host);
  return out;
}

std::string to_json(const Report& r, int indent) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : r.devices) {
    const DeviceFigures f = figures_of(r, d);
    devices.push_back({{"name", d.name},
                       {"first_row", d.first_row},
                       {"rows", d.rows},
                       {"compute_s", d.compute_s},
                       {"exchange_s", d.exchange_s},
                       {"check_s", d.check_s},
                       {"total_s", d.total_s},
                       {"compute_p90_s", d.compute_p90_s},
                       {"tuning", d.tuning},
                       {"share", f.share},
                       {"predicted_iteration_s", or_null(f.predicted_iteration)},
                       {"measured_iteration_s", f.measured_iteration},
                       {"predicted_iteration_compute_s", or_null(f.predicted_compute)},
                       {"measured_iteration_compute_s", f.measured_compute},
                       {"predicted_iteration_exposed_s", or_null(f.predicted_exposed)},
                       {"measured_iteration_exposed_s", f.measured_exposed}});
  }
  nlohmann::json left = nlohmann::json::array();
  for (const auto& l : r.left_out) left.push_back({{"name", l.name}, {"reason", l.reason}});
  nlohmann::json j = {
      {"nx", r.nx},
      {"ny", r.ny},
      {"nz", r.nz},
      {"precision", to_string(r.precision)},
      {"iterations", r.iterations},
      {"converged", r.converged},
      {"residual", {{"l2", r.residual.l2}, {"max", r.residual.max}}},
      {"initial_residual", {{"l2", r.initial_residual.l2}, {"max", r.initial_residual.max}}},
      {"setup_s", r.setup_s},
      {"solve_s", r.solve_s},
      {"teardown_s", r.teardown_s},
      {"gcells_per_s", r.gcells_per_s},
      {"devices", devices},
      {"split", r.split},
      {"left_out", left},
      {"predicted_s", r.predicted ? nlohmann::json(r.predicted->total_s) : nlohmann::json(nullptr)},
      {"measured_s", measured_total(r)},
      {"predicted_iteration_s", or_null(predicted_iteration_s(r))},
      {"uncached_iteration_s", or_null(uncached_iteration_s(r))},
      {"measured_iteration_s", iteration_s(r)},
      {"slow_sweeps", slow_sweeps(r)},
      {"host",
       {{"others_cores", r.host.load.others >= 0.0 ? nlohmann::json(r.host.load.others) : nlohmann::json(nullptr)},
        {"idle_cores", r.host.load.others >= 0.0 ? nlohmann::json(r.host.load.idle) : nlohmann::json(nullptr)},
        {"stolen_cores", r.host.load.others >= 0.0 ? nlohmann::json(r.host.load.stolen) : nlohmann::json(nullptr)},
        {"disturbance", host_disturbance(r)}}},
  };
  stamp_schema(j, kReportSchema);
  return j.dump(indent);
}

}  // namespace hetstencil
