// The study's method (its chapter V): sync runs T iterations; its accuracy is
// the maximum relative error against a solution converged far beyond it (sync,
// 10 T iterations). Each variant is stepped until it is as accurate, and the
// time of a clean run of that many iterations is its time to accuracy; the
// non-deterministic variants are run several times for the spread.
#include <algorithm>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "hetstencil/bench.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/npy.hpp"
#include "hetstencil/statistics.hpp"
#include "hetstencil/reference.hpp"
#include "tools/hetstencil/option_checks.hpp"
#include "tools/hetstencil/plot.hpp"
#include "tools/hetstencil/problem_options.hpp"
#include "tools/hetstencil/variants_bench.hpp"

namespace hetstencil::cli {
namespace {

struct VariantsOptions {
  std::vector<std::int64_t> sizes{4096, 16384};
  std::string precision = "float";
  std::int64_t iterations = 1000;
  std::vector<int> alphas{2, 4, 8, 16};
  std::vector<int> depths{2, 4, 8};
  int runs = 5;
  int gpu = 0;
  std::string csv;   // "": no CSV
  std::string plot;  // "": no plot
};

// One variant's runs at one size.
struct Row {
  std::vector<std::int64_t> iterations;  // per run: to reach sync's accuracy (0: not reached)
  std::vector<double> seconds;           // per run: a clean run of that many
  std::vector<double> error;             // per run: after the clean run
  std::string same_bits;                 // blocked: "yes"/"no" against sync after T
};

int run_variants(const VariantsOptions& o) {
  check_plot_options(o.csv, o.plot);
  const std::size_t gpus = load_topology().gpus.size();
  if (static_cast<std::size_t>(o.gpu) >= gpus) {
    HETSTENCIL_THROW(InvalidArgument, "no CUDA device " + std::to_string(o.gpu) + " (this machine has " +
                                          std::to_string(gpus) + ")");
  }
  const Precision precision = parse_precision(o.precision);
  if (!o.csv.empty()) check_writable(o.csv);
  if (!o.plot.empty()) check_writable(o.plot);
  std::vector<VariantChoice> choices;
  for (int a : o.alphas) choices.push_back({Variant::Async2, a});
  for (int a : o.alphas) choices.push_back({Variant::Async3, a});
  for (int k : o.depths) choices.push_back({Variant::Blocked, k});

  std::ofstream csv;  // without --csv it stays closed: it takes the rows and writes nothing
  if (!o.csv.empty()) csv.open(o.csv);
  csv << "n,variant,param,run,iterations,iteration_ratio,seconds,speedup,per_iteration_speedup,error,same_bits\n";
  fmt::print("{:>6} {:<8} {:>5} {:>10} {:>7} {:>11} {:>17} {:>9} {:>10} {:>5}\n", "n", "variant", "param",
             "iterations", "it/T", "time_ms", "speedup (spread)", "per_iter", "error", "bits");
  for (std::int64_t n : o.sizes) {
    Problem p;
    p.nx = p.ny = n;
    p.precision = precision;
    p.stop.max_iterations = o.iterations;
    const std::int64_t T = o.iterations;
    fmt::print(stderr, "n = {}: the converged solution ({} sync iterations)\n", n, 10 * T);
    VariantSolver converged(o.gpu, p), solver(o.gpu, p);
    converged.advance({Variant::Sync, 1}, 10 * T);
    solver.advance({Variant::Sync, 1}, 50);  // warm-up
    solver.reset();
    const double sync_s = solver.advance({Variant::Sync, 1}, T);
    const double target = solver.max_relative_error(converged);
    const Solution sync_result = solver.download();
    fmt::print("{:>6} {:<8} {:>5} {:>10} {:>7.3f} {:>11.3f} {:>17} {:>9} {:>10.3e} {:>5}\n", n, "sync", "-", T, 1.0,
               sync_s * 1e3, "1.000", "1.000", target, "-");
    csv << fmt::format("{},sync,0,0,{},1,{:.6f},1,1,{:.6e},\n", n, T, sync_s, target);
    for (const VariantChoice& c : choices) {
      Row row;
      const int runs = deterministic(c.variant) ? 1 : o.runs;
      // Steps of a fiftieth of T, whole passes: the iterations found are within a step.
      const std::int64_t step = std::max<std::int64_t>(c.param, (T / 50 + c.param - 1) / c.param * c.param);
      for (int r = 0; r < runs; ++r) {
        solver.reset();
        std::int64_t done = 0;
        while (done < 4 * T) {
          solver.advance(c, step);
          done += step;
          if (solver.max_relative_error(converged) <= target) break;
        }
        if (solver.max_relative_error(converged) > target) done = 0;  // not reached in 4 T
        row.iterations.push_back(done);
        solver.reset();
        row.seconds.push_back(done > 0 ? solver.advance(c, done) : 0.0);
        row.error.push_back(solver.max_relative_error(converged));
      }
      if (c.variant == Variant::Blocked) {
        solver.reset();
        solver.advance(c, T);
        row.same_bits = same_bits(solver.download(), sync_result) ? "yes" : "no";
      }
      std::vector<double> speedups;
      for (int r = 0; r < runs; ++r) {
        const double speedup = row.iterations[r] > 0 ? sync_s / row.seconds[r] : 0.0;
        const double per_iteration = row.iterations[r] > 0
                                         ? (sync_s / static_cast<double>(T)) /
                                               (row.seconds[r] / static_cast<double>(row.iterations[r]))
                                         : 0.0;
        speedups.push_back(speedup);
        csv << fmt::format("{},{},{},{},{},{:.4f},{:.6f},{:.4f},{:.4f},{:.6e},{}\n", n, to_string(c.variant), c.param, r,
                           row.iterations[r], static_cast<double>(row.iterations[r]) / static_cast<double>(T),
                           row.seconds[r], speedup, per_iteration, row.error[r], row.same_bits);
      }
      csv.flush();
      const auto [lo, hi] = std::minmax_element(speedups.begin(), speedups.end());
      std::vector<double> its(row.iterations.begin(), row.iterations.end());
      const double it = median(its);
      const double s = median(row.seconds);
      const std::string spread = runs > 1 ? fmt::format("{:.3f} ({:.2f}-{:.2f})", median(speedups), *lo, *hi)
                                          : fmt::format("{:.3f}", speedups.front());
      fmt::print("{:>6} {:<8} {:>5} {:>10} {:>7.3f} {:>11.3f} {:>17} {:>9.3f} {:>10.3e} {:>5}\n", n,
                 to_string(c.variant), c.param, it > 0 ? fmt::format("{:.0f}", it) : "never",
                 it / static_cast<double>(T), s * 1e3, spread,
                 it > 0 ? (sync_s / static_cast<double>(T)) / (s / it) : 0.0, median(row.error),
                 row.same_bits.empty() ? "-" : row.same_bits);
      std::fflush(stdout);
    }
  }
  if (!o.csv.empty() && !csv) HETSTENCIL_THROW(Error, "writing " + o.csv + " failed");
  csv.close();
  if (!o.csv.empty()) fmt::print("csv written to {}\n", o.csv);
  if (!o.plot.empty()) {
    draw_plot("plot_variants.py", o.csv, o.plot,
              fmt::format("time to sync's accuracy after {} iterations, {}", o.iterations, to_string(precision)));
    fmt::print("plot written to {}\n", o.plot);
  }
  return 0;
}

}  // namespace

Command add_variants_bench(CLI::App* bench) {
  auto o = std::make_shared<VariantsOptions>();
  CLI::App* sub = bench->add_subcommand(
      "variants", "GPU variants (sync, async2, async3, blocked): time to sync's accuracy after T iterations");
  constexpr int kMaxInt = std::numeric_limits<int>::max();
  sub->add_option("--sizes", o->sizes, "grid sizes n (n x n), e.g. 4096,16384")->delimiter(',')->transform(grid_size())
      ->default_str(fmt::format("{}", fmt::join(o->sizes, ",")));
  sub->add_option("--precision", o->precision, "float or double")->check(one_of({"float", "double"}))
      ->capture_default_str();
  sub->add_option("--iters", o->iterations, "T: sync's iterations, whose accuracy the others must reach")
      ->transform(integer_in(1))->capture_default_str();
  sub->add_option("--alphas", o->alphas, "async2/async3: sweeps between global synchronizations, e.g. 2,4,8,16")
      ->delimiter(',')->transform(integer_in(1, kMaxVariantSweeps))
      ->default_str(fmt::format("{}", fmt::join(o->alphas, ",")));
  sub->add_option("--depths", o->depths, "blocked: sweeps per pass (ghost-zone depth), e.g. 2,4,8")
      ->delimiter(',')->transform(integer_in(1, kMaxBlockedDepth))
      ->default_str(fmt::format("{}", fmt::join(o->depths, ",")));
  sub->add_option("--runs", o->runs, "runs of each non-deterministic variant (the spread is shown)")
      ->transform(integer_in(1, kMaxInt))->capture_default_str();
  sub->add_option("--gpu", o->gpu, "CUDA device")->transform(integer_in(0, kMaxInt))->capture_default_str();
  sub->add_option("--csv", o->csv, "write the runs as CSV to FILE (default: none)")->check(naming("a file"));
  sub->add_option("--plot", o->plot, "draw the speedups as a PNG into FILE, from the --csv file (default: none)")
      ->check(naming("a file"));
  return [o] { return run_variants(*o); };
}

}  // namespace hetstencil::cli
