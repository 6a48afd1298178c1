// Calibration: measure every device's rate curve and every link's transfer
// curve on this machine, within a time budget.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "devices/device.hpp"
#include "devices/device_map.hpp"
#include "hetstencil/plan.hpp"
#include "model/profile.hpp"

namespace hetstencil {

/// Seconds a whole solve of `problem` by `plan` takes on `device` alone (its
/// threads spinning `spins` times at a barrier, its kernel parameters
/// `tuning`): how calibration times a device's real loop. The layer that runs
/// solves (the runtime's executor) gives it, so that the model measures the
/// loop a solve runs.
using SolveTimer = std::function<double(const Problem& problem, const Plan& plan, Device& device, int spins,
                                        const Tuning& tuning)>;

struct CalibrationOptions {
  std::vector<Precision> precisions{Precision::Double};
  std::int64_t nx = 2048;     ///< the row width the curves are for
  std::int64_t max_rows = 0;  ///< the most rows a device is measured with (0: nx)
  double budget_s = 10.0;     ///< points that would not fit are skipped, and said so
  int repetitions = 7;        ///< timed runs per point after a warm-up; their robust median counts
  VariantChoice variant;      ///< besides sync, GPUs' curves and loops for this variant
  SolveTimer time_solve;      ///< required: see SolveTimer
  /// The stencil the curves are for. Another than poisson5 measures only the
  /// devices' sweeps (links, loops and set-up are the stencil's bytes,
  /// measured with poisson5), under stencil_rate_key.
  Stencil stencil = Stencil::builtin("poisson5");
  std::int64_t ny = 0;  ///< a 3-D stencil's plane rows (its curves' rows are planes of ny x nx)
  /// A profile keyed by device names whose tuned parameters (tuned_values)
  /// the devices sweep with, in time_solve's solves too; none: the defaults.
  Profile tuned;
};

struct Calibration {
  Profile profile;
  double seconds = 0.0;
  std::vector<std::string> skipped;
};

/// Rate curves at rows 4, 8, 16, ... up to max_rows (a CPU device: up to four
/// times the rows its cache holds) for every device and precision (the CPU
/// devices all sweeping at once beside every GPU sweeping, as in a solve, so
/// that those sharing memory are measured sharing it; CPU devices on one
/// memory node each also beside the others sweeping the rest of the rows:
/// DeviceProfile::rest);
/// one-row-and-more transfers for every pair of devices (GPU links
/// measured with all GPUs copying at once, as in a halo exchange); every
/// device's set-up and tear-down through its own attach and detach, all at
/// once. Results are merged into `profile`, each device under its device_key
/// (and links between keys): a stored profile's form, not a run's named one.
Calibration calibrate(const Topology& topology, const std::vector<DeviceSpec>& devices,
                      const CalibrationOptions& options, Profile profile);

}  // namespace hetstencil
