// hetstencil solve: one Poisson solve on every device, planned from this
// machine's model, with the prediction beside what was measured.
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "hetstencil/hetstencil.hpp"
#include "tools/hetstencil/commands.hpp"
#include "tools/hetstencil/exit_codes.hpp"
#include "tools/hetstencil/machine_options.hpp"
#include "tools/hetstencil/option_checks.hpp"
#include "tools/hetstencil/problem_options.hpp"
#include "tools/hetstencil/progress_line.hpp"

namespace hetstencil::cli {
namespace {

// MPI_COMM_WORLD's handle when an MPI launcher started the command.
std::optional<int> world;

struct SolveOptions {
  ProblemOptions problem;
  double boundary = 0.0;
  RuntimeOptions machine;
  std::vector<std::int64_t> rows;
  std::vector<double> split;
  std::string plan_file;
  std::string output;
  bool json = false;
  bool reference = false;
  bool learn = true;
  bool calibrate = true;
  double budget = 10.0;
  std::string rank_devices = "all";
  std::string gpu_transport = "auto";
  // Options given on the command line (a saved plan must not be contradicted).
  std::set<std::string> given;
};

// A saved plan fixes the grid, the variant and the stop rule; options that say
// otherwise are an error.
void adopt_saved_plan(SolveOptions& o, const SavedPlan& saved) {
  const auto clash = [&](const std::string& option, const std::string& ours, const std::string& theirs) {
    if (o.given.count(option) && ours != theirs) {
      HETSTENCIL_THROW(InvalidArgument, option + " " + ours + " contradicts the plan " + o.plan_file + " (" + theirs + ")");
    }
  };
  const auto number = [](double v) { return fmt::format("{:g}", v); };
  clash("--nx", std::to_string(o.problem.nx), std::to_string(saved.nx));
  clash("--ny", std::to_string(o.problem.ny), std::to_string(saved.ny));
  clash("--precision", to_string(parse_precision(o.problem.precision)), to_string(saved.precision));
  clash("--variant", o.problem.variant, to_string(saved.variant.variant));
  if (saved.variant.variant == Variant::Blocked) clash("--depth", std::to_string(o.problem.depth), std::to_string(saved.variant.param));
  if (saved.variant.variant == Variant::Async2 || saved.variant.variant == Variant::Async3) {
    clash("--alpha", std::to_string(o.problem.alpha), std::to_string(saved.variant.param));
  }
  clash("--iters", std::to_string(o.problem.iterations), std::to_string(saved.stop.max_iterations));
  clash("--tol", number(o.problem.tolerance), number(saved.stop.tolerance));
  if (saved.stop.uses_tolerance()) {
    clash("--check-every", std::to_string(o.problem.check_every), std::to_string(saved.stop.check_every));
  }
  o.problem.nx = saved.nx;
  o.problem.ny = saved.ny;
  o.problem.precision = to_string(saved.precision);
  o.problem.variant = to_string(saved.variant.variant);
  if (saved.variant.variant == Variant::Blocked) o.problem.depth = saved.variant.param;
  if (saved.variant.variant == Variant::Async2 || saved.variant.variant == Variant::Async3) {
    o.problem.alpha = saved.variant.param;
  }
  o.problem.iterations = saved.stop.max_iterations;
  o.problem.tolerance = saved.stop.tolerance;
  o.problem.check_every = saved.stop.check_every;
}

// The split --rows or --split gives.
Plan forced_plan(const SolveOptions& o, const Problem& p, const std::vector<DeviceInfo>& devices) {
  std::vector<std::string> names;
  for (const auto& d : devices) names.push_back(d.name);
  const std::size_t given = o.rows.empty() ? o.split.size() : o.rows.size();
  if (given != devices.size()) {
    HETSTENCIL_THROW(InvalidArgument, std::string(o.rows.empty() ? "--split" : "--rows") + " gives " +
                                          std::to_string(given) + " values for " + std::to_string(devices.size()) +
                                          " devices (" + fmt::format("{}", fmt::join(names, ",")) + ")");
  }
  const std::int64_t units = p.units();
  if (!o.rows.empty()) check_row_counts("--rows", names, o.rows, units);
  return plan_of(names, o.rows.empty() ? rows_of_shares(o.split, units) : o.rows, devices);
}

// The result of a solve: the solution to its file, the report to stdout.
void print_result(const SolveOptions& o, const Result& result) {
  if (!o.output.empty()) {
    std::visit([&](const auto& grid) { write_npy(o.output, grid); }, result.solution);
  }
  if (o.json) {
    fmt::print("{}\n", to_json(result.report));
  } else {
    fmt::print("{}", format_report(result.report));
    if (!o.output.empty()) fmt::print("solution written to {}\n", o.output);
  }
  std::fflush(stdout);
}

// The sequential reference on one thread: any stencil, no devices, no profile.
int run_reference(const SolveOptions& o, const Problem& p) {
  Result result = solve_reference(p);
  result.report.split = "the sequential reference, one thread";
  print_result(o, result);
  return 0;
}

int run_solve(SolveOptions o) {
  std::optional<SavedPlan> saved;
  if (!o.plan_file.empty()) {
    saved = read_saved_plan(o.plan_file);
    adopt_saved_plan(o, *saved);
  }
  const Problem p = make_problem(o.problem, o.boundary);
  if (o.reference) {
    if (world) HETSTENCIL_THROW(InvalidArgument, "--reference solves on one thread of one process: run it without a launcher");
    if (!o.output.empty()) check_writable(o.output);  // fail now, not after the solve
    return run_reference(o, p);
  }
  o.machine.communicator = world;
  o.machine.rank_devices = o.rank_devices == "local" ? RankDevices::Local : RankDevices::All;
  o.machine.gpu_transport = o.gpu_transport == "nccl"  ? GpuTransport::Nccl
                            : o.gpu_transport == "host" ? GpuTransport::Host
                            : o.gpu_transport == "ipc"  ? GpuTransport::Ipc
                                                        : GpuTransport::Auto;

  // sync and blocked run on any devices; the asynchronous variants on one GPU alone.
  const VariantChoice variant = o.problem.variant_choice();
  Runtime runtime(o.machine);
  // Over several processes rank 0 alone writes and prints (the others' errors name their rank).
  const bool rank0 = runtime.rank() == 0;
  if (rank0 && !o.output.empty()) check_writable(o.output);  // fail now, not after the solve
  const auto& devices = runtime.devices();
  if (!deterministic(variant.variant) && (devices.size() != 1 || devices.front().kind != DeviceKind::Gpu)) {
    HETSTENCIL_THROW(InvalidArgument, "--variant " + o.problem.variant + " runs on one GPU alone: choose it with "
                                      "--devices gpuN");
  }
  // The model (of the GPUs running the variant) plans (calibrated first when
  // missing) and, for any other split, predicts it when there is one.
  Plan plan;
  if (!saved && o.rows.empty() && o.split.empty()) {
    PlanOptions planning;
    planning.variant = variant;
    planning.calibrate = o.calibrate;
    planning.budget_s = o.budget;
    if (rank0) planning.notify = tell;
    plan = runtime.plan(p, planning);
  } else {
    plan = saved ? plan_of(saved->names, saved->rows, devices) : forced_plan(o, p, devices);
    plan.origin = saved ? "the saved plan " + o.plan_file : o.rows.empty() ? "forced by --split" : "forced by --rows";
    plan.variant = variant;
    plan.prediction = runtime.predict(p, plan);
  }
  if (variant.variant != Variant::Sync) {
    plan.origin += fmt::format("; GPUs sweep {} ({} {})", o.problem.variant,
                               variant.variant == Variant::Blocked ? "depth" : "alpha", variant.param);
  }

  ProgressLine progress(!o.json && rank0);
  const Result result = runtime.solve(p, plan, progress.callback());
  progress.finish();
  if (!rank0) return 0;
  // The report and the solution come first: a profile that cannot be saved
  // loses what this run taught, not the run.
  print_result(o, result);
  std::string not_saved = runtime.profile_not_saved();
  // The profile's curves are poisson5's: a run of another stencil teaches them nothing.
  if (o.learn && is_poisson5(p.stencil)) {
    try {
      if (const int moved = runtime.learn(result.report, variant); moved > 0 && !o.json) {
        fmt::print("profile: {} device curve(s) updated from this run ({})\n", moved, runtime.profile_path());
      }
    } catch (const Error& e) {
      not_saved = e.what();
      spdlog::warn("what this run measured could not be saved to the profile: {}", not_saved);
    }
  }
  if (!not_saved.empty()) return kExitProfileNotSaved;
  return 0;
}

}  // namespace

void solve_over(int communicator) { world = communicator; }

Command add_solve_command(CLI::App& app) {
  auto o = std::make_shared<SolveOptions>();
  CLI::App* sub = app.add_subcommand("solve", "Solve A u = f (by default -(u_xx + u_yy) = f) with Jacobi on every device");
  add_problem_options(sub, o->problem);
  sub->add_option("--boundary", o->boundary, "Dirichlet value on the boundary")->transform(finite_number())
      ->capture_default_str();
  add_machine_options(sub, o->machine);
  auto* rows = sub->add_option("--rows", o->rows, "force rows per device in device order, e.g. 100,900 (0 leaves one out)")
                   ->delimiter(',')->transform(integer_in(0, std::int64_t(1) << 30));
  auto* split = sub->add_option("--split", o->split,
                                "force shares per device in device order, e.g. 0.03,0.485,0.485 (0 leaves one out)")
                    ->delimiter(',')->transform(number_in(0.0, 1e9));
  auto* plan = sub->add_option("--plan", o->plan_file,
                               "run a plan saved by 'hetstencil plan --json > FILE': its grid, variant (and depth or "
                               "alpha), iterations, --tol and --check-every; a command-line value that differs is refused")
                   ->check(CLI::ExistingFile);
  rows->excludes(split);
  plan->excludes(rows)->excludes(split);
  auto* reference = sub->add_flag("--reference", o->reference,
                                  "solve with the sequential reference on one thread (any --stencil), no devices");
  reference->excludes(rows)->excludes(split)->excludes(plan);
  sub->add_option("-o,--output", o->output, "write the solution, boundary included, as a NumPy .npy file")
      ->check(naming("a file"));
  sub->add_flag("--json", o->json, "print the report as one JSON object");
  sub->add_flag("!--no-learn", o->learn, "leave this machine's profile as it is (by default the run's times update it)");
  sub->add_flag("!--no-calibrate", o->calibrate,
                "without a model of this machine for the problem, split evenly instead of calibrating first");
  sub->add_option("--budget", o->budget, "seconds a first calibration may take")->transform(positive_number())
      ->capture_default_str();
  sub->add_option("--rank-devices", o->rank_devices,
                  "under an MPI launcher (mpirun -np N hetstencil solve): each process takes 'all' its machine's "
                  "devices (one process a node) or the 'local' one its rank on the node names, in device order "
                  "(with --devices gpu, one process a GPU)")
      ->check(CLI::IsMember({"all", "local"}))->capture_default_str();
  sub->add_option("--gpu-transport", o->gpu_transport,
                  "under an MPI launcher, how GPUs of different processes exchange ghost rows: 'ipc' (on one node, "
                  "each GPU copies from the other's memory: CUDA IPC), 'nccl' (GPU to GPU), 'host' (through host "
                  "memory and MPI), or 'auto' (ipc on one node where it opens, else nccl where this build has it); "
                  "a GPU beside another process's CPU device goes through host memory")
      ->check(CLI::IsMember({"auto", "ipc", "nccl", "host"}))->capture_default_str();
  sub->footer("By default the split is planned from this machine's profile (calibrated first when it has no curves\n"
              "for the problem's precision and width) and the report puts the prediction beside the measurement.\n"
              "The right-hand side is a unit point load in the middle (s*f = 1 at one cell; s = h*h for poisson5).\n"
              "Every device solves any stencil (--stencil); --reference solves it on one thread, without devices.\n"
              "Results are bitwise equal to the sequential reference for any device split.\n"
              "Under an MPI launcher (mpirun -np N hetstencil solve ...) the processes solve together: rank 0 plans\n"
              "over every process's devices, prints the report and writes --output; the report's split names the\n"
              "path each link between processes took (nccl or host staging).");
  return [o, sub] {
    SolveOptions run = *o;
    for (const char* option : {"--nx", "--ny", "--precision", "--variant", "--depth", "--alpha", "--iters", "--tol",
                               "--check-every"}) {
      if (sub->count(option) > 0) run.given.insert(option);
    }
    return run_solve(run);
  };
}

}  // namespace hetstencil::cli
