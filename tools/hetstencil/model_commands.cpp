// hetstencil calibrate | profile show | predict | plan: the model and the
// planner from the command line.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

#include "devices/backend.hpp"
#include "devices/device_map.hpp"
#include "hetstencil/error.hpp"
#include "model/calibrate.hpp"
#include "model/predict.hpp"
#include "core/even_split.hpp"
#include "partition/planner.hpp"
#include "tools/hetstencil/commands.hpp"
#include "tools/hetstencil/machine_options.hpp"
#include "tools/hetstencil/option_checks.hpp"
#include "tools/hetstencil/problem_options.hpp"
#include "tools/hetstencil/split_choice.hpp"

namespace hetstencil::cli {
namespace {

constexpr std::int64_t kMostRows = std::int64_t(1) << 30;  // as --nx and --ny allow
constexpr double kMostBudgetSeconds = 86400.0;             // a day

struct ModelOptions {
  RuntimeOptions machine;
  std::string profile;  // "" : this machine's default path
  ProblemOptions problem = [] {
    ProblemOptions p;
    p.iterations = 1000;
    return p;
  }();
  std::int64_t max_rows = 0;
  double budget = 10.0;
  std::vector<std::int64_t> rows;
  bool json = false;
};

std::vector<Precision> precisions_of(const std::string& choice) {
  if (choice == "both") return {Precision::Float, Precision::Double};
  return {parse_precision(choice)};
}

std::string profile_path(const ModelOptions& o, const Topology& t) {
  return o.profile.empty() ? default_profile_path(fingerprint_of(t).host) : o.profile;
}

// A given profile describes its own machine; the default one must be this
// machine's. Keyed by device name: for this machine's devices as mapped by the
// options, their own curves (`mapped`: those alone); otherwise the names the
// devices had when measured.
Profile profile_for_planning(const ModelOptions& o, const Topology& t, std::string& path, bool mapped) {
  path = profile_path(o, t);
  const Fingerprint here = fingerprint_of(t);
  auto p = load_profile(path, o.profile.empty() ? &here : nullptr);
  if (!p) HETSTENCIL_THROW(InvalidArgument, "no usable profile at " + path + " (run hetstencil calibrate)");
  if (!t.this_machine || !(here == p->fingerprint)) return named_as_measured(*p);
  std::vector<DeviceInfo> devices;
  // `mapped`: as the options choose (a CPU device beside chosen GPUs gives them a
  // core, and is another device); otherwise the machine's default devices name
  // what the profile has, and --devices then chooses among the profile's.
  const std::string selection = mapped ? o.machine.devices : "";
  for (const auto& spec : map_devices(t, DeviceMapOptions{o.machine.cpu_devices, o.machine.threads_per_device,
                                                          selection, backend_of(DeviceKind::Gpu) != nullptr})) {
    devices.push_back(spec.info);
  }
  return mapped ? named_for(*p, devices) : named_as_measured(*p, devices);
}

void print_profile(const Profile& p) {
  fmt::print("profile of {} ({}, {} sockets, {} cores, {} GPUs), kernels {}\n", p.fingerprint.host,
             p.fingerprint.cpu_model, p.fingerprint.sockets, p.fingerprint.cores, p.fingerprint.gpus.size(),
             p.fingerprint.kernels);
  fmt::print("{:<8} {:<16} {:>9} {:>12} {:>10}\n", "device", "precision/nx", "rows", "ms/iter", "GCells/s");
  for (const auto& [device_key, d] : p.devices) {
    const std::string& name = d.name.empty() ? device_key : d.name;
    for (const auto& [key, curve] : d.rates) {
      const std::int64_t nx = std::strtoll(key.c_str() + key.find('/') + 1, nullptr, 10);  // "double/2048..."
      for (const auto& pt : curve.points()) {
        fmt::print("{:<8} {:<16} {:>9} {:>12.4f} {:>10.2f}\n", name, key, pt.rows, pt.seconds * 1e3,
                   static_cast<double>(pt.rows * nx) / pt.seconds / 1e9);
      }
    }
    for (const auto& [key, seconds] : d.step) {
      fmt::print("{:<8} {:<16} loop {:.2f} us an iteration besides the sweep\n", name, key, seconds * 1e6);
    }
    if (!d.setup_in.empty()) {
      fmt::print("{:<8} set-up {:.1f} GB/s + {:.1f} us, tear-down {:.1f} GB/s + {:.1f} us\n", name,
                 d.setup_in.bytes_per_s / 1e9, d.setup_in.latency_s * 1e6, d.setup_out.bytes_per_s / 1e9,
                 d.setup_out.latency_s * 1e6);
    }
    if (d.slowdown_beside_gpus > 1.0) {
      fmt::print("{:<8} beside GPUs up to {:.2f}x slower than its curve (learnt from solves)\n", name,
                 d.slowdown_beside_gpus);
    }
  }
  fmt::print("{:<16} {:>12} {:>10}   ({})\n", "link (a row)", "latency_us", "GB/s", p.link_conditions);
  for (const auto& [key, c] : p.links) {
    fmt::print("{:<16} {:>12.2f} {:>10.2f}\n", key, c.latency_s * 1e6, c.bytes_per_s / 1e9);
  }
}

int run_calibrate(const ModelOptions& o) {
  const Topology t = load_topology(o.machine.topology);
  if (!t.this_machine) HETSTENCIL_THROW(InvalidArgument, "calibration measures this machine; drop --topology/--synthetic");
  const auto devices = map_devices(t, DeviceMapOptions{o.machine.cpu_devices, o.machine.threads_per_device,
                                                       o.machine.devices, backend_of(DeviceKind::Gpu) != nullptr});
  const std::string path = profile_path(o, t);
  CalibrationOptions c;
  c.precisions = precisions_of(o.problem.precision);
  c.nx = o.problem.nx;
  c.max_rows = o.max_rows;
  c.budget_s = o.budget;
  c.variant = o.problem.variant_choice();
  // Merged under the profile's lock with what other runs saved meanwhile.
  const Calibration cal = calibrate(t, devices, c, Profile{});
  const Profile saved = save_profile(path, cal.profile);
  if (o.json) {
    fmt::print("{}\n", to_json(saved));
    return 0;
  }
  print_profile(saved);
  fmt::print("calibrated in {:.2f} s (budget {:.1f} s); saved to {}\n", cal.seconds, o.budget, path);
  for (const auto& s : cal.skipped) fmt::print("skipped (budget): {}\n", s);
  return 0;
}

int run_profile_show(const ModelOptions& o) {
  const Topology t = load_topology(o.machine.topology);
  const std::string path = profile_path(o, t);
  const auto p = load_profile(path, nullptr);
  if (!p) HETSTENCIL_THROW(InvalidArgument, "no usable profile at " + path + " (run hetstencil calibrate)");
  if (o.json) {
    fmt::print("{}\n", to_json(*p));
  } else {
    print_profile(*p);
  }
  return 0;
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

// The profile's devices chosen by --devices, in device order; a name the
// profile lacks is refused with the names it has.
std::vector<DeviceInfo> profile_devices(const Profile& p, const std::string& selection) {
  std::vector<std::string> names;
  for (const auto& [name, d] : p.devices) names.push_back(name);
  std::sort(names.begin(), names.end(), device_order);
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

// Whether the profile is this machine's (then its devices are mapped as a
// solve would map them, --cpu-devices and all).
bool is_this_machine(const Profile& p, const Topology& t) { return t.this_machine && fingerprint_of(t) == p.fingerprint; }

int run_predict(const ModelOptions& o) {
  const Topology t = load_topology(o.machine.topology);
  std::string path;
  const Profile p = profile_for_planning(o, t, path, true);
  std::vector<DeviceInfo> devices;
  if (is_this_machine(p, t)) {
    for (const auto& spec : map_devices(t, DeviceMapOptions{o.machine.cpu_devices, o.machine.threads_per_device,
                                                            o.machine.devices, backend_of(DeviceKind::Gpu) != nullptr})) {
      devices.push_back(spec.info);
    }
  } else {
    devices = profile_devices(p, o.machine.devices);
  }
  std::vector<std::string> names;
  for (const auto& d : devices) names.push_back(d.name);
  std::vector<std::string> known;
  for (const auto& [name, d] : p.devices) known.push_back(name);
  std::sort(known.begin(), known.end(), device_order);
  for (const auto& name : names) {
    if (!p.devices.count(name)) {
      HETSTENCIL_THROW(InvalidArgument, fmt::format("the profile {} has no device '{}' (it has: {})", path, name,
                                                    fmt::join(known, ", ")));
    }
  }
  const std::int64_t ny = o.problem.rows();
  if (!o.rows.empty() && o.rows.size() != devices.size()) {
    HETSTENCIL_THROW(InvalidArgument, fmt::format("--rows gives {} counts for {} devices ({})", o.rows.size(),
                                                  devices.size(), fmt::join(names, ",")));
  }
  std::vector<std::int64_t> rows = o.rows;
  if (rows.empty()) {
    for (std::size_t k = 0; k < devices.size(); ++k) {
      rows.push_back(even_block(ny, static_cast<std::int64_t>(devices.size()), static_cast<std::int64_t>(k)).size());
    }
  }
  check_row_counts("--rows", names, rows, ny);
  std::vector<PlannedDevice> planned;
  std::int64_t total = 0;  // each count is at most ny: no overflow
  for (std::size_t k = 0; k < devices.size(); ++k) {
    planned.push_back({devices[k].name, devices[k].kind, rows[k]});
    total += rows[k];
  }
  if (total != ny) {
    HETSTENCIL_THROW(InvalidArgument, "--rows add up to " + std::to_string(total) + ", not ny = " + std::to_string(ny));
  }
  const Precision precision = parse_precision(o.problem.precision);
  const Prediction pr = predict(p, planned, precision, o.problem.nx, o.problem.stop(), o.problem.variant_choice());
  fmt::print("{:<8} {:>9} {:>12} {:>12} {:>12} {:>12} {:>10}\n", "device", "rows", "compute_ms", "exchange_ms",
             "exposed_ms", "iter_ms", "check_ms");
  for (const auto& d : pr.devices) {
    fmt::print("{:<8} {:>9} {:>12.4f} {:>12.4f} {:>12.4f} {:>12.4f} {:>10.4f}\n", d.name, d.rows, d.compute_s * 1e3,
               d.exchange_s * 1e3, d.exposed_s * 1e3, d.iteration_s * 1e3, d.check_s * 1e3);
  }
  fmt::print("{} x {} {}, {} iterations, {} checks: {:.4f} ms an iteration, {:.4f} ms a check, set-up {:.4f} s, "
             "tear-down {:.4f} s, total {:.4f} s\n",
             o.problem.nx, ny, to_string(precision), o.problem.iterations, pr.checks, pr.iteration_s * 1e3, pr.check_s * 1e3,
             pr.setup_s, pr.teardown_s, pr.total_s);
  for (const auto& n : pr.notes) fmt::print("note: {}\n", n);
  return 0;
}

// Devices to plan for: the profile's (so that a machine we do not have can be
// planned), chosen by --devices; memory bounds where the profile is this machine's.
std::vector<Candidate> profile_candidates(const Profile& p, const ModelOptions& o, const Topology& t,
                                          Precision precision) {
  std::vector<DeviceInfo> devices;
  for (const auto& d : profile_devices(p, o.machine.devices)) {
    if (p.rate(d.name, precision, o.problem.nx, o.problem.variant_choice())) devices.push_back(d);
  }
  if (devices.empty()) HETSTENCIL_THROW(InvalidArgument, "the profile has no device to plan for with these options");
  Topology elsewhere;  // another machine's profile: no memory bounds known
  elsewhere.this_machine = false;
  return candidates_of(devices, is_this_machine(p, t) ? t : elsewhere, precision, o.problem.nx);
}

int run_plan(const ModelOptions& o) {
  const Topology t = load_topology(o.machine.topology);
  std::string path;
  // plan takes the profile's devices, whatever cut of the cores they were measured in.
  const Profile p = profile_for_planning(o, t, path, false);
  const Precision precision = parse_precision(o.problem.precision);
  const std::int64_t ny = o.problem.rows();
  const SplitPlan plan = plan_split(p, profile_candidates(p, o, t, precision), precision, o.problem.nx, ny,
                                    o.problem.stop(), o.problem.variant_choice());
  const Prediction& pr = plan.prediction;
  if (o.json) {
    nlohmann::json devices = nlohmann::json::array();
    for (std::size_t k = 0; k < pr.devices.size(); ++k) {
      const DevicePrediction& d = pr.devices[k];
      devices.push_back({{"name", d.name}, {"rows", d.rows}, {"share", static_cast<double>(d.rows) / static_cast<double>(ny)},
                         {"compute_s", d.compute_s}, {"exchange_s", d.exchange_s}, {"exposed_s", d.exposed_s},
                         {"iteration_s", d.iteration_s}, {"setup_s", d.setup_s},
                         {"sized_slower", plan.devices[k].sized_slower}});
    }
    nlohmann::json left = nlohmann::json::array();
    for (const auto& l : plan.left_out) left.push_back({{"name", l.name}, {"reason", l.reason}});
    nlohmann::json j = saved_plan_fields(o.problem.nx, ny, precision, o.problem.variant_choice(), o.problem.stop());
    j.update({{"devices", devices}, {"left_out", left}, {"checks", pr.checks}, {"iteration_s", pr.iteration_s},
              {"check_s", pr.check_s}, {"setup_s", pr.setup_s}, {"teardown_s", pr.teardown_s},
              {"total_s", pr.total_s}});
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("plan for {} x {} {}, {} iterations, from {}\n", o.problem.nx, ny, to_string(precision), o.problem.iterations, path);
  fmt::print("{:<8} {:>9} {:>7} {:>12} {:>12} {:>12} {:>12}\n", "device", "rows", "share", "compute_ms", "exchange_ms",
             "exposed_ms", "iter_ms");
  for (const auto& d : pr.devices) {
    fmt::print("{:<8} {:>9} {:>6.2f}% {:>12.4f} {:>12.4f} {:>12.4f} {:>12.4f}\n", d.name, d.rows,
               100.0 * static_cast<double>(d.rows) / static_cast<double>(ny), d.compute_s * 1e3, d.exchange_s * 1e3,
               d.exposed_s * 1e3, d.iteration_s * 1e3);
  }
  fmt::print("predicted: {:.4f} ms an iteration, set-up {:.4f} s, tear-down {:.4f} s, total {:.4f} s\n",
             pr.iteration_s * 1e3, pr.setup_s, pr.teardown_s, pr.total_s);
  for (const auto& l : plan.left_out) fmt::print("left out: {}: {}\n", l.name, l.reason);
  if (const std::string caution = caution_of(plan); !caution.empty()) {
    fmt::print("note: {} (beside GPUs a CPU device's speed varies from run to run; the prediction is by the "
               "curves)\n",
               caution);
  }
  for (const auto& n : pr.notes) fmt::print("note: {}\n", n);
  return 0;
}

void add_profile_option(CLI::App* sub, ModelOptions& o) {
  sub->add_option("--profile", o.profile, "profile file (default: this machine's, under $XDG_CACHE_HOME/hetstencil); "
                                          "predictions and plans are for the machine it describes")
      ->check(naming("a file"));
}

}  // namespace

Command add_model_commands(CLI::App& app) {
  auto o = std::make_shared<ModelOptions>();
  auto mode = std::make_shared<std::string>();
  CLI::App* cal = app.add_subcommand("calibrate", "Measure every device's rate curve and every link, save the profile");
  cal->add_option("--nx", o->problem.nx, "row width to calibrate for")->transform(integer_in(1, kMostRows))
      ->capture_default_str();
  cal->add_option("--max-rows", o->max_rows, "most rows measured on a device (default, 0: nx)")
      ->transform(integer_in(0, kMostRows));
  cal->add_option("--precision", o->problem.precision, "float, double or both")
      ->check(CLI::IsMember({"float", "double", "both"}))->capture_default_str();
  cal->add_option("--budget", o->budget, "seconds the calibration may take; what does not fit is skipped and said")
      ->transform(number_in(0.0, kMostBudgetSeconds, true))->capture_default_str();
  cal->add_flag("--json", o->json, "print the profile as JSON");
  add_variant_options(cal, o->problem);
  add_machine_options(cal, o->machine);
  add_profile_option(cal, *o);
  cal->callback([mode] { *mode = "calibrate"; });

  CLI::App* profile = app.add_subcommand("profile", "The saved profile");
  profile->require_subcommand(1);
  CLI::App* show = profile->add_subcommand("show", "Print the profile's curves");
  show->add_flag("--json", o->json, "print it as JSON");
  add_profile_option(show, *o);
  show->callback([mode] { *mode = "show"; });

  CLI::App* pred = app.add_subcommand("predict", "Predict a split's time per device and in total from the profile");
  add_problem_options(pred, o->problem);
  pred->add_option("--rows", o->rows, "rows per device, in device order, adding up to ny; 0 leaves a device out "
                                      "(default: even)")
      ->delimiter(',')->transform(integer_in(0, kMostRows));
  add_machine_options(pred, o->machine);
  add_profile_option(pred, *o);
  pred->callback([mode] { *mode = "predict"; });

  CLI::App* plan = app.add_subcommand("plan", "The split that finishes first, from the profile, and why");
  add_problem_options(plan, o->problem);
  plan->add_option("--devices", o->machine.devices, "devices of the profile to use, e.g. gpu or -cpu0 (default: all)");
  plan->add_flag("--json", o->json, "print the plan as one JSON object (solve --plan FILE runs it: its grid, "
                                     "variant, iterations and stop rule)");
  add_profile_option(plan, *o);
  plan->callback([mode] { *mode = "plan"; });

  return [o, mode] {
    if (*mode == "calibrate") return run_calibrate(*o);
    if (*mode == "show") return run_profile_show(*o);
    if (*mode == "plan") return run_plan(*o);
    return run_predict(*o);
  };
}

}  // namespace hetstencil::cli
