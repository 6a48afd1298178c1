#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

#include "core/schema.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/plan.hpp"

namespace hetstencil {
namespace {

// The fields of a saved plan besides its devices and predictions, as
// read_saved_plan reads them.
nlohmann::json saved_plan_fields(const Problem& problem, const VariantChoice& variant) {
  nlohmann::json j{{"nx", problem.nx},
                   {"ny", problem.ny},
                   {"precision", to_string(problem.precision)},
                   {"variant", to_string(variant.variant)},
                   {"iterations", problem.stop.max_iterations},
                   {"tolerance", problem.stop.tolerance},
                   {"check_every", problem.stop.check_every}};
  if (variant.variant == Variant::Blocked) j["depth"] = variant.param;
  if (variant.variant == Variant::Async2 || variant.variant == Variant::Async3) j["alpha"] = variant.param;
  return j;
}

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
  if (const std::string why = schema_mismatch(j, kPlanSchema); !why.empty()) f.bad(why);
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

std::string to_json(const Plan& plan, const Problem& problem, int indent) {
  if (!plan.prediction) HETSTENCIL_THROW(InvalidArgument, "a plan is saved with its prediction, which this one lacks");
  const Prediction& pr = *plan.prediction;
  // The pace past a cache, where a CPU slab fits one in its curve (else null).
  const auto past_cache = [](double seconds) { return seconds > 0.0 ? nlohmann::json(seconds) : nlohmann::json(); };
  nlohmann::json devices = nlohmann::json::array();
  for (const DevicePrediction& d : pr.devices) {
    devices.push_back({{"name", d.name},
                       {"rows", d.rows},
                       {"share", static_cast<double>(d.rows) / static_cast<double>(problem.ny)},
                       {"compute_s", d.compute_s},
                       {"exchange_s", d.exchange_s},
                       {"exposed_s", d.exposed_s},
                       {"iteration_s", d.iteration_s},
                       {"setup_s", d.setup_s},
                       {"sized_slower", d.sized_slower},
                       {"uncached_compute_s", past_cache(d.uncached_compute_s)}});
  }
  nlohmann::json left = nlohmann::json::array();
  for (const auto& l : plan.left_out) left.push_back({{"name", l.name}, {"reason", l.reason}});
  nlohmann::json j = saved_plan_fields(problem, plan.variant);
  j.update({{"devices", devices}, {"left_out", left}, {"checks", pr.checks}, {"iteration_s", pr.iteration_s},
            {"check_s", pr.check_s}, {"setup_s", pr.setup_s}, {"teardown_s", pr.teardown_s}, {"fixed_s", pr.fixed_s},
            {"total_s", pr.total_s}, {"uncached_iteration_s", past_cache(pr.uncached_iteration_s)}});
  stamp_schema(j, kPlanSchema);
  return j.dump(indent);
}

}  // namespace hetstencil
