/// \file
/// A machine's measured figures (the profile): calibrating this machine,
/// showing, loading and saving a profile, and plans and predictions for the
/// machine a profile describes, without running anything.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hetstencil/export.hpp"
#include "hetstencil/device_info.hpp"
#include "hetstencil/plan.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/runtime.hpp"
#include "hetstencil/topology.hpp"

namespace hetstencil {

/// A profile as saved: every device's rate curves, loops and set-up, every
/// link's transfer curve, and the fingerprint of the machine they were
/// measured on. Thread safety: a value, safe to copy across threads.
///
/// ```cpp
/// hetstencil::CalibrateOptions c;
/// c.nx = 4096;
/// const hetstencil::Calibrated cal = hetstencil::calibrate_machine({}, c);  // saved to cal.path
/// std::puts(cal.profile.to_text().c_str());
/// if (const auto saved = hetstencil::MachineProfile::load(cal.path)) std::puts(saved->to_json().c_str());
/// ```
class HETSTENCIL_API MachineProfile {
 public:
  /// An empty profile: no device, no link.
  MachineProfile();
  /// Frees it.
  ~MachineProfile();
  /// Copies it (its figures are shared, never changed).
  MachineProfile(const MachineProfile& other);
  /// Copies it (its figures are shared, never changed).
  MachineProfile& operator=(const MachineProfile& other);
  /// Takes it over.
  MachineProfile(MachineProfile&& other) noexcept;
  /// Takes it over.
  MachineProfile& operator=(MachineProfile&& other) noexcept;

  /// The profile at `path`, or nothing (with a warning) when it is missing,
  /// unreadable, corrupt or partial. Throws InvalidArgument when `path` is a folder.
  static std::optional<MachineProfile> load(const std::string& path);
  /// Folds it into the profile at `path` (its figures replace those of the
  /// same keys, the rest stays) under the file's lock, so that runs saving at
  /// once lose nothing; returns the profile written. Throws InvalidArgument
  /// when `path` cannot be written.
  MachineProfile save(const std::string& path) const;

  /// The profile as saved: one JSON object.
  std::string to_json(int indent = 2) const;
  /// A table of its curves, loops, set-ups and links, for people.
  std::string to_text() const;
  /// host_canary_bytes_per_s() as its CPU curves were measured (0: not measured).
  double canary_bytes_per_s() const;

  struct Impl;
  /// The library's own view of it.
  const Impl& impl() const { return *impl_; }
  /// The library's own: a profile of figures it has measured or read.
  explicit MachineProfile(std::shared_ptr<const Impl> impl);

 private:
  std::shared_ptr<const Impl> impl_;
};

/// Where the profile of the machine `topology` describes is kept when no path
/// is given: `$XDG_CACHE_HOME/hetstencil/<host>.json`, else `~/.cache/hetstencil/<host>.json`.
HETSTENCIL_API std::string default_profile_path(const Topology& topology);

/// What calibrate_machine measures and where it saves it.
struct CalibrateOptions {
  std::vector<Precision> precisions{Precision::Double};  ///< curves for each of these precisions
  std::int64_t nx = 2048;     ///< the row width the curves are for
  std::int64_t max_rows = 0;  ///< the most rows a device is measured with (0: nx)
  double budget_s = 10.0;     ///< points that would not fit are skipped, and said so
  VariantChoice variant;      ///< besides sync, GPUs' curves and loops for this variant
  std::string profile;        ///< where to save: "" for this machine's default path
};

/// What calibrate_machine measured and saved.
struct Calibrated {
  MachineProfile profile;  ///< as saved: merged with what the file had
  std::string path;        ///< the profile's file
  double seconds = 0.0;    ///< how long the calibration took
  std::vector<std::string> skipped;  ///< what the budget left out
};

/// Measures every device of this machine as `machine` maps them (rate curves,
/// loops, set-up and links) and saves them into the profile. Throws
/// InvalidArgument for a described machine: calibration measures this one.
HETSTENCIL_API Calibrated calibrate_machine(const RuntimeOptions& machine, const CalibrateOptions& options);

/// The machine a profile describes: plans and predictions from its figures,
/// for this machine or for one we do not have (8 GPUs, 4 sockets).
/// Thread safety: its const methods are safe from any thread.
///
/// ```cpp
/// hetstencil::ProfileModel model({}, "eight_gpus.json", hetstencil::ProfileModel::Use::Plan);
/// const hetstencil::Plan plan = model.plan(problem);  // parts, prediction, left_out
/// for (const auto& l : plan.left_out) std::printf("%s: %s\n", l.name.c_str(), l.reason.c_str());
/// ```
class HETSTENCIL_API ProfileModel {
 public:
  /// Plan: the profile's devices (whatever cut of the cores they were measured
  /// in), chosen by RuntimeOptions::devices. Predict: on the machine the
  /// profile was measured on, its devices as `machine` maps them (a solve's);
  /// elsewhere the profile's, chosen likewise.
  enum class Use { Plan, Predict };

  /// `profile`: a file describing its own machine, or "" for this machine's
  /// (then it must have been measured here). `machine` names the topology and,
  /// on this machine, how its devices are mapped. Throws InvalidArgument when
  /// there is no usable profile, or when a device has no figures in it.
  ProfileModel(const RuntimeOptions& machine, const std::string& profile, Use use);
  /// Frees it.
  ~ProfileModel();
  /// Takes it over.
  ProfileModel(ProfileModel&& other) noexcept;
  /// Takes it over.
  ProfileModel& operator=(ProfileModel&& other) noexcept;

  /// The profile's file.
  const std::string& path() const;
  /// The devices plans and predictions are for, in device order.
  const std::vector<DeviceInfo>& devices() const;

  /// The split of `problem` that finishes first on the devices with curves for
  /// it (for a stencil other than poisson5: the CPU devices' curves of it, or
  /// estimated from another stencil's, said so in the plan's origin), GPUs
  /// sweeping by `variant`: parts (indices into devices()), the
  /// prediction, and the devices left out with the reason. Throws
  /// InvalidArgument when no device has curves or their memory cannot hold it.
  Plan plan(const Problem& problem, const VariantChoice& variant = {}) const;
  /// The time of the split giving rows[k] to devices()[k] (0 leaves one out;
  /// they add up to the units of the split axis: problem.ny, or problem.nz in
  /// 3-D). Throws InvalidArgument when a device with rows
  /// has no curve for the problem.
  Prediction predict(const Problem& problem, const std::vector<std::int64_t>& rows,
                     const VariantChoice& variant = {}) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hetstencil
