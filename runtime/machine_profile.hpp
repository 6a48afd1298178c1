// This machine's profile as a Runtime keeps it: read once from its file,
// calibrated on demand, and updated by what solves measure.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "devices/device_map.hpp"
#include "hetstencil/device_info.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/report.hpp"
#include "hetstencil/topology.hpp"
#include "model/calibrate.hpp"
#include "model/profile.hpp"
#include "runtime/executor.hpp"

namespace hetstencil {

/// The most a solve waits for the curves of a stencil not yet measured.
constexpr double kStencilCalibrationSeconds = 1.8;

class ProfileKeeper {
 public:
  /// `path` "": the default path of the machine (none for a described one).
  /// `specs`: the runtime's devices as the machine was mapped to them (a
  /// calibration makes devices of its own from them).
  ProfileKeeper(const Topology& topology, std::vector<DeviceSpec> specs, std::string path);

  /// The profile keyed by the devices' names, read from its file at the first
  /// call (nothing for a described machine, or when the file has none usable).
  const std::optional<Profile>& profile();
  const std::string& path() const { return path_; }
  const std::string& not_saved() const { return not_saved_; }

  /// Measures every device at the problem's precision and width (GPUs
  /// sweeping by the variant; for a stencil other than poisson5 the CPU devices
  /// alone, within kStencilCalibrationSeconds), saying so through `notify`, and saves the
  /// figures (a save that fails is a warning, kept in not_saved(): the
  /// calibration is used all the same).
  void calibrate(const Problem& problem, double budget_s, const VariantChoice& variant,
                 const std::function<void(const std::string&)>& notify);

  /// The kernel parameters tuned for the problem's stencil and precision,
  /// by device name, as the profile has them now (none where it has none).
  TuningOf tuning_for(const Problem& problem);

  /// See Runtime::learn.
  int learn(const Report& report, const VariantChoice& variant);

 private:
  const Topology& topology_;
  std::vector<DeviceSpec> specs_;
  std::vector<DeviceInfo> devices_;
  std::string path_;
  bool read_ = false;
  std::optional<Profile> profile_;
  std::string not_saved_;
};

}  // namespace hetstencil
