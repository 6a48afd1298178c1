/// \file
/// The auto-tuner (`hetstencil tune`): each device's kernel parameters for one
/// stencil and precision, searched with measured sweeps and stored in this
/// machine's profile, which every later solve, calibration and benchmark on
/// this machine sweeps with. No parameter changes a bit of a result.
///
/// ```cpp
/// hetstencil::TuneOptions o;
/// o.stencil = hetstencil::Stencil::builtin("box27");
/// o.precision = hetstencil::Precision::Float;
/// for (const auto& d : hetstencil::tune_machine({}, o).devices) {
///   std::printf("%s: %.2fx\n", d.device.c_str(), d.gain());
/// }
/// ```
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hetstencil/export.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/runtime.hpp"
#include "hetstencil/stencil.hpp"

namespace hetstencil {

/// What tune_machine searches, and within what.
struct TuneOptions {
  Stencil stencil = Stencil::builtin("poisson5");  ///< the stencil tuned for
  Precision precision = Precision::Double;        ///< the precision tuned for
  double budget_s = 10.0;  ///< seconds of search a device (its last measurements may overrun it a little)
  /// Timed sweeps a parameter set, after a warm-up, at least; their median
  /// counts. More where the budget allows two rounds over every value with more.
  int repetitions = 7;
  /// Grid sizes (nz in 3-D only); 0: a CPU device 2048 x 2048 (2-D) or 128^3
  /// (3-D), larger than its cache; a GPU the size that fills half its memory.
  std::int64_t nx = 0;
  std::int64_t ny = 0;  ///< see nx
  std::int64_t nz = 0;  ///< see nx
  /// When set, told what is measured (a line a parameter set).
  std::function<void(const std::string&)> progress;
};

/// One kernel parameter of a device: the value chosen and its default.
struct TunedValue {
  std::string name;       ///< as the device names it: "chunk_values"
  int value = 0;          ///< chosen
  int default_value = 0;  ///< untuned
};

/// One device's tuning. Thread safety: a value.
struct DeviceTuning {
  std::string device;  ///< its name: "cpu0", "gpu1"
  std::int64_t nx = 0;  ///< the grid of its measurements
  std::int64_t ny = 0;  ///< see nx
  std::int64_t nz = 0;  ///< see nx (0 in 2-D)
  std::vector<TunedValue> parameters;  ///< every parameter it tunes (none: nothing to tune, not measured)
  double default_s = 0.0;  ///< one sweep at the defaults, median (0: not measured)
  double tuned_s = 0.0;    ///< one sweep with the values chosen, median
  double spread_s = 0.0;   ///< the defaults' spread (scaled MAD) that a gain had to beat
  int candidates = 0;      ///< parameter sets measured
  bool out_of_time = false;  ///< true when the budget stops the search early

  /// default_s / tuned_s: 1 where the defaults win or there is no measurement.
  double gain() const { return default_s > 0.0 && tuned_s > 0.0 ? default_s / tuned_s : 1.0; }
};

/// What tune_machine finds, and the profile that keeps it.
struct Tuned {
  std::string stencil;  ///< the stencil's name
  Precision precision = Precision::Double;  ///< the precision
  std::vector<DeviceTuning> devices;        ///< one a device, in the machine's order
  std::string profile;                      ///< the profile that holds the winners
};

/// Tunes every device of this machine chosen by machine.devices (their
/// Device tunables) for options.stencil and options.precision, one device at a
/// time, and saves the winners (or that the defaults won) in the profile
/// (machine.profile, "" the machine's default), each under its device and
/// "<stencil>/<precision>". Throws InvalidArgument for an invalid stencil or
/// option, or a described machine (it has no devices to measure).
HETSTENCIL_API Tuned tune_machine(const RuntimeOptions& machine, const TuneOptions& options);

/// The tuning as one JSON object (schema "hetstencil-tune", docs/json-formats.md).
HETSTENCIL_API std::string to_json(const Tuned& tuned);

}  // namespace hetstencil
