#include "runtime/machine_profile.hpp"

#include <algorithm>
#include <map>

#include <spdlog/fmt/fmt.h>

#include "core/log.hpp"
#include "hetstencil/error.hpp"
#include "model/calibrate.hpp"
#include "model/learn.hpp"
#include "model/tune.hpp"

namespace hetstencil {

ProfileKeeper::ProfileKeeper(const Topology& topology, std::vector<DeviceSpec> specs, std::string path)
    : topology_(topology), specs_(std::move(specs)), path_(std::move(path)) {
  for (const auto& s : specs_) devices_.push_back(s.info);
  if (!topology_.this_machine) {
    path_.clear();
  } else if (path_.empty()) {
    path_ = default_profile_path(fingerprint_of(topology_).host);
  }
}

const std::optional<Profile>& ProfileKeeper::profile() {
  if (!read_ && !path_.empty()) {
    const Fingerprint here = fingerprint_of(topology_);
    if (const auto stored = load_profile(path_, &here)) profile_ = named_for(*stored, devices_);
  }
  read_ = true;
  return profile_;
}

void ProfileKeeper::calibrate(const Problem& problem, double budget_s, const VariantChoice& variant,
                              const std::function<void(const std::string&)>& notify) {
  if (path_.empty()) return;
  const auto say = [&](const std::string& what) {
    if (notify) notify(what);
  };
  // The model is measured at the problem's own width: a curve scaled from
  // another width misses how rows fill a GPU and how a slab fits a cache.
  const bool poisson5 = is_poisson5(problem.stencil);
  if (poisson5) {
    say(fmt::format("this machine's profile ({}) has no {} curves for rows of {}{}: calibrating first", path_,
                    to_string(problem.precision), problem.nx,
                    variant.variant == Variant::Sync
                        ? ""
                        : fmt::format(" (GPUs sweeping {} {})", to_string(variant.variant), variant.param)));
  } else {
    say(fmt::format("this machine's profile ({}) has no curves of the stencil '{}' ({}): measuring its devices "
                    "first",
                    path_, problem.stencil.name, stencil_rate_key(problem)));
  }
  CalibrationOptions c;
  // The devices sweep with their tuned parameters, as the solves it models do.
  if (profile()) c.tuned = *profile_;
  c.time_solve = solve_seconds;
  c.precisions = {problem.precision};
  c.nx = problem.nx;
  c.budget_s = poisson5 ? budget_s : std::min(budget_s, kStencilCalibrationSeconds);
  c.variant = variant;
  c.stencil = problem.stencil;
  if (problem.dimension() == 3) {
    c.ny = problem.ny;
    c.max_rows = problem.nz;
  }
  // Calibration makes devices of its own, as the runtime maps them; the
  // runtime's own wait idle meanwhile.
  const Calibration cal = hetstencil::calibrate(topology_, specs_, c, Profile{});
  say(fmt::format("calibrated in {:.2f} s (hetstencil profile show prints it)", cal.seconds));
  for (const auto& s : cal.skipped) say("calibration skipped (budget): " + s);
  // Merged under the profile's lock with what other runs saved meanwhile.
  Profile stored = cal.profile;
  try {
    stored = save_profile(path_, cal.profile);
  } catch (const Error& e) {
    not_saved_ = e.what();
    log::warn("the calibration could not be saved (it is used for this run all the same): {}", not_saved_);
    if (profile()) store_named(stored, *profile_, devices_);
    merge_into(stored, cal.profile);
  }
  profile_ = named_for(stored, devices_);
  read_ = true;
}

TuningOf ProfileKeeper::tuning_for(const Problem& problem) {
  std::map<std::string, Tuning> by_device;
  if (profile()) {
    for (const DeviceInfo& d : devices_) {
      Tuning values = tuned_values(*profile_, d.name, problem.stencil, problem.precision);
      if (!values.empty()) by_device[d.name] = std::move(values);
    }
  }
  if (by_device.empty()) return {};
  return [by_device](const Device& device) {
    const auto it = by_device.find(device.info().name);
    return it == by_device.end() ? Tuning{} : it->second;
  };
}

int ProfileKeeper::learn(const Report& report, const VariantChoice& variant) {
  if (!profile()) return 0;
  Profile trial = *profile_;
  if (hetstencil::learn(trial, report, 0.25, variant) == 0) return 0;
  int moved = 0;
  // Read again and written under its lock, so that runs at once lose no update.
  update_profile(path_, fingerprint_of(topology_), [&](Profile& stored) {
    Profile named = named_for(stored, devices_);
    moved = hetstencil::learn(named, report, 0.25, variant);
    store_named(stored, named, devices_);
  });
  profile_ = std::move(trial);
  return moved;
}

}  // namespace hetstencil
