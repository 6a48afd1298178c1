// A solve's report with the model's prediction beside it: per device and in
// total, as a table or as JSON.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetstencil/report.hpp"
#include "model/predict.hpp"

namespace hetstencil::cli {

/// Per iteration, in seconds. Measured: compute is the device's sweeps; exposed
/// exchange is the rest of its iterations (waiting for neighbours, copying ghost
/// rows), its checks left out. Predicted likewise: a device that finishes first
/// waits for the slowest. Predicted values are absent without a model.
struct DeviceComparison {
  std::string name;
  std::int64_t rows = 0;
  double share = 0.0;
  double measured_compute = 0.0, measured_exposed = 0.0, measured_iteration = 0.0;
  std::optional<double> predicted_compute, predicted_exposed, predicted_iteration;
};

/// The run: an iteration is the solve's time over its iterations, checks
/// included; the total adds set-up and tear-down.
struct RunComparison {
  std::vector<DeviceComparison> devices;
  double measured_iteration = 0.0;
  double measured_total = 0.0;
  std::optional<double> predicted_iteration, predicted_total;
};

/// The prediction is rescaled to the iterations and checks that really ran (a
/// tolerance may stop the solve early).
RunComparison compare(const Report& report, const std::optional<Prediction>& prediction, const StopRule& stop);

/// (predicted - measured) / measured in percent.
double error_percent(double predicted, double measured);

/// The table: a row per device, the totals, then the run's figures. `how` says
/// where the split came from.
void print_solve_report(const Report& report, const RunComparison& c, const std::string& how);

/// The report as JSON with, per device, predicted_ms and measured_ms (an
/// iteration; null predictions without a model), and predicted_s, measured_s.
nlohmann::json solve_json(const Report& report, const RunComparison& c, const std::string& how);

}  // namespace hetstencil::cli
