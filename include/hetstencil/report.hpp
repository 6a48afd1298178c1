/// \file
/// What a solve returns: the solution and a report of where the time went.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <optional>

#include "hetstencil/export.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/grid.hpp"
#include "hetstencil/plan.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/progress.hpp"
#include "hetstencil/statistics.hpp"

namespace hetstencil {

/// Thread safety (this and every type below): a value, safe to copy across threads.
/// What one device did in a solve (seconds).
struct DeviceReport {
  std::string name;            ///< the device's name ("cpu0", "gpu1")
  std::int64_t first_row = 0;  ///< its first interior row (1-based)
  std::int64_t rows = 0;       ///< rows it owned
  double compute_s = 0.0;   ///< sweeps over its rows
  double exchange_s = 0.0;  ///< waiting for neighbours and copying ghost rows
  double check_s = 0.0;     ///< residual checks, the global agreement included
  double total_s = 0.0;     ///< from start to its last iteration
  /// Per iteration: the 90th percentile of its sweeps' time over its rounds
  /// (CPU devices; 0 where not measured). Beside a GPU, its slow iterations,
  /// not its mean, make the GPU wait.
  double compute_p90_s = 0.0;
  /// The kernel parameters it swept with that are not its defaults, by name
  /// (the profile's tuned values: `hetstencil tune`'s, or a CPU team a
  /// calibration sized); empty: its defaults.
  std::map<std::string, int> tuning{};
};

/// The host as a solve ran, to tell its spells from the model's errors.
struct HostReport {
  /// Other processes' CPU use and the hypervisor's steal over the iterations
  /// (HostLoad; `others` -1 where not measured: /proc/stat unread, or a solve
  /// over processes, whose ranks on one node would count as others).
  HostLoad::Figures load;
};

/// Where the time of a solve went, per device and per phase, beside what the
/// plan predicted (seconds).
///
/// ```cpp
/// const hetstencil::Result r = runtime.solve(problem, plan);
/// std::fputs(hetstencil::format_report(r.report).c_str(), stdout);  // the table `hetstencil solve` prints
/// if (r.report.predicted)
///   std::printf("predicted %.3f s, measured %.3f s\n", r.report.predicted->total_s,
///               r.report.setup_s + r.report.solve_s + r.report.teardown_s);
/// const std::string json = hetstencil::to_json(r.report);
/// ```
struct Report {
  std::int64_t nx = 0;                      ///< the grid's interior points along a row
  std::int64_t ny = 0;                      ///< the grid's interior rows (of a plane, in 3-D)
  std::int64_t nz = 0;                      ///< the grid's interior planes; 0 in 2-D
  Precision precision = Precision::Double;  ///< of the grid's values
  /// Whether the solve's stencil is poisson5: the curves a run teaches
  /// (Runtime::learn) are poisson5's; other stencils' runs teach nothing.
  bool poisson5 = true;
  std::int64_t iterations = 0;              ///< iterations made
  bool converged = false;  ///< the tolerance was met (always false without one)
  Residual initial_residual;  ///< of the initial iterate (computed with a tolerance only)
  Residual residual;        ///< of the returned iterate
  double setup_s = 0.0;     ///< slabs allocated and filled on the devices
  double solve_s = 0.0;     ///< the iterations on all devices
  double teardown_s = 0.0;  ///< slabs copied back into the solution
  double gcells_per_s = 0.0;           ///< cell updates per second of solve_s, in billions
  std::vector<DeviceReport> devices;  ///< in row order
  /// The plan's prediction for the run that happened: its iterations and
  /// checks as they ran (a tolerance may stop a solve early), its total
  /// rescaled; devices[k] is the prediction for devices[k]. Absent without one.
  std::optional<Prediction> predicted;
  /// Where the split came from (the plan's origin), and the devices it left out.
  std::string split;
  std::vector<LeftOut> left_out;  ///< the devices the plan left out, with the reason
  HostReport host;                ///< the host as the solve ran
};

/// In words, how other processes or the hypervisor crowded the solve's cores
/// (HostLoad::Figures::crowded of `report.host.load`); "" where they did not.
HETSTENCIL_API std::string host_disturbance(const Report& report);

/// How many times its predicted time a device's sweeps take to be named by slow_sweeps().
inline constexpr double kSlowSweeps = 1.25;

/// A device's sweeps that took kSlowSweeps times their predicted time or more
/// are named with their figures, "cpu0 swept 3.80 times its prediction (1.7516
/// against 0.4609 ms an iteration)", joined by "; " ("" for none, or without a
/// prediction): which device's sweeps, not which exchange, a solve slower than
/// predicted waited for. The error of a planned solve is within a few percent
/// where each device keeps its curve's pace; a CPU share on a shared host can
/// sweep 3-4 times slower a whole solve long (docs/model.md).
HETSTENCIL_API std::string slow_sweeps(const Report& report);

/// Seconds an iteration took: the solve's time over its iterations, checks included.
HETSTENCIL_API double iteration_s(const Report& report);
/// What the prediction says of it, when there is one.
HETSTENCIL_API std::optional<double> predicted_iteration_s(const Report& report);
/// What the prediction says of it where each CPU slab that fits a cache in its
/// curve sweeps at the pace past that cache (Prediction::uncached_iteration_s);
/// none where no slab fits one.
HETSTENCIL_API std::optional<double> uncached_iteration_s(const Report& report);
/// (predicted - measured) / measured in percent (0 when nothing was measured).
HETSTENCIL_API double error_percent(double predicted, double measured);

/// The table `hetstencil solve` prints: per device its rows and share, and per
/// iteration its compute, exposed exchange and whole iteration, predicted
/// beside measured (a device that finishes first waits for the slowest), with
/// the error; then the run's iteration and total (set-up + iterations +
/// tear-down), the grid, the phases, the residual, where the split came from
/// and the devices left out, with the reason; the slow_sweeps() and the
/// host_disturbance(), if any.
HETSTENCIL_API std::string format_report(const Report& report);

/// The report as one JSON object (schema "hetstencil-report", docs/json-formats.md),
/// with the figures format_report prints, in seconds: per device its share, and
/// predicted_iteration_s beside measured_iteration_s (also its compute and exposed
/// exchange; null predictions without one); the run's predicted_s beside
/// measured_s, predicted_iteration_s beside measured_iteration_s; "split" and "left_out".
HETSTENCIL_API std::string to_json(const Report& report, int indent = 2);

/// The solution in the problem's precision.
/// (Grid<float> or Grid<double>, as Problem::precision says.)
using Solution = std::variant<Grid<float>, Grid<double>>;

/// What a solve returns. Thread safety: a value; once returned, read it from
/// any number of threads; a thread that changes it needs it to itself.
struct Result {
  Report report;      ///< where the time went, beside the prediction
  Solution solution;  ///< the final iterate, boundary included

  /// The solution as a Grid<T>; throws InvalidArgument when T is not the
  /// problem's precision (report.precision).
  template <class T>
  const Grid<T>& grid() const {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "a solution is Grid<float> or Grid<double>");
    if (const auto* g = std::get_if<Grid<T>>(&solution)) return *g;
    const std::string held = std::holds_alternative<Grid<float>>(solution) ? "float" : "double";
    HETSTENCIL_THROW(InvalidArgument, "the solution is " + held + "; call grid<" + held + ">()");
  }
};

}  // namespace hetstencil
