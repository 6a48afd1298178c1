// hetstencil calibrate | profile show | predict | plan: the model and the
// planner from the command line.
#include <memory>
#include <string>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "hetstencil/error.hpp"
#include "hetstencil/profile.hpp"
#include "hetstencil/runtime.hpp"
#include "tools/hetstencil/commands.hpp"
#include "tools/hetstencil/machine_options.hpp"
#include "tools/hetstencil/option_checks.hpp"
#include "tools/hetstencil/problem_options.hpp"

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

std::string profile_path(const ModelOptions& o) {
  return o.profile.empty() ? default_profile_path(load_topology(o.machine.topology)) : o.profile;
}

// The problem of the options, as the model sees it: its grid, precision and
// stop rule (nothing is allocated, so any size may be planned).
Problem problem_of(const ModelOptions& o) { return problem_shape(o.problem); }

int run_calibrate(const ModelOptions& o) {
  CalibrateOptions c;
  c.precisions = precisions_of(o.problem.precision);
  c.nx = o.problem.width(2);
  c.max_rows = o.max_rows;
  c.budget_s = o.budget;
  c.variant = o.problem.variant_choice();
  c.profile = o.profile;
  const Calibrated cal = calibrate_machine(o.machine, c);
  if (o.json) {
    fmt::print("{}\n", cal.profile.to_json());
    return 0;
  }
  fmt::print("{}", cal.profile.to_text());
  fmt::print("calibrated in {:.2f} s (budget {:.1f} s); saved to {}\n", cal.seconds, o.budget, cal.path);
  for (const auto& s : cal.skipped) fmt::print("skipped (budget): {}\n", s);
  return 0;
}

int run_profile_show(const ModelOptions& o) {
  const std::string path = profile_path(o);
  const auto p = MachineProfile::load(path);
  if (!p) HETSTENCIL_THROW(InvalidArgument, "no usable profile at " + path + " (run hetstencil calibrate)");
  fmt::print("{}{}", o.json ? p->to_json() : p->to_text(), o.json ? "\n" : "");
  return 0;
}

// "nx x ny", or "nx x ny x nz" in 3-D.
std::string grid_of(const Problem& p) {
  return p.dimension() == 3 ? fmt::format("{} x {} x {}", p.nx, p.ny, p.nz) : fmt::format("{} x {}", p.nx, p.ny);
}

int run_predict(const ModelOptions& o) {
  const ProfileModel model(o.machine, o.profile, ProfileModel::Use::Predict);
  const auto& devices = model.devices();
  std::vector<std::string> names;
  for (const auto& d : devices) names.push_back(d.name);
  const Problem problem = problem_of(o);
  const std::int64_t ny = problem.units();
  if (!o.rows.empty() && o.rows.size() != devices.size()) {
    HETSTENCIL_THROW(InvalidArgument, fmt::format("--rows gives {} counts for {} devices ({})", o.rows.size(),
                                                  devices.size(), fmt::join(names, ",")));
  }
  const std::vector<std::int64_t> rows = o.rows.empty() ? even_rows(ny, devices.size()) : o.rows;
  check_row_counts("--rows", names, rows, ny);
  std::int64_t total = 0;  // each count is at most ny: no overflow
  for (std::int64_t r : rows) total += r;
  if (total != ny) {
    HETSTENCIL_THROW(InvalidArgument, "--rows add up to " + std::to_string(total) + ", not the " + std::to_string(ny) +
                                          (problem.dimension() == 3 ? " planes (nz)" : " rows (ny)"));
  }
  const Prediction pr = model.predict(problem, rows, o.problem.variant_choice());
  fmt::print("{:<8} {:>9} {:>12} {:>12} {:>12} {:>12} {:>10}\n", "device", "rows", "compute_ms", "exchange_ms",
             "exposed_ms", "iter_ms", "check_ms");
  for (const auto& d : pr.devices) {
    fmt::print("{:<8} {:>9} {:>12.4f} {:>12.4f} {:>12.4f} {:>12.4f} {:>10.4f}\n", d.name, d.rows, d.compute_s * 1e3,
               d.exchange_s * 1e3, d.exposed_s * 1e3, d.iteration_s * 1e3, d.check_s * 1e3);
  }
  fmt::print("{} {}, {} iterations, {} checks: {:.4f} ms an iteration, {:.4f} ms a check, set-up {:.4f} s, "
             "tear-down {:.4f} s, total {:.4f} s\n",
             grid_of(problem), to_string(problem.precision), o.problem.iterations, pr.checks, pr.iteration_s * 1e3,
             pr.check_s * 1e3, pr.setup_s, pr.teardown_s, pr.total_s);
  for (const auto& n : pr.notes) fmt::print("note: {}\n", n);
  return 0;
}

int run_plan(const ModelOptions& o) {
  // plan takes the profile's devices, whatever cut of the cores they were measured in.
  const ProfileModel model(o.machine, o.profile, ProfileModel::Use::Plan);
  const Problem problem = problem_of(o);
  const std::int64_t ny = problem.units();
  const Plan plan = model.plan(problem, o.problem.variant_choice());
  if (o.json) {
    fmt::print("{}\n", to_json(plan, problem));
    return 0;
  }
  const Prediction& pr = *plan.prediction;
  fmt::print("plan for {} {}, {} iterations, from {}\n", grid_of(problem), to_string(problem.precision),
             o.problem.iterations, model.path());
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
  if (const std::string caution = caution_of(pr); !caution.empty()) {
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
      ->default_str(std::to_string(kDefaultSide));
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
  cal->footer("Calibration does not tune kernel parameters: it measures with those hetstencil tune kept in the "
              "profile\n(tune first, then calibrate).");
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
