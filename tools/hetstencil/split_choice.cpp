#include "tools/hetstencil/split_choice.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>

#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "devices/backend.hpp"
#include "devices/device_map.hpp"
#include "hetstencil/error.hpp"
#include "model/calibrate.hpp"

namespace hetstencil::cli {

bool covers(const Profile& profile, const std::vector<DeviceInfo>& devices, Precision precision, std::int64_t nx,
            const VariantChoice& variant) {
  return std::all_of(devices.begin(), devices.end(), [&](const DeviceInfo& d) {
    const auto it = profile.devices.find(d.name);
    return it != profile.devices.end() && it->second.rates.count(rate_key(precision, nx, swept_by(d.kind, variant))) > 0;
  });
}

MachineModel machine_model(const Runtime& runtime, const RuntimeOptions& machine, const Problem& problem,
                           bool calibrate_missing, double budget_s, const VariantChoice& variant) {
  MachineModel m;
  const Topology& t = runtime.topology();
  if (!t.this_machine) return m;
  const Fingerprint here = fingerprint_of(t);
  m.path = default_profile_path(here.host);
  if (const auto stored = load_profile(m.path, &here)) m.profile = named_for(*stored, runtime.devices());
  if (!calibrate_missing || (m.profile && covers(*m.profile, runtime.devices(), problem.precision, problem.nx, variant))) {
    return m;
  }

  // The model is measured at the problem's own width: a curve scaled from
  // another width misses how rows fill a GPU and how a slab fits a cache.
  fmt::print(stderr, "hetstencil: this machine's profile ({}) has no {} curves for rows of {}{}: calibrating first\n",
             m.path, to_string(problem.precision), problem.nx,
             variant.variant == Variant::Sync
                 ? ""
                 : fmt::format(" (GPUs sweeping {} {})", to_string(variant.variant), variant.param));
  std::fflush(stderr);
  CalibrationOptions c;
  c.precisions = {problem.precision};
  c.nx = problem.nx;
  c.budget_s = budget_s;
  c.variant = variant;
  // Calibration makes devices of its own, as the runtime maps them; the
  // runtime's own wait idle meanwhile.
  const auto specs = map_devices(
      t, DeviceMapOptions{machine.cpu_devices, machine.threads_per_device, machine.devices, backend_of(DeviceKind::Gpu) != nullptr});
  const Calibration cal = calibrate(t, specs, c, Profile{});
  fmt::print(stderr, "hetstencil: calibrated in {:.2f} s (hetstencil profile show prints it)\n", cal.seconds);
  for (const auto& s : cal.skipped) fmt::print(stderr, "hetstencil: calibration skipped (budget): {}\n", s);
  // Merged under the profile's lock with what other runs saved meanwhile.
  Profile stored = cal.profile;
  try {
    stored = save_profile(m.path, cal.profile);
  } catch (const Error& e) {
    m.not_saved = e.what();
    spdlog::warn("the calibration could not be saved (it is used for this run all the same): {}", m.not_saved);
    if (m.profile) store_named(stored, *m.profile, runtime.devices());
    merge_into(stored, cal.profile);
  }
  m.profile = named_for(stored, runtime.devices());
  return m;
}

std::vector<std::int64_t> rows_of_shares(const std::vector<double>& shares, std::int64_t ny) {
  double total = 0.0;
  for (double s : shares) {
    if (!(s >= 0.0) || !std::isfinite(s)) HETSTENCIL_THROW(InvalidArgument, "shares must be finite and >= 0");
    total += s;
  }
  if (!(total > 0.0)) HETSTENCIL_THROW(InvalidArgument, "the shares add up to 0: give some device rows");
  const auto positive = std::count_if(shares.begin(), shares.end(), [](double s) { return s > 0.0; });
  if (positive > ny) {
    HETSTENCIL_THROW(InvalidArgument, std::to_string(positive) + " devices with a share but only " +
                                          std::to_string(ny) + " rows");
  }
  // Largest remainders, then a row for any positive share left without one,
  // taken from the device with the most.
  std::vector<std::int64_t> rows(shares.size(), 0);
  std::vector<double> remainder(shares.size(), 0.0);
  std::int64_t given = 0;
  for (std::size_t k = 0; k < shares.size(); ++k) {
    const double exact = static_cast<double>(ny) * shares[k] / total;
    rows[k] = static_cast<std::int64_t>(std::floor(exact));
    remainder[k] = exact - std::floor(exact);
    given += rows[k];
  }
  std::vector<std::size_t> order(shares.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return remainder[a] > remainder[b]; });
  for (std::size_t k = 0; given < ny; k = (k + 1) % order.size(), ++given) ++rows[order[k]];
  for (std::size_t k = 0; k < shares.size(); ++k) {
    if (shares[k] > 0.0 && rows[k] == 0) {
      --*std::max_element(rows.begin(), rows.end());
      rows[k] = 1;
    }
  }
  return rows;
}

Plan plan_of(const std::vector<std::string>& names, const std::vector<std::int64_t>& rows,
             const std::vector<DeviceInfo>& devices) {
  Plan plan;
  std::int64_t first = 1;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (rows[k] == 0) continue;
    const auto it = std::find_if(devices.begin(), devices.end(), [&](const DeviceInfo& d) { return d.name == names[k]; });
    if (it == devices.end()) {
      HETSTENCIL_THROW(InvalidArgument, "the split names " + names[k] + ", which this run does not have (see --devices)");
    }
    plan.parts.push_back(Assignment{static_cast<std::size_t>(it - devices.begin()), first, rows[k]});
    first += rows[k];
  }
  return plan;
}

SplitPlan model_plan(const Profile& profile, const Runtime& runtime, const Problem& problem,
                     const VariantChoice& variant) {
  return plan_split(profile, candidates_of(runtime.devices(), runtime.topology(), problem.precision, problem.nx),
                    problem.precision, problem.nx, problem.ny, problem.stop, variant);
}

std::optional<Prediction> predict_plan(const Profile& profile, const std::vector<DeviceInfo>& devices, const Plan& plan,
                                       const Problem& problem) {
  std::vector<PlannedDevice> planned;
  for (const auto& part : plan.parts) {
    const DeviceInfo& d = devices.at(part.device);
    if (!profile.rate(d.name, problem.precision, problem.nx, plan.variant)) return std::nullopt;
    planned.push_back(PlannedDevice{d.name, d.kind, part.rows});
  }
  return predict(profile, planned, problem.precision, problem.nx, problem.stop, plan.variant);
}

nlohmann::json saved_plan_fields(std::int64_t nx, std::int64_t ny, Precision precision, const VariantChoice& variant,
                                 const StopRule& stop) {
  nlohmann::json j{{"nx", nx},
                   {"ny", ny},
                   {"precision", to_string(precision)},
                   {"variant", to_string(variant.variant)},
                   {"iterations", stop.max_iterations},
                   {"tolerance", stop.tolerance},
                   {"check_every", stop.check_every}};
  if (variant.variant == Variant::Blocked) j["depth"] = variant.param;
  if (variant.variant == Variant::Async2 || variant.variant == Variant::Async3) j["alpha"] = variant.param;
  return j;
}

namespace {

constexpr std::int64_t kMostRows = std::int64_t(1) << 30;  // as --nx and --ny allow

// A field of a saved plan, its type and range checked (nlohmann's own
// conversions would wrap an out-of-range integer).
class PlanFields {
 public:
  explicit PlanFields(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void bad(const std::string& what) const {
    HETSTENCIL_THROW(InvalidArgument, path_ + " is not a plan saved by 'hetstencil plan --json': " + what);
  }
  const nlohmann::json& at(const nlohmann::json& object, const std::string& key) const {
    if (!object.is_object() || !object.contains(key)) bad("it has no field '" + key + "'");
    return object.at(key);
  }
  std::int64_t integer(const nlohmann::json& object, const std::string& key, std::int64_t lo, std::int64_t hi) const {
    const nlohmann::json& v = at(object, key);
    const std::string allowed = fmt::format("'{}' must be a whole number from {} to {}", key, lo, hi);
    if (!v.is_number_integer()) bad(allowed);
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) bad(allowed);
    const auto value = v.get<std::int64_t>();
    if (value < lo || value > hi) bad(allowed);
    return value;
  }
  double number(const nlohmann::json& object, const std::string& key) const {
    const nlohmann::json& v = at(object, key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0.0) {
      bad("'" + key + "' must be a finite number >= 0");
    }
    return v.get<double>();
  }
  std::string text(const nlohmann::json& object, const std::string& key) const {
    const nlohmann::json& v = at(object, key);
    if (!v.is_string()) bad("'" + key + "' must be a string");
    return v.get<std::string>();
  }

 private:
  std::string path_;
};

}  // namespace

SavedPlan read_saved_plan(const std::string& path) {
  std::error_code error;
  // Never opened otherwise: a FIFO would block the read.
  if (!std::filesystem::is_regular_file(path, error)) {
    HETSTENCIL_THROW(InvalidArgument, "the plan " + path + " is not a regular file: give a file saved by 'hetstencil plan --json'");
  }
  std::ifstream in(path);
  if (!in) HETSTENCIL_THROW(InvalidArgument, "cannot read the plan " + path);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  const PlanFields f(path);
  if (j.is_discarded()) f.bad("it is not JSON");
  SavedPlan s;
  s.nx = f.integer(j, "nx", 1, kMostRows);
  s.ny = f.integer(j, "ny", 1, kMostRows);
  const std::string precision = f.text(j, "precision");
  try {
    s.precision = parse_precision(precision);
  } catch (const InvalidArgument& e) {
    f.bad(e.what());
  }
  const nlohmann::json& devices = f.at(j, "devices");
  if (!devices.is_array() || devices.empty()) f.bad("'devices' must be a list of {name, rows}");
  std::int64_t total = 0;  // each count is at most ny (<= 2^30): no overflow
  for (const auto& d : devices) {
    s.names.push_back(f.text(d, "name"));
    s.rows.push_back(f.integer(d, "rows", 0, s.ny));
    total += s.rows.back();
  }
  if (total != s.ny) f.bad("its rows add up to " + std::to_string(total) + ", not its ny = " + std::to_string(s.ny));
  const std::string variant = f.text(j, "variant");
  try {
    s.variant.variant = parse_variant(variant);
  } catch (const InvalidArgument& e) {
    f.bad(e.what());
  }
  if (s.variant.variant == Variant::Blocked) s.variant.param = static_cast<int>(f.integer(j, "depth", 1, kMaxBlockedDepth));
  if (s.variant.variant == Variant::Async2 || s.variant.variant == Variant::Async3) {
    s.variant.param = static_cast<int>(f.integer(j, "alpha", 1, kMaxVariantSweeps));
  }
  s.stop.max_iterations = f.integer(j, "iterations", 0, std::numeric_limits<std::int64_t>::max());
  s.stop.tolerance = f.number(j, "tolerance");
  s.stop.check_every = f.integer(j, "check_every", 1, std::numeric_limits<std::int64_t>::max());
  return s;
}

void check_row_counts(const std::string& option, const std::vector<std::string>& names,
                      const std::vector<std::int64_t>& rows, std::int64_t ny) {
  for (std::size_t k = 0; k < rows.size(); ++k) {
    if (rows[k] < 0 || rows[k] > ny) {
      HETSTENCIL_THROW(InvalidArgument, fmt::format("{} gives {} {} rows: a device takes 0 (left out) to {} rows",
                                                    option, names[k], rows[k], ny));
    }
  }
}

}  // namespace hetstencil::cli
