// An application that embeds the runtime: it keeps one Runtime for many solves
// (here a sweep over source strengths, as a parameter study would), gives the
// rows to its devices itself, watches progress from its own log, and runs every
// other solve temporally blocked. Every result is checked against the
// sequential reference, bit for bit.
//
//   build/examples/embed_runtime [n] [solves] [cpu_devices]   (cpu_devices: cut the cores into that many)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "hetstencil/hetstencil.hpp"

namespace {

// The application's own log: the runtime calls this from a thread of its own.
std::mutex log_mutex;
void log_progress(int solve, const hetstencil::Progress& p) {
  const std::lock_guard<std::mutex> lock(log_mutex);
  std::printf("  solve %d: iteration %lld of %lld after %.2f s%s\n", solve, static_cast<long long>(p.iteration),
              static_cast<long long>(p.max_iterations), p.elapsed_s, p.checked ? ", residual checked" : "");
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 96;
  const int solves = argc > 2 ? std::atoi(argv[2]) : 3;
  hetstencil::RuntimeOptions options;
  options.cpu_devices = argc > 3 ? std::atoi(argv[3]) : 0;  // 0: one CPU device per socket
  try {
    // One runtime for the whole application: probing the machine and starting
    // the CPU devices' workers happen once.
    hetstencil::Runtime runtime(options);
    const auto& devices = runtime.devices();
    std::printf("%zu device(s):", devices.size());
    for (const auto& d : devices) std::printf(" %s", d.name.c_str());
    std::printf("\n");

    int failures = 0;
    for (int k = 0; k < solves; ++k) {
      // The source: a Gaussian bump whose strength the study varies.
      const double strength = 1.0 + k;
      hetstencil::Problem problem;
      problem.nx = n;
      problem.ny = n + 7;  // any shape
      problem.precision = hetstencil::Precision::Float;
      problem.source = hetstencil::Source::from_function([strength](double x, double y) {
        const double dx = x - 0.3, dy = y - 0.6;
        return strength * std::exp(-40.0 * (dx * dx + dy * dy));
      });
      problem.boundary = hetstencil::Boundary::constant(0.25);
      problem.stop.max_iterations = 50000;
      problem.stop.tolerance = 1e-4;
      problem.stop.check_every = 100;

      // Rows by the application's own rule: the first device twice the share of
      // the others (any split gives the same bits).
      hetstencil::Plan plan;
      const auto count = static_cast<std::int64_t>(devices.size());
      std::int64_t first = 1;
      for (std::int64_t d = 0; d < count; ++d) {
        const std::int64_t rows = d + 1 < count ? (d == 0 ? 2 : 1) * problem.ny / (count + 1) : problem.ny + 1 - first;
        plan.parts.push_back({static_cast<std::size_t>(d), first, rows});
        first += rows;
      }
      // Every other solve temporally blocked: 4 sweeps a pass on a GPU, 4 rows
      // traded every 4 iterations between devices (each needs 4 rows): the same bits.
      if (k % 2 == 1) plan.variant = {hetstencil::Variant::Blocked, 4};

      const hetstencil::Result r =
          runtime.solve(problem, plan, [k](const hetstencil::Progress& p) { log_progress(k, p); }, 0.05);
      const bool same = hetstencil::same_bits(r.solution, hetstencil::solve_reference(problem).solution);
      failures += same ? 0 : 1;
      std::printf("solve %d (strength %.0f): %lld iterations in %.4f s, residual %.3e of the initial, %s, "
                  "bitwise equal to the reference: %s\n",
                  k, strength, static_cast<long long>(r.report.iterations), r.report.solve_s,
                  r.report.residual.l2 / r.report.initial_residual.l2,
                  r.report.converged ? "converged" : "not converged", same ? "yes" : "NO");
    }
    return failures == 0 ? 0 : 1;
  } catch (const hetstencil::Error& e) {
    std::fprintf(stderr, "embed_runtime: %s\n", e.what());
    return 1;
  }
}
