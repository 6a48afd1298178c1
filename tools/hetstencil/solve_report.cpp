#include "tools/hetstencil/solve_report.hpp"

#include <algorithm>

#include <spdlog/fmt/fmt.h>

namespace hetstencil::cli {
namespace {

std::string ms(const std::optional<double>& seconds) {
  return seconds ? fmt::format("{:.4f}", *seconds * 1e3) : std::string("-");
}

nlohmann::json ms_or_null(const std::optional<double>& seconds) {
  return seconds ? nlohmann::json(*seconds * 1e3) : nlohmann::json(nullptr);
}

}  // namespace

double error_percent(double predicted, double measured) {
  return measured > 0.0 ? 100.0 * (predicted - measured) / measured : 0.0;
}

RunComparison compare(const Report& r, const std::optional<Prediction>& prediction, const StopRule& stop) {
  RunComparison c;
  const double iterations = static_cast<double>(std::max<std::int64_t>(r.iterations, 1));
  for (const DeviceReport& d : r.devices) {
    DeviceComparison dc;
    dc.name = d.name;
    dc.rows = d.rows;
    dc.share = static_cast<double>(d.rows) / static_cast<double>(r.ny);
    dc.measured_compute = d.compute_s / iterations;
    dc.measured_exposed = std::max(0.0, d.total_s - d.compute_s - d.check_s) / iterations;
    dc.measured_iteration = dc.measured_compute + dc.measured_exposed;
    if (prediction) {
      const auto p = std::find_if(prediction->devices.begin(), prediction->devices.end(),
                                  [&](const DevicePrediction& x) { return x.name == d.name; });
      if (p != prediction->devices.end()) {
        // Neighbours wait for each other: every device's iteration is the
        // run's, what it does not sweep it waits or copies (as measured).
        dc.predicted_compute = p->compute_s;
        dc.predicted_iteration = std::max(p->iteration_s, prediction->iteration_s);
        dc.predicted_exposed = *dc.predicted_iteration - p->compute_s;
      }
    }
    c.devices.push_back(dc);
  }
  c.measured_iteration = r.solve_s / iterations;
  c.measured_total = r.setup_s + r.solve_s + r.teardown_s;
  if (prediction) {
    std::int64_t checks = 0;
    for (std::int64_t t = 0; t <= r.iterations; ++t) checks += stop.checks_at(t) || t == r.iterations ? 1 : 0;
    const double solve = static_cast<double>(r.iterations) * prediction->iteration_s +
                         static_cast<double>(checks) * prediction->check_s;
    c.predicted_iteration = solve / iterations;
    c.predicted_total = prediction->setup_s + solve + prediction->teardown_s;
  }
  return c;
}

void print_solve_report(const Report& r, const RunComparison& c, const std::string& how) {
  fmt::print("{:<8} {:>9} {:>7} | {:>21} | {:>21} | {:>21}\n", "", "", "", "compute ms/iter", "exposed exchange ms",
             "iteration ms");
  fmt::print("{:<8} {:>9} {:>7} | {:>10} {:>10} | {:>10} {:>10} | {:>10} {:>10} {:>7}\n", "device", "rows", "share",
             "predicted", "measured", "predicted", "measured", "predicted", "measured", "error");
  for (const auto& d : c.devices) {
    const std::string error =
        d.predicted_iteration ? fmt::format("{:+.1f}%", error_percent(*d.predicted_iteration, d.measured_iteration)) : "-";
    fmt::print("{:<8} {:>9} {:>6.2f}% | {:>10} {:>10.4f} | {:>10} {:>10.4f} | {:>10} {:>10.4f} {:>7}\n", d.name, d.rows,
               100.0 * d.share, ms(d.predicted_compute), d.measured_compute * 1e3, ms(d.predicted_exposed),
               d.measured_exposed * 1e3, ms(d.predicted_iteration), d.measured_iteration * 1e3, error);
  }
  if (c.predicted_iteration) {
    fmt::print("predicted {:.4f} ms an iteration, measured {:.4f} ms ({:+.1f}%); the run predicted {:.4f} s, measured "
               "{:.4f} s ({:+.1f}%)\n",
               *c.predicted_iteration * 1e3, c.measured_iteration * 1e3,
               error_percent(*c.predicted_iteration, c.measured_iteration), *c.predicted_total, c.measured_total,
               error_percent(*c.predicted_total, c.measured_total));
  } else {
    fmt::print("measured {:.4f} ms an iteration, the run {:.4f} s (no model to predict it)\n", c.measured_iteration * 1e3,
               c.measured_total);
  }
  fmt::print("{} x {} {}: {} iterations in {:.4f} s, {:.3f} GCells/s; set-up {:.4f} s, tear-down {:.4f} s\n", r.nx,
             r.ny, to_string(r.precision), r.iterations, r.solve_s, r.gcells_per_s, r.setup_s, r.teardown_s);
  fmt::print("residual: l2 {:.6e}, max {:.6e}", r.residual.l2, r.residual.max);
  if (r.initial_residual.l2 > 0.0) {
    fmt::print(" ({:.3e} of the initial l2; {})", r.residual.l2 / r.initial_residual.l2,
               r.converged ? "tolerance met" : "tolerance not met");
  }
  fmt::print("\nsplit: {}\n", how);
}

nlohmann::json solve_json(const Report& r, const RunComparison& c, const std::string& how) {
  nlohmann::json j = nlohmann::json::parse(to_json(r));
  for (std::size_t k = 0; k < c.devices.size(); ++k) {
    const DeviceComparison& d = c.devices[k];
    auto& out = j["devices"][k];
    out["share"] = d.share;
    out["predicted_ms"] = ms_or_null(d.predicted_iteration);
    out["measured_ms"] = d.measured_iteration * 1e3;
    out["predicted_compute_ms"] = ms_or_null(d.predicted_compute);
    out["measured_compute_ms"] = d.measured_compute * 1e3;
    out["predicted_exposed_ms"] = ms_or_null(d.predicted_exposed);
    out["measured_exposed_ms"] = d.measured_exposed * 1e3;
  }
  j["split"] = how;
  j["predicted_s"] = c.predicted_total ? nlohmann::json(*c.predicted_total) : nlohmann::json(nullptr);
  j["measured_s"] = c.measured_total;
  j["predicted_iteration_ms"] = ms_or_null(c.predicted_iteration);
  j["measured_iteration_ms"] = c.measured_iteration * 1e3;
  return j;
}

}  // namespace hetstencil::cli
