// hetstencil solve: one Poisson solve on every device, planned from this
// machine's model, with the prediction beside what was measured.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include <spdlog/fmt/fmt.h>

#include "hetstencil/hetstencil.hpp"
#include "model/learn.hpp"
#include "tools/hetstencil/commands.hpp"
#include "tools/hetstencil/machine_options.hpp"
#include "tools/hetstencil/option_checks.hpp"
#include "tools/hetstencil/problem_options.hpp"
#include "tools/hetstencil/progress_line.hpp"
#include "tools/hetstencil/solve_report.hpp"
#include "tools/hetstencil/split_choice.hpp"

namespace hetstencil::cli {
namespace {

struct SolveOptions {
  ProblemOptions problem;
  double boundary = 0.0;
  RuntimeOptions machine;
  std::vector<std::int64_t> rows;
  std::vector<double> split;
  std::string plan_file;
  std::string output;
  bool json = false;
  bool learn = true;
  bool calibrate = true;
  double budget = 10.0;
  // Given on the command line (a saved plan's grid must not contradict them).
  bool nx_given = false, ny_given = false, precision_given = false;
};

// A saved plan fixes the grid; options that say otherwise are an error.
void adopt_saved_grid(SolveOptions& o, const SavedPlan& saved) {
  const auto clash = [&](bool given, const std::string& option, const std::string& ours, const std::string& theirs) {
    if (given && ours != theirs) {
      HETSTENCIL_THROW(InvalidArgument, option + " " + ours + " contradicts the plan " + o.plan_file + " (" + theirs + ")");
    }
  };
  clash(o.nx_given, "--nx", std::to_string(o.problem.nx), std::to_string(saved.nx));
  clash(o.ny_given, "--ny", std::to_string(o.problem.rows()), std::to_string(saved.ny));
  clash(o.precision_given, "--precision", to_string(parse_precision(o.problem.precision)), to_string(saved.precision));
  o.problem.nx = saved.nx;
  o.problem.ny = saved.ny;
  o.problem.precision = to_string(saved.precision);
}

int run_solve(SolveOptions o) {
  std::optional<SavedPlan> saved;
  if (!o.plan_file.empty()) {
    saved = read_saved_plan(o.plan_file);
    adopt_saved_grid(o, *saved);
  }
  const Problem p = make_problem(o.problem, o.boundary);
  if (!o.output.empty()) check_writable(o.output);  // fail now, not after the solve

  // sync and blocked run on any devices; the asynchronous variants on one GPU alone.
  const VariantChoice variant = o.problem.variant_choice();
  // The model (of the GPUs running the variant): needed to plan (calibrated
  // first when missing) and, for any other split, to predict it when there is one.
  const bool planning = !saved && o.rows.empty() && o.split.empty();
  Runtime runtime(o.machine);
  const auto& devices = runtime.devices();
  if (!deterministic(variant.variant) && (devices.size() != 1 || devices.front().kind != DeviceKind::Gpu)) {
    HETSTENCIL_THROW(InvalidArgument, "--variant " + o.problem.variant + " runs on one GPU alone: choose it with "
                                      "--devices gpuN");
  }
  const MachineModel model = machine_model(runtime, o.machine, p, planning && o.calibrate, o.budget, variant);
  std::vector<std::string> names;
  for (const auto& d : devices) names.push_back(d.name);

  Plan plan;
  std::string how;
  std::vector<LeftOut> left_out;
  if (saved) {
    plan = plan_of(saved->names, saved->rows, devices);
    how = "the saved plan " + o.plan_file;
  } else if (!o.rows.empty() || !o.split.empty()) {
    const std::size_t given = o.rows.empty() ? o.split.size() : o.rows.size();
    if (given != devices.size()) {
      HETSTENCIL_THROW(InvalidArgument, std::string(o.rows.empty() ? "--split" : "--rows") + " gives " +
                                            std::to_string(given) + " values for " + std::to_string(devices.size()) +
                                            " devices (" + fmt::format("{}", fmt::join(names, ",")) + ")");
    }
    const std::vector<std::int64_t> rows = o.rows.empty() ? rows_of_shares(o.split, p.ny) : o.rows;
    plan = plan_of(names, rows, devices);
    how = o.rows.empty() ? "forced by --split" : "forced by --rows";
  } else if (model.profile && covers(*model.profile, devices, p.precision, p.nx, variant)) {
    const SplitPlan planned = model_plan(*model.profile, runtime, p, variant);
    std::vector<std::string> order;
    std::vector<std::int64_t> rows;
    for (const auto& d : planned.devices) {
      order.push_back(d.name);
      rows.push_back(d.rows);
    }
    plan = plan_of(order, rows, devices);
    left_out = planned.left_out;
    how = "planned from " + model.path;
    if (const std::string caution = caution_of(planned); !caution.empty()) how += " (" + caution + ")";
  } else {
    plan = runtime.even_plan(p);
    how = model.path.empty() ? "even (a described machine has no model)"
                             : "even (no model of this machine for this problem; hetstencil calibrate makes one)";
  }
  plan.variant = variant;
  if (variant.variant != Variant::Sync) {
    how += fmt::format("; GPUs sweep {} ({} {})", o.problem.variant, variant.variant == Variant::Blocked ? "depth" : "alpha",
                       variant.param);
  }
  const std::optional<Prediction> prediction =
      model.profile ? predict_plan(*model.profile, devices, plan, p) : std::nullopt;

  ProgressLine progress(!o.json);
  const Result result = runtime.solve(p, plan, progress.callback());
  progress.finish();
  if (!o.output.empty()) {
    std::visit([&](const auto& grid) { write_npy(o.output, grid); }, result.solution);
  }
  // The run's measurements flow back into this machine's profile.
  std::string learned;
  if (o.learn && model.profile) {
    Profile updated = *model.profile;
    if (const int moved = learn(updated, result.report, 0.25, variant); moved > 0) {
      save_profile(model.path, updated);
      learned = fmt::format("profile: {} device curve(s) updated from this run ({})", moved, model.path);
    }
  }
  const RunComparison c = compare(result.report, prediction, p.stop);
  if (o.json) {
    nlohmann::json j = solve_json(result.report, c, how);
    nlohmann::json left = nlohmann::json::array();
    for (const auto& l : left_out) left.push_back({{"name", l.name}, {"reason", l.reason}});
    j["left_out"] = left;
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  print_solve_report(result.report, c, how);
  for (const auto& l : left_out) fmt::print("left out: {}: {}\n", l.name, l.reason);
  if (!o.output.empty()) fmt::print("solution written to {}\n", o.output);
  if (!learned.empty()) fmt::print("{}\n", learned);
  return 0;
}

}  // namespace

Command add_solve_command(CLI::App& app) {
  auto o = std::make_shared<SolveOptions>();
  CLI::App* sub = app.add_subcommand("solve", "Solve -(u_xx + u_yy) = f with Jacobi on every device");
  add_problem_options(sub, o->problem);
  sub->add_option("--boundary", o->boundary, "Dirichlet value on the boundary")->transform(finite_number())
      ->capture_default_str();
  add_machine_options(sub, o->machine);
  auto* rows = sub->add_option("--rows", o->rows, "force rows per device in device order, e.g. 100,900")->delimiter(',');
  auto* split = sub->add_option("--split", o->split,
                                "force shares per device in device order, e.g. 0.03,0.485,0.485 (0 leaves one out)")
                    ->delimiter(',');
  auto* plan = sub->add_option("--plan", o->plan_file, "run a plan saved by 'hetstencil plan --json > FILE'")
                   ->check(CLI::ExistingFile);
  rows->excludes(split);
  plan->excludes(rows)->excludes(split);
  sub->add_option("-o,--output", o->output, "write the solution, boundary included, as a NumPy .npy file")
      ->check(naming("a file"));
  sub->add_flag("--json", o->json, "print the report as one JSON object");
  sub->add_flag("!--no-learn", o->learn, "leave this machine's profile as it is (by default the run's times update it)");
  sub->add_flag("!--no-calibrate", o->calibrate,
                "without a model of this machine for the problem, split evenly instead of calibrating first");
  sub->add_option("--budget", o->budget, "seconds a first calibration may take")->transform(positive_number())
      ->capture_default_str();
  sub->footer("By default the split is planned from this machine's profile (calibrated first when it has no curves\n"
              "for the problem's precision and width) and the report puts the prediction beside the measurement.\n"
              "The right-hand side is a unit point load in the middle (h*h*f = 1 at one cell).\n"
              "Results are bitwise equal to the sequential reference for any device split.");
  return [o, sub] {
    SolveOptions run = *o;
    run.nx_given = sub->count("--nx") > 0;
    run.ny_given = sub->count("--ny") > 0;
    run.precision_given = sub->count("--precision") > 0;
    return run_solve(run);
  };
}

}  // namespace hetstencil::cli
