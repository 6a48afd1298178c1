// Concurrency, signals, resource limits and the library API's edges.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "hetstencil/hetstencil.hpp"
#include "tests/robustness/common_args.hpp"
#include "tests/robustness/harness.hpp"
#include "tests/test_support.hpp"

namespace hetstencil::robustness {
namespace {

Args calibrate_args(const std::string& nx) {
  return {"calibrate", "--nx", nx, "--max-rows", nx, "--budget", "3", "--devices", "cpu", "--cpu-devices", "2", "--threads", "1"};
}

// Whether the profile of the box's cache has a curve for `nx` (double).
bool has_curve(const Sandbox& box, const std::string& nx) {
  const Outcome shown = run_cli(box, {"profile", "show", "--json"});
  return shown.out.find("double/" + nx + "\"") != std::string::npos;
}

TEST(RobustConcurrency, TwoCalibrationsAtOnceKeepBothCurves) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    Sandbox box;
    const Started a = start_cli(box, calibrate_args("16"));
    const Started b = start_cli(box, calibrate_args("24"));
    check("concurrency", "two calibrates at once (a)", finish(a), Expect::Success);
    check("concurrency", "two calibrates at once (b)", finish(b), Expect::Success);
    check_kept("concurrency", "two calibrates at once", has_curve(box, "16") && has_curve(box, "24"),
               "a calibration's curves were lost");
    check_kept("concurrency", "two calibrates at once", temporary_files(box.root()).empty(), "a temporary file was left");
  }
}

TEST(RobustConcurrency, ALearningSolveBesideACalibration) {
  Sandbox box;
  const Started cal = start_cli(box, calibrate_args("24"));
  const Started learn = start_cli(box, {"solve", "--devices", "cpu", "--cpu-devices", "2", "--threads", "1", "--nx", "16",
                                        "--iters", "3", "--budget", "3"});
  check("concurrency", "calibrate beside a learning solve (calibrate)", finish(cal), Expect::Success);
  check("concurrency", "calibrate beside a learning solve (solve)", finish(learn), Expect::Success);
  check_kept("concurrency", "calibrate beside a learning solve", has_curve(box, "24"), "the calibration's curves were lost");
}

Problem small_problem(std::int64_t n, std::int64_t iterations) {
  Problem p;
  p.nx = p.ny = n;
  p.stop.max_iterations = iterations;
  return p;
}

RuntimeOptions two_cpu_devices() {
  RuntimeOptions o;
  o.cpu_devices = 2;
  o.threads_per_device = 1;
  o.devices = "cpu";
  return o;
}

TEST(RobustConcurrency, TwoThreadsSolvingOnOneRuntime) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    const Outcome o = run_library(
        [] {
          Runtime rt(two_cpu_devices());
          const Problem p = small_problem(64, 200);
          const Result expected = solve_reference(p);
          std::atomic<int> wrong{0};
          auto solve = [&] {
            try {
              const Result r = rt.solve(p);
              if (!same_bits(r.solution, expected.solution)) ++wrong;
            } catch (const Error&) {
              // Refusing the second solve with the library's own error is allowed.
            }
          };
          std::thread first(solve);
          std::thread second(solve);
          first.join();
          second.join();
          if (wrong != 0) HETSTENCIL_THROW(Error, "a solve beside another returned wrong bits");
        },
        20);
    check("concurrency", "two threads solving on one Runtime", o, Expect::Success);
  }
}

TEST(RobustLibrary, TheWrongPrecisionsGridIsAClearError) {
  const Outcome o = run_library([] {
    Runtime rt(two_cpu_devices());
    const Result r = rt.solve(small_problem(8, 2));
    (void)r.grid<float>();
  });
  check("library", "grid<float>() of a double solution", o, Expect::Fails);
}

TEST(RobustLibrary, ProblemsAndPlansPastTheEdges) {
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  for (const auto& [nx, ny] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {big, big}, {std::int64_t{1} << 31, std::int64_t{1} << 31}, {std::int64_t{1} << 32, std::int64_t{1} << 32}, {0, 8}, {-1, 8}, {8, big}}) {
    const Outcome o = run_library([nx = nx, ny = ny] {
      Runtime rt(two_cpu_devices());
      Problem p = small_problem(8, 2);
      p.nx = nx;
      p.ny = ny;
      (void)rt.solve(p);
    });
    check("library", "solve of " + std::to_string(nx) + " x " + std::to_string(ny), o, Expect::Fails);
  }
  const std::vector<Plan> plans = {Plan({{0, 1, big}, {1, 1, big}}), Plan({{0, 1, 12}, {1, 13, -4}}), Plan({{0, 1, 4}, {7, 5, 4}}),
                                   Plan({{0, 1, 4}, {0, 5, 4}}), Plan(std::vector<Assignment>{}), Plan({{0, 1, 4}, {1, 5, 4}}, {Variant::Blocked, 99})};
  for (std::size_t k = 0; k < plans.size(); ++k) {
    const Outcome o = run_library([&, k] {
      Runtime rt(two_cpu_devices());
      (void)rt.solve(small_problem(8, 2), plans[k]);
    });
    check("library", "a plan past the edges (#" + std::to_string(k) + ")", o, Expect::Fails);
  }
  const Outcome iterations = run_library([] {
    Runtime rt(two_cpu_devices());
    Problem p = small_problem(8, -1);
    (void)rt.solve(p);
  });
  check("library", "a negative iteration count", iterations, Expect::Fails);
}

TEST(RobustLibrary, AHugeSyntheticMachineLoadsQuickly) {
  const Outcome o = run_library([] {
    TopologySource s;
    s.synthetic = "pack:16 numa:2 core:64 pu:2";
    const Topology t = load_topology(s);
    if (t.cores.size() != 2048) HETSTENCIL_THROW(Error, "expected 2048 cores, got " + std::to_string(t.cores.size()));
  }, 5);
  check("topologies", "load_topology of 2048 cores", o, Expect::Success);
}

// A solve big enough that writing its result takes a while (33 MB).
Args writing_solve(const fs::path& out) {
  return with(with(with(with(quick_solve(), "--nx", "2046"), "--ny", "2046"), "--iters", "2"), "--output", out.string());
}

TEST(RobustSignals, AStopDuringTheWriteLeavesTheTargetWholeOrUntouched) {
  for (const int sig : {SIGINT, SIGTERM}) {
    for (const double delay : {-1.0, 0.05, 0.2, 0.5}) {
      Sandbox box;
      const fs::path out = box.path("u.npy");
      const std::string old = "an earlier result, kept unless replaced whole\n";
      box.write("u.npy", old);
      RunOptions options;
      options.timeout_s = 60;
      options.send_signal = sig;
      // -1: the moment a temporary file of the write appears; else after `delay` s.
      options.signal_when = [&box, delay](double seconds) {
        return delay < 0 ? !temporary_files(box.root()).empty() || seconds > 5.0 : seconds >= delay;
      };
      const std::string what = std::string(sig == SIGINT ? "SIGINT" : "SIGTERM") +
                               (delay < 0 ? " as the write begins" : " after " + std::to_string(delay) + " s");
      const Outcome o = run_cli(box, writing_solve(out), options);
      check("signals", what, o, Expect::Any, sig);
      const auto left = temporary_files(box.root());
      check_kept("signals", what, left.empty(), left.empty() ? "" : "left " + left.front().string());
      check_kept("signals", what, read_file(out) == old || complete_npy(out, 2046, 2046, 8), "the target is neither intact nor whole");
    }
  }
}

TEST(RobustLimits, TooLittleAddressSpace) {
  if (const std::string why = testing_support::why_limits_cannot_be_tested(); !why.empty()) GTEST_SKIP() << why;
  if (sanitized()) GTEST_SKIP() << "a sanitizer's shadow memory needs more address space than any limit tried here";
  Sandbox box;
  RunOptions limited;
  limited.address_space = rlim_t{512} << 20;
  cli_case(box, "limits", with(with(quick_solve(), "--nx", "16384"), "--ny", "16384"), Expect::Fails, limited);
  cli_case(box, "limits", {"bench", "cpu", "--nx", "16384", "--ny", "16384", "--reps", "1"}, Expect::Fails, limited);
  cli_case(box, "limits", with(with(quick_solve(), "--nx", "4000"), "--output", box.path("u.npy").string()), Expect::Any, limited);
  limited.address_space = rlim_t{64} << 20;
  cli_case(box, "limits", quick_solve(), Expect::Any, limited);
}

TEST(RobustLimits, WorkerThreadsThatCannotBeCreated) {
  if (const std::string why = testing_support::why_limits_cannot_be_tested(); !why.empty()) GTEST_SKIP() << why;
  // RLIMIT_NPROC counts every process of a user and binds no root process: run
  // as uid 65534, whose processes here are only the one started.
  if (!why_not_root().empty()) GTEST_SKIP() << why_not_root();
  for (const rlim_t processes : {2, 3, 5}) {
    Sandbox box;
    box.give_to_nobody();
    RunOptions limited;
    limited.unprivileged = true;
    limited.processes = processes;
    limited.timeout_s = 30;
    cli_case(box, "limits", with(with(quick_solve(), "--threads", "4"), "--cpu-devices", "3"), Expect::Fails, limited);
  }
}

}  // namespace
}  // namespace hetstencil::robustness
