// hetstencil bench scaling: the same solve over the first 1, 2, ... N GPUs,
// split evenly, for each way of checking the residual (only at the end, every
// K iterations, every iteration) and for temporal blocking. Strong scaling
// keeps the grid; weak scaling gives each GPU the grid's rows. Each row shows
// the solve phase's time (median of the runs), speed-up and efficiency against
// one GPU, GCells/s, the model's iteration time beside the measured one (where
// the profile has curves for the GPUs), and (strong scaling) whether the
// solution has the same bits as on one GPU. The default problem is the NVIDIA multi-GPU Jacobi
// sample's (float 16384^2, 1000 iterations), so that figures compare directly.
#include "tools/hetstencil/scaling_bench.hpp"

#include <algorithm>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "hetstencil/error.hpp"
#include "hetstencil/npy.hpp"
#include "hetstencil/reference.hpp"
#include "hetstencil/runtime.hpp"
#include "hetstencil/statistics.hpp"
#include "hetstencil/topology.hpp"
#include "tools/hetstencil/option_checks.hpp"
#include "tools/hetstencil/problem_options.hpp"

namespace hetstencil::cli {
namespace {

struct ScalingOptions {
  std::int64_t nx = 16384;
  std::int64_t ny = 0;  // 0: nx
  std::string precision = "float";
  std::int64_t iterations = 1000;
  std::int64_t check_every = 100;  // the "every K" rows
  int depth = 8;                   // the blocked rows
  int max_gpus = 0;                // 0: all
  std::string scaling = "both";
  std::vector<std::string> checks{"end", "every-k", "every", "blocked"};
  int runs = 3;
  std::string csv;
};

// One way of running the solve: its checks and its variant.
struct Mode {
  std::string name;
  StopRule stop;
  VariantChoice variant;
};

std::vector<Mode> modes_of(const ScalingOptions& o) {
  std::vector<Mode> out;
  for (const std::string& name : o.checks) {
    Mode m{name, {}, {}};
    m.stop.max_iterations = o.iterations;
    if (name == "every-k" || name == "every") {
      m.stop.tolerance = 1e-30;  // never met: every check runs
      m.stop.check_every = name == "every" ? 1 : o.check_every;
    } else if (name == "blocked") {
      m.variant = {Variant::Blocked, o.depth};
    }
    out.push_back(m);
  }
  return out;
}

int run_scaling(const ScalingOptions& o) {
  if (!o.csv.empty()) check_writable(o.csv);
  const std::vector<Mode> modes = modes_of(o);
  if (load_topology().gpus.empty()) HETSTENCIL_THROW(InvalidArgument, "bench scaling needs GPUs; this machine has none");
  RuntimeOptions machine;
  machine.devices = "gpu";
  Runtime runtime(machine);
  std::vector<std::string> gpus;
  for (const DeviceInfo& d : runtime.devices()) gpus.push_back(d.name);
  const int most = o.max_gpus > 0 ? std::min<int>(o.max_gpus, static_cast<int>(gpus.size())) : static_cast<int>(gpus.size());
  const Precision precision = parse_precision(o.precision);

  std::ofstream csv;
  if (!o.csv.empty()) csv.open(o.csv);
  csv << "scaling,checks,gpus,nx,ny,iterations,solve_s,speedup,efficiency,gcells_per_s,predicted_iteration_s,"
         "measured_iteration_s,error_percent,same_bits\n";
  fmt::print("# solve phase, median of {} runs; even split over the first N GPUs; efficiency = T1 / (N TN) strong, "
             "T1 / TN weak\n",
             o.runs);
  fmt::print("{:<7} {:<9} {:>4} {:>7} {:>7} {:>10} {:>8} {:>7} {:>9} {:>13} {:>12} {:>7} {:>5}\n", "scaling", "checks",
             "gpus", "nx", "ny", "solve_s", "speedup", "effic.", "GCells/s", "predicted_ms", "measured_ms", "error",
             "bits");
  const std::vector<std::string> kinds =
      o.scaling == "both" ? std::vector<std::string>{"strong", "weak"} : std::vector<std::string>{o.scaling};
  for (const std::string& kind : kinds) {
    for (const Mode& mode : modes) {
      double one = 0.0;
      std::optional<Solution> one_solution;  // strong scaling: what every GPU count must give
      for (int n = 1; n <= most; ++n) {
        Problem p;
        p.precision = precision;
        p.nx = o.nx;
        p.ny = (o.ny > 0 ? o.ny : o.nx) * (kind == "weak" ? n : 1);
        p.stop = mode.stop;
        const std::vector<std::string> names(gpus.begin(), gpus.begin() + n);
        Plan plan = plan_of(names, even_rows(p.ny, names.size()), runtime.devices());
        plan.variant = mode.variant;
        plan.prediction = runtime.predict(p, plan);
        std::vector<double> times;
        Result result;
        for (int run = 0; run < o.runs; ++run) {
          fmt::print(stderr, "{} {} on {} GPU(s): run {} of {}\r", kind, mode.name, n, run + 1, o.runs);
          result = runtime.solve(p, plan);
          times.push_back(result.report.solve_s);
        }
        const Report& last = result.report;
        const double t = median(times);
        if (n == 1) one = t;
        if (n == 1 && kind == "strong") one_solution = result.solution;
        const double speedup = one / t;
        const double efficiency = kind == "weak" ? speedup : speedup / n;
        const double cells = static_cast<double>(p.nx) * static_cast<double>(p.ny) * static_cast<double>(last.iterations);
        const double measured = t / static_cast<double>(last.iterations);
        const std::optional<double> predicted = predicted_iteration_s(last);
        // Weak scaling grows the grid, so only strong rows compare bits with one GPU.
        const std::string bits = !one_solution ? "-" : (same_bits(result.solution, *one_solution) ? "same" : "DIFFER");
        fmt::print("{:<7} {:<9} {:>4} {:>7} {:>7} {:>10.4f} {:>8.3f} {:>6.1f}% {:>9.1f} {:>13} {:>12.4f} {:>7} {:>5}\n",
                   kind, mode.name, n, p.nx, p.ny, t, speedup, 100.0 * efficiency, cells / t / 1e9,
                   predicted ? fmt::format("{:.4f}", *predicted * 1e3) : "-", measured * 1e3,
                   predicted ? fmt::format("{:+.1f}%", error_percent(*predicted, measured)) : "-", bits);
        std::fflush(stdout);
        csv << fmt::format("{},{},{},{},{},{},{:.6f},{:.4f},{:.4f},{:.3f},{},{:.9f},{},{}\n", kind, mode.name, n, p.nx,
                           p.ny, last.iterations, t, speedup, efficiency, cells / t / 1e9,
                           predicted ? fmt::format("{:.9f}", *predicted) : "", measured,
                           predicted ? fmt::format("{:.2f}", error_percent(*predicted, measured)) : "", bits);
      }
    }
  }
  if (!o.csv.empty() && !csv) HETSTENCIL_THROW(Error, "writing " + o.csv + " failed");
  if (!o.csv.empty()) fmt::print("csv written to {}\n", o.csv);
  return 0;
}

}  // namespace

Command add_scaling_bench(CLI::App* bench) {
  auto o = std::make_shared<ScalingOptions>();
  CLI::App* sub = bench->add_subcommand(
      "scaling", "GPUs: one solve over 1, 2, ... N GPUs (strong and weak), per way of checking the residual");
  constexpr int kMaxInt = std::numeric_limits<int>::max();
  sub->add_option("--nx", o->nx, "interior points per row")->transform(grid_size())->capture_default_str();
  sub->add_option("--ny", o->ny, "interior rows (default: nx); weak scaling gives each GPU this many")
      ->transform(grid_size());
  sub->add_option("--precision", o->precision, "float or double")->check(one_of({"float", "double"}))
      ->capture_default_str();
  sub->add_option("--iters", o->iterations, "iterations of each solve")->transform(integer_in(1))->capture_default_str();
  sub->add_option("--checks", o->checks,
                  "which rows, e.g. end,every: end (the residual at the end only), every-k (every --check-every), "
                  "every (every iteration), blocked (temporal blocking, --depth, residual at the end)")
      ->delimiter(',')->check(one_of({"end", "every-k", "every", "blocked"}))
      ->default_str(fmt::format("{}", fmt::join(o->checks, ",")));
  sub->add_option("--check-every", o->check_every, "K of the every-k rows")->transform(integer_in(1))
      ->capture_default_str();
  sub->add_option("--depth", o->depth, "the blocked rows' depth")->transform(integer_in(1, kMaxBlockedDepth))
      ->capture_default_str();
  sub->add_option("--gpus", o->max_gpus, "the most GPUs (default: all)")->transform(integer_in(1, kMaxInt));
  sub->add_option("--scaling", o->scaling, "strong, weak or both")->check(one_of({"strong", "weak", "both"}))
      ->capture_default_str();
  sub->add_option("--runs", o->runs, "solves per row (the median is shown)")->transform(integer_in(1, kMaxInt))
      ->capture_default_str();
  sub->add_option("--csv", o->csv, "write the rows as CSV to FILE (default: none)")->check(naming("a file"));
  return [o] { return run_scaling(*o); };
}

}  // namespace hetstencil::cli
