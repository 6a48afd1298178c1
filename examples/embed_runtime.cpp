// An application that embeds the runtime: it keeps one Runtime for many solves
// (here a sweep over source strengths, as a parameter study would), lets the
// runtime plan each one (measuring the devices first, within a small budget,
// where this machine's profile has no figures for the problem), watches
// progress from its own log, runs every other solve temporally blocked, and
// prints the table `hetstencil solve` prints: predicted beside measured, per
// device and per phase. Every result is checked against the sequential
// reference, bit for bit.
//
//   build/examples/embed_runtime [n] [solves] [cpu_devices] [profile.json]
//     cpu_devices: cut the cores into that many devices (0: one per socket)
//     profile.json: where the figures are kept (default: this machine's profile)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "hetstencil/hetstencil.hpp"

namespace {

// The application's own log: the runtime calls these from threads of its own.
std::mutex log_mutex;
void log_line(const std::string& line) {
  const std::lock_guard<std::mutex> lock(log_mutex);
  std::printf("  %s\n", line.c_str());
}
void log_progress(int solve, const hetstencil::Progress& p) {
  log_line("solve " + std::to_string(solve) + ": iteration " + std::to_string(p.iteration) + " of " +
           std::to_string(p.max_iterations) + (p.checked ? ", residual checked" : ""));
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 96;
  const int solves = argc > 2 ? std::atoi(argv[2]) : 3;
  hetstencil::RuntimeOptions options;
  options.cpu_devices = argc > 3 ? std::atoi(argv[3]) : 0;
  options.profile = argc > 4 ? argv[4] : "";
  try {
    // One runtime for the whole application: probing the machine, starting
    // the CPU devices' workers and reading the profile happen once.
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

      hetstencil::PlanOptions planning;
      planning.calibrate = true;  // a first solve of this size measures the devices
      planning.budget_s = 2.0;
      planning.notify = log_line;
      // Every other solve temporally blocked: 4 sweeps a pass on a GPU, 4 rows
      // traded every 4 iterations between devices: the same bits.
      if (k % 2 == 1) planning.variant = {hetstencil::Variant::Blocked, 4};
      const hetstencil::Plan plan = runtime.plan(problem, planning);

      const hetstencil::Result r =
          runtime.solve(problem, plan, [k](const hetstencil::Progress& p) { log_progress(k, p); }, 0.05);
      std::printf("solve %d (strength %.0f):\n%s", k, strength, hetstencil::format_report(r.report).c_str());
      // What it measured makes the next plan better.
      runtime.learn(r.report, plan.variant);

      const bool same = hetstencil::same_bits(r.solution, hetstencil::solve_reference(problem).solution);
      failures += same ? 0 : 1;
      std::printf("bitwise equal to the reference: %s\n\n", same ? "yes" : "NO");
    }
    return failures == 0 ? 0 : 1;
  } catch (const hetstencil::Error& e) {
    std::fprintf(stderr, "embed_runtime: %s\n", e.what());
    return 1;
  }
}
