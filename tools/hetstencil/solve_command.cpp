// hetstencil solve: one Poisson solve on every device, with a report.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

#include "hetstencil/hetstencil.hpp"
#include "model/learn.hpp"
#include "model/profile.hpp"
#include "partition/planner.hpp"
#include "tools/hetstencil/commands.hpp"
#include "tools/hetstencil/machine_options.hpp"

namespace hetstencil::cli {
namespace {

struct SolveOptions {
  std::int64_t nx = 2048;
  std::int64_t ny = 0;
  std::string precision = "double";
  std::int64_t iterations = 500;
  double tolerance = 0.0;
  std::int64_t check_every = 100;
  double boundary = 0.0;
  RuntimeOptions machine;
  std::vector<std::int64_t> rows;
  std::string output;
  bool json = false;
  bool learn = true;
};

void print_table(const Report& r) {
  fmt::print("{:<10} {:>10} {:>10} {:>7} {:>11} {:>11} {:>9} {:>9}\n", "device", "first_row", "rows", "share",
             "compute_s", "exchange_s", "check_s", "total_s");
  for (const auto& d : r.devices) {
    fmt::print("{:<10} {:>10} {:>10} {:>6.1f}% {:>11.4f} {:>11.4f} {:>9.4f} {:>9.4f}\n", d.name, d.first_row, d.rows,
               100.0 * static_cast<double>(d.rows) / static_cast<double>(r.ny), d.compute_s, d.exchange_s,
               d.check_s, d.total_s);
  }
  fmt::print("{} x {} {}: {} iterations in {:.4f} s, {:.3f} GCells/s (set-up {:.4f} s, tear-down {:.4f} s)\n",
             r.nx, r.ny, to_string(r.precision), r.iterations, r.solve_s, r.gcells_per_s, r.setup_s,
             r.teardown_s);
  fmt::print("residual: l2 {:.6e}, max {:.6e}", r.residual.l2, r.residual.max);
  if (r.initial_residual.l2 > 0.0) {
    fmt::print(" ({:.3e} of the initial l2; {})", r.residual.l2 / r.initial_residual.l2,
               r.converged ? "tolerance met" : "tolerance not met");
  }
  fmt::print("\n");
}

// --rows: the given counts to the devices in their order.
Plan rows_plan(const std::vector<std::int64_t>& rows, std::size_t devices) {
  if (rows.size() != devices) {
    HETSTENCIL_THROW(InvalidArgument, "--rows gives " + std::to_string(rows.size()) + " counts for " +
                                          std::to_string(devices) + " devices");
  }
  Plan plan;
  std::int64_t first = 1;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    plan.parts.push_back(Assignment{k, first, rows[k]});
    first += rows[k];
  }
  return plan;
}

int run_solve(const SolveOptions& o) {
  Problem p;
  p.nx = o.nx;
  p.ny = o.ny > 0 ? o.ny : o.nx;
  p.precision = parse_precision(o.precision);
  p.boundary = Boundary::constant(o.boundary);
  p.stop.max_iterations = o.iterations;
  p.stop.tolerance = o.tolerance;
  p.stop.check_every = o.check_every;
  p.validate();
  if (!o.output.empty()) check_writable(o.output);  // fail now, not after the solve

  Runtime runtime(o.machine);
  // The split: forced by --rows, else planned from this machine's profile when it
  // has one, else even.
  const Fingerprint here = fingerprint_of(runtime.topology());
  const std::string profile_path = default_profile_path(here.host);
  std::optional<Profile> profile = runtime.topology().this_machine ? load_profile(profile_path, &here) : std::nullopt;
  std::optional<SplitPlan> planned;
  Plan plan;
  if (!o.rows.empty()) {
    plan = rows_plan(o.rows, runtime.devices().size());
  } else if (profile && std::all_of(runtime.devices().begin(), runtime.devices().end(), [&](const DeviceInfo& d) {
               return profile->rate(d.name, p.precision, p.nx).has_value();
             })) {
    planned = plan_split(*profile, candidates_of(runtime.devices(), runtime.topology(), p.precision, p.nx), p.precision,
                         p.nx, p.ny, p.stop);
    std::int64_t first = 1;
    for (const auto& d : planned->devices) {
      const auto k = static_cast<std::size_t>(std::find_if(runtime.devices().begin(), runtime.devices().end(),
                                                           [&](const DeviceInfo& i) { return i.name == d.name; }) -
                                              runtime.devices().begin());
      plan.parts.push_back(Assignment{k, first, d.rows});
      first += d.rows;
    }
  } else {
    plan = runtime.even_plan(p);
  }
  const Result result = runtime.solve(p, plan);
  if (!o.output.empty()) {
    std::visit([&](const auto& grid) { write_npy(o.output, grid); }, result.solution);
  }
  // The run's measurements flow back into this machine's profile, if it has one.
  std::string learned;
  if (o.learn && profile) {
    if (const int moved = learn(*profile, result.report); moved > 0) {
      save_profile(profile_path, *profile);
      learned = fmt::format("profile: {} device curve(s) updated from this run ({})", moved, profile_path);
    }
  }
  const Report& r = result.report;
  const double measured_iteration = r.iterations > 0 ? r.solve_s / static_cast<double>(r.iterations) : 0.0;
  if (o.json) {
    nlohmann::json j = nlohmann::json::parse(to_json(r));
    j["split"] = planned ? "planned" : (o.rows.empty() ? "even" : "forced");
    if (planned) {
      j["predicted_iteration_s"] = planned->prediction.iteration_s;
      j["predicted_s"] = planned->prediction.total_s;
    }
    fmt::print("{}\n", j.dump(2));
  } else {
    print_table(r);
    if (planned) {
      const double predicted = planned->prediction.iteration_s;
      fmt::print("split planned from {}: predicted {:.4f} ms an iteration, measured {:.4f} ms ({:+.1f}%)\n",
                 profile_path, predicted * 1e3, measured_iteration * 1e3,
                 100.0 * (predicted - measured_iteration) / measured_iteration);
      for (const auto& l : planned->left_out) fmt::print("left out: {}: {}\n", l.name, l.reason);
    } else if (o.rows.empty()) {
      fmt::print("split: even (no profile of this machine; hetstencil calibrate makes one)\n");
    }
    if (!o.output.empty()) fmt::print("solution written to {}\n", o.output);
    if (!learned.empty()) fmt::print("{}\n", learned);
  }
  return 0;
}

}  // namespace

Command add_solve_command(CLI::App& app) {
  auto o = std::make_shared<SolveOptions>();
  CLI::App* sub = app.add_subcommand("solve", "Solve -(u_xx + u_yy) = f with Jacobi on every device");
  sub->add_option("--nx", o->nx, "interior points per row")->check(CLI::Range(std::int64_t(1), std::int64_t(1) << 30))
      ->capture_default_str();
  sub->add_option("--ny", o->ny, "interior rows (default: nx)")->check(CLI::Range(std::int64_t(1), std::int64_t(1) << 30));
  sub->add_option("--precision", o->precision, "float or double")->check(CLI::IsMember({"float", "double"}))
      ->capture_default_str();
  sub->add_option("--iters", o->iterations,
                  "iterations to run; with --tol, the most to run")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  sub->add_option("--tol", o->tolerance,
                  "stop once the residual's l2 norm is below TOL times its initial value")
      ->check(CLI::PositiveNumber);
  sub->add_option("--check-every", o->check_every, "iterations between residual checks with --tol")
      ->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--boundary", o->boundary, "Dirichlet value on the boundary")->capture_default_str();
  add_machine_options(sub, o->machine);
  sub->add_option("--rows", o->rows, "rows per device in device order, e.g. 100,900 (default: an even split)")
      ->delimiter(',');
  sub->add_option("-o,--output", o->output, "write the solution, boundary included, as a NumPy .npy file");
  sub->add_flag("--json", o->json, "print the report as one JSON object");
  sub->add_flag("!--no-learn", o->learn, "leave this machine's profile as it is (by default the run's times update it)");
  sub->footer("The right-hand side is a unit point load in the middle (h*h*f = 1 at one cell).\n"
              "Results are bitwise equal to the sequential reference for any device split.");
  return [o] { return run_solve(*o); };
}

}  // namespace hetstencil::cli
