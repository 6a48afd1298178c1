// The public face of the model: MachineProfile, calibrate_machine and
// ProfileModel over model/ and partition/.
#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <sstream>
#include <tuple>

#include <spdlog/fmt/fmt.h>

#include "devices/backend.hpp"
#include "devices/device_map.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/profile.hpp"
#include "model/calibrate.hpp"
#include "model/predict.hpp"
#include "model/profile.hpp"
#include "model/tune.hpp"
#include "partition/policy.hpp"
#include "runtime/executor.hpp"
#include "runtime/machine_profile.hpp"

namespace hetstencil {

struct MachineProfile::Impl {
  Profile profile;
};

namespace {

MachineProfile wrap(Profile p) {
  return MachineProfile(std::make_shared<const MachineProfile::Impl>(MachineProfile::Impl{std::move(p)}));
}

DeviceMapOptions mapping_of(const RuntimeOptions& machine, const std::string& selection) {
  return DeviceMapOptions{machine.cpu_devices, machine.threads_per_device, selection, backend_of(DeviceKind::Gpu) != nullptr, {}};
}

std::vector<DeviceInfo> infos_of(const std::vector<DeviceSpec>& specs) {
  std::vector<DeviceInfo> out;
  for (const auto& s : specs) out.push_back(s.info);
  return out;
}

// "cpu" < "gpu", then by number: the order the runtime maps devices in.
bool device_order(const std::string& a, const std::string& b) {
  const auto split = [](const std::string& name) {
    const auto digits = name.find_first_of("0123456789");
    const std::string number = digits == std::string::npos ? "" : name.substr(digits);
    return std::make_tuple(name.substr(0, digits), number.size(), number);
  };
  return split(a) < split(b);
}

std::vector<std::string> names_in_order(const Profile& p) {
  std::vector<std::string> names;
  for (const auto& [name, d] : p.devices) names.push_back(name);
  std::sort(names.begin(), names.end(), device_order);
  return names;
}

// The profile's devices chosen by `selection`, in device order; a name the
// profile lacks is refused with the names it has.
std::vector<DeviceInfo> profile_devices(const Profile& p, const std::string& selection) {
  const std::vector<std::string> names = names_in_order(p);
  std::stringstream in(selection);
  for (std::string word; std::getline(in, word, ',');) {
    const std::string name = !word.empty() && word[0] == '-' ? word.substr(1) : word;
    if (name.empty() || name == "all" || name == "cpu" || name == "gpu") continue;
    if (!p.devices.count(name)) {
      HETSTENCIL_THROW(InvalidArgument, fmt::format("the profile has no device {} (it has: {})", as_typed(name),
                                                    fmt::join(names, ", ")));
    }
  }
  const auto chosen = device_selection(selection, names);
  std::vector<DeviceInfo> out;
  for (const auto& name : names) {
    if (!chosen(name)) continue;
    DeviceInfo d;
    d.name = name;
    d.kind = kind_of(p.devices.at(name));
    out.push_back(d);
  }
  return out;
}

std::string path_of(const std::string& profile, const Topology& t) {
  return profile.empty() ? default_profile_path(fingerprint_of(t).host) : profile;
}

}  // namespace

MachineProfile::MachineProfile() : impl_(std::make_shared<const Impl>()) {}
MachineProfile::MachineProfile(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
MachineProfile::~MachineProfile() = default;
MachineProfile::MachineProfile(const MachineProfile&) = default;
MachineProfile& MachineProfile::operator=(const MachineProfile&) = default;
MachineProfile::MachineProfile(MachineProfile&&) noexcept = default;
MachineProfile& MachineProfile::operator=(MachineProfile&&) noexcept = default;

std::optional<MachineProfile> MachineProfile::load(const std::string& path) {
  auto p = load_profile(path, nullptr);
  if (!p) return std::nullopt;
  return wrap(std::move(*p));
}

MachineProfile MachineProfile::save(const std::string& path) const { return wrap(save_profile(path, impl_->profile)); }

std::string MachineProfile::to_json(int indent) const { return hetstencil::to_json(impl_->profile, indent); }

double MachineProfile::canary_bytes_per_s() const { return impl_->profile.canary_bytes_per_s; }

std::string MachineProfile::to_text() const {
  const Profile& p = impl_->profile;
  std::string out;
  auto put = std::back_inserter(out);
  fmt::format_to(put, "profile of {} ({}, {} sockets, {} cores, {} GPUs), kernels {}\n", p.fingerprint.host,
                 p.fingerprint.cpu_model, p.fingerprint.sockets, p.fingerprint.cores, p.fingerprint.gpus.size(),
                 p.fingerprint.kernels);
  fmt::format_to(put, "{:<8} {:<16} {:>9} {:>12} {:>10}\n", "device", "precision/nx", "rows", "ms/iter", "GCells/s");
  for (const auto& [device_key, d] : p.devices) {
    const std::string& name = d.name.empty() ? device_key : d.name;
    for (const auto& [key, curve] : d.rates) {
      const std::int64_t nx = std::strtoll(key.c_str() + key.find('/') + 1, nullptr, 10);  // "double/2048..."
      for (const auto& pt : curve.points()) {
        fmt::format_to(put, "{:<8} {:<16} {:>9} {:>12.4f} {:>10.2f}\n", name, key, pt.rows, pt.seconds * 1e3,
                       static_cast<double>(pt.rows * nx) / pt.seconds / 1e9);
      }
    }
    for (const auto& [key, seconds] : d.step) {
      fmt::format_to(put, "{:<8} {:<16} loop {:.2f} us an iteration {}\n", name, key, seconds * 1e6,
                     kind_of(d) == DeviceKind::Gpu ? "of 4 rows" : "besides the sweep");
    }
    for (const auto& [key, seconds] : d.overhead) {
      fmt::format_to(put, "{:<8} {:<16} overhead {:.2f} us an iteration of a full slab besides the sweep\n", name, key,
                     seconds * 1e6);
    }
    for (const auto& [key, seconds] : d.fixed) {
      fmt::format_to(put, "{:<8} {:<16} fixed {:.1f} us a solve besides its iterations and check\n", name, key,
                     seconds * 1e6);
    }
    if (!d.setup_in.empty()) {
      fmt::format_to(put, "{:<8} set-up {:.1f} GB/s + {:.1f} us, tear-down {:.1f} GB/s + {:.1f} us\n", name,
                     d.setup_in.bytes_per_s / 1e9, d.setup_in.latency_s * 1e6, d.setup_out.bytes_per_s / 1e9,
                     d.setup_out.latency_s * 1e6);
    }
    if (d.slowdown_beside_gpus > 1.0) {
      fmt::format_to(put, "{:<8} beside GPUs up to {:.2f}x slower than its curve (learnt from solves)\n", name,
                     d.slowdown_beside_gpus);
    }
    for (const auto& [key, t] : d.tuned) {
      fmt::format_to(put, "{:<8} {:<16} tuned on {}: {} ({:.4f} ms, {:.4f} ms at the defaults)\n", name, key, t.grid,
                     tuning_text(t.values), t.tuned_s * 1e3, t.default_s * 1e3);
    }
  }
  fmt::format_to(put, "{:<16} {:>12} {:>10}   ({})\n", "link (a row)", "latency_us", "GB/s", p.link_conditions);
  for (const auto& [key, c] : p.links) {
    fmt::format_to(put, "{:<16} {:>12.2f} {:>10.2f}\n", key, c.latency_s * 1e6, c.bytes_per_s / 1e9);
  }
  return out;
}

std::string default_profile_path(const Topology& topology) {
  return default_profile_path(fingerprint_of(topology).host);
}

Calibrated calibrate_machine(const RuntimeOptions& machine, const CalibrateOptions& options) {
  const Topology t = load_topology(machine.topology);
  if (!t.this_machine) HETSTENCIL_THROW(InvalidArgument, "calibration measures this machine; drop --topology/--synthetic");
  const auto devices = map_devices(t, mapping_of(machine, machine.devices));
  Calibrated out;
  out.path = path_of(options.profile, t);
  CalibrationOptions c;
  // The devices sweep with their tuned parameters, as the solves it models do.
  const Fingerprint here = fingerprint_of(t);
  // Another machine's profile is said so once, when the calibration replaces it.
  const auto stored = load_profile(out.path, nullptr);
  if (stored && here.difference(stored->fingerprint).empty()) c.tuned = named_for(*stored, infos_of(devices));
  c.time_solve = solve_seconds;
  c.precisions = options.precisions;
  c.nx = options.nx;
  c.max_rows = options.max_rows;
  c.budget_s = options.budget_s;
  c.variant = options.variant;
  // Merged under the profile's lock with what other runs saved meanwhile.
  const Calibration cal = calibrate(t, devices, c, Profile{});
  out.profile = wrap(save_profile(out.path, cal.profile));
  out.seconds = cal.seconds;
  out.skipped = cal.skipped;
  return out;
}

struct ProfileModel::Impl {
  Topology topology;
  std::string path;
  Profile profile;  // keyed by the names of `devices`
  std::vector<DeviceInfo> devices;
  bool this_machine = false;  // the profile was measured here: memory bounds known
  std::string selection;
};

ProfileModel::ProfileModel(const RuntimeOptions& machine, const std::string& profile, Use use)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.topology = load_topology(machine.topology);
  m.path = path_of(profile, m.topology);
  m.selection = machine.devices;
  // A given profile describes its own machine; the default one must be this machine's.
  const Fingerprint here = fingerprint_of(m.topology);
  const auto stored = load_profile(m.path, profile.empty() ? &here : nullptr);
  if (!stored) HETSTENCIL_THROW(InvalidArgument, "no usable profile at " + m.path + " (run hetstencil calibrate)");
  m.this_machine = m.topology.this_machine && here == stored->fingerprint;
  if (!m.this_machine) {
    m.profile = named_as_measured(*stored);
    m.devices = profile_devices(m.profile, machine.devices);
  } else if (use == Use::Predict) {
    // This machine's devices as the options map them (a CPU device beside
    // chosen GPUs gives them a core, and is another device): their own curves.
    m.devices = infos_of(map_devices(m.topology, mapping_of(machine, machine.devices)));
    m.profile = named_for(*stored, m.devices);
  } else {
    // The machine's default devices name what the profile has; the selection
    // then chooses among the profile's.
    m.profile = named_as_measured(*stored, infos_of(map_devices(m.topology, mapping_of(machine, ""))));
    m.devices = profile_devices(m.profile, machine.devices);
  }
  if (use == Use::Predict) {
    const std::vector<std::string> known = names_in_order(m.profile);
    for (const auto& d : m.devices) {
      if (!m.profile.devices.count(d.name)) {
        HETSTENCIL_THROW(InvalidArgument, fmt::format("the profile {} has no device '{}' (it has: {})", m.path, d.name,
                                                      fmt::join(known, ", ")));
      }
    }
  }
}

namespace {

// The values each of `devices` sweeps `problem` with where the profile tuned
// them: its prediction is for those values.
void note_tuned(const Profile& named, const Problem& problem, const std::vector<std::string>& devices, Prediction& p) {
  for (const std::string& name : devices) {
    const Tuning values = tuned_values(named, name, problem.stencil, problem.precision);
    if (!values.empty()) {
      p.notes.push_back(name + " sweeps with " + tuning_text(values) + " (tuned in the profile: hetstencil profile show)");
    }
  }
}

}  // namespace

ProfileModel::~ProfileModel() = default;
ProfileModel::ProfileModel(ProfileModel&&) noexcept = default;
ProfileModel& ProfileModel::operator=(ProfileModel&&) noexcept = default;

const std::string& ProfileModel::path() const { return impl_->path; }
const std::vector<DeviceInfo>& ProfileModel::devices() const { return impl_->devices; }

Plan ProfileModel::plan(const Problem& problem, const VariantChoice& variant) const {
  problem.validate();
  const Impl& m = *impl_;
  const StencilModel model = model_for_stencil(m.profile, problem);
  std::vector<DeviceInfo> devices;
  for (const auto& d : m.devices) {
    if (model.profile.rate(d.name, model.units.precision, model.units.nx, variant)) devices.push_back(d);
  }
  if (devices.empty()) {
    HETSTENCIL_THROW(InvalidArgument, "the profile has no device to plan for with these options" +
                                          (is_poisson5(problem.stencil)
                                               ? std::string()
                                               : " (no CPU device with curves of the stencil '" + problem.stencil.name +
                                                     "' or of a built-in to estimate them from)"));
  }
  Topology elsewhere;  // another machine's profile: no memory bounds known
  elsewhere.this_machine = false;
  Plan plan = model_plan(model.profile, devices, m.this_machine ? m.topology : elsewhere, model.units, variant);
  // Its parts index devices(), not the subset with curves.
  for (auto& part : plan.parts) {
    const std::string& name = devices[part.device].name;
    part.device = static_cast<std::size_t>(
        std::find_if(m.devices.begin(), m.devices.end(), [&](const DeviceInfo& d) { return d.name == name; }) -
        m.devices.begin());
  }
  plan.origin = "planned from " + m.path + (model.estimated.empty() ? "" : " (" + model.estimated + ")");
  if (!model.estimated.empty()) plan.prediction->notes.push_back(model.estimated);
  plan.prediction->estimated = model.estimated;
  std::vector<std::string> used;
  for (const auto& part : plan.parts) used.push_back(m.devices[part.device].name);
  note_tuned(m.profile, problem, used, *plan.prediction);
  return plan;
}

Prediction ProfileModel::predict(const Problem& problem, const std::vector<std::int64_t>& rows,
                                 const VariantChoice& variant) const {
  problem.validate();
  const Impl& m = *impl_;
  if (rows.size() != m.devices.size()) {
    HETSTENCIL_THROW(InvalidArgument, fmt::format("{} row counts for {} devices", rows.size(), m.devices.size()));
  }
  const StencilModel model = model_for_stencil(m.profile, problem);
  std::vector<PlannedDevice> planned;
  for (std::size_t k = 0; k < m.devices.size(); ++k) {
    planned.push_back({m.devices[k].name, m.devices[k].kind, rows[k]});
  }
  Prediction p = hetstencil::predict(model.profile, planned, model.units.precision, model.units.nx, problem.stop, variant);
  if (!model.estimated.empty()) p.notes.push_back(model.estimated);
  p.estimated = model.estimated;
  std::vector<std::string> used;
  for (const PlannedDevice& d : planned) {
    if (d.rows > 0) used.push_back(d.name);
  }
  note_tuned(m.profile, problem, used, p);
  return p;
}

}  // namespace hetstencil
