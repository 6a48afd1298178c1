// The auto-tuner's search: a device's kernel parameters (Device::tunables)
// for one stencil and precision, from measured sweeps. The measurement is
// given (the runtime times a sweep through the Device interface); the search
// only decides what to measure next and what counts as faster.
//
// Sweep times on a shared host spread widely (a 2-core VM: 1.5-2x between
// samples), so a candidate is kept only when its median beats the best so far
// by more than both their spreads (scaled MADs), and the winner is measured
// again beside the defaults at the end: a gain that does not hold there is
// dropped.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "devices/device.hpp"
#include "model/profile.hpp"

namespace hetstencil {

/// Samples (seconds) of one sweep with the kernel parameters given.
using SweepSamples = std::function<std::vector<double>(const Tuning& tuning)>;

struct TuneSearchOptions {
  double budget_s = 10.0;  ///< candidates whose measurement would not fit are not tried
  /// Told each candidate measured ("chunk_values=512: 3.10 ms"), when set.
  std::function<void(const std::string&)> progress;
  /// Given, when set, the parameter sets the search is about to measure, all
  /// of a step at once (the starts, then each parameter's other values): a
  /// device makes ready there what takes long to make (a GPU compiles their
  /// kernels side by side), so that a set's measurement is its sweeps'.
  std::function<void(const std::vector<Tuning>&)> prepare;
};

struct TuneOutcome {
  Tuning chosen;           ///< the values that differ from the defaults (empty: the defaults won)
  double default_s = 0.0;  ///< one sweep at the defaults, median (of the final measurement)
  double tuned_s = 0.0;    ///< one sweep with `chosen`, median (= default_s when the defaults won)
  double spread_s = 0.0;   ///< the defaults' spread (scaled MAD): what a gain must beat
  int candidates = 0;      ///< parameter sets measured
  bool out_of_time = false;  ///< true when the budget stops the search before every candidate is tried
};

/// A coordinate search from the defaults: each parameter in turn tries its
/// other values with the rest as found so far, and keeps one that beats the
/// best by more than the spread; a second round while the budget allows and
/// the first one moved. The same again from each other value of a
/// Tunable::family parameter (that value kept): each start is measured
/// first, and the searches run fastest start first, each with an equal share
/// of the budget left; the fastest beyond the spread wins. A parameter is
/// tried only where the others have its Tunable::only_with values, and kept
/// only where they have them in the winner. Returns
/// the defaults' outcome when there is nothing to tune.
TuneOutcome search_tuning(const std::vector<Tunable>& tunables, const SweepSamples& measure,
                          const TuneSearchOptions& options);

/// The part of `tuning` that `tunables` accepts (check_tuning): a parameter the
/// device does not have, or a value it does not take (a profile tuned for other
/// kernels), is left out with a warning, once per device and parameter.
Tuning usable_tuning(const std::string& device, const std::vector<Tunable>& tunables, const Tuning& tuning);

/// The values `named` (a profile keyed by device names) has tuned for the
/// device, stencil and precision; none where it has none.
Tuning tuned_values(const Profile& named, const std::string& device, const Stencil& stencil, Precision precision);

/// The values of `tuning` that `tunables` does not take by default.
Tuning not_defaults(const std::vector<Tunable>& tunables, const Tuning& tuning);

/// "chunk_values=512 points_per_pass=4", or "defaults".
std::string tuning_text(const Tuning& tuning);

}  // namespace hetstencil
