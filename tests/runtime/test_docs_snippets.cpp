// The code of docs/embedding.md, compiled and run on 2 CPU devices with small
// grids, so that the page cannot promise what the API does not do. The last
// test checks that every C++ block of the page is in this file, line for line.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hetstencil/hetstencil.hpp"
#include "tests/test_support.hpp"

namespace {

using hetstencil::testing_support::Scratch;

const std::string kEightGpus = std::string(HETSTENCIL_FIXTURES) + "/profiles/eight_gpus_two_sockets.json";
const std::string kPage = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "docs" / "embedding.md";


// Each function below holds one block of the page; its parameters are what the
// page's text says the block starts from.

hetstencil::Runtime make_runtime(const std::string& profile_path) {
  hetstencil::RuntimeOptions options;
  options.cpu_devices = 2;         // the cores cut into 2 CPU devices (0: one per socket)
  options.threads_per_device = 1;  // 0: one per core of the device
  options.devices = "cpu";         // which devices: "" all, "cpu0,gpu1", "-gpu" ...
  options.profile = profile_path;  // "": this machine's profile under ~/.cache/hetstencil
  hetstencil::Runtime runtime(options);
  for (const hetstencil::DeviceInfo& d : runtime.devices())
    std::printf("%s: %s\n", d.name.c_str(), d.description.c_str());
  return runtime;
}

std::vector<hetstencil::DeviceInfo> describe_machine() {
  hetstencil::RuntimeOptions described;
  described.topology.synthetic = "pack:2 numa:1 core:8 pu:1";  // or .xml_file = "machine.xml" (lstopo's)
  const hetstencil::Topology machine = hetstencil::load_topology(described.topology);
  const std::vector<hetstencil::DeviceInfo> devices = hetstencil::devices_of(machine, described);
  return devices;
}

hetstencil::Problem make_problem() {
  hetstencil::Problem problem;
  problem.nx = 64;  // interior points of a row
  problem.ny = 48;  // interior rows
  problem.precision = hetstencil::Precision::Float;
  problem.source = hetstencil::Source::from_function([](double x, double y) { return std::sin(3.0 * x) * y; });
  problem.boundary = hetstencil::Boundary::constant(0.5);
  problem.stop.max_iterations = 2000;
  problem.stop.tolerance = 1e-3;  // stop once the residual fell a thousandfold ...
  problem.stop.check_every = 50;  // ... checked every 50 iterations
  return problem;
}

hetstencil::Plan plan_problem(hetstencil::Runtime& runtime, const hetstencil::Problem& problem) {
  hetstencil::PlanOptions planning;
  planning.calibrate = true;  // measure the devices first where the profile lacks them
  planning.budget_s = 2.0;    // within about this many seconds
  planning.notify = [](const std::string& what) { std::fprintf(stderr, "%s\n", what.c_str()); };
  const hetstencil::Plan plan = runtime.plan(problem, planning);
  return plan;
}

std::string inspect_plan(const hetstencil::Runtime& runtime, const hetstencil::Problem& problem,
                         const hetstencil::Plan& plan) {
  std::printf("%s\n", plan.origin.c_str());
  for (const hetstencil::Assignment& part : plan.parts) {
    const hetstencil::DeviceInfo& device = runtime.devices()[part.device];
    std::printf("%s: rows %lld..%lld\n", device.name.c_str(), static_cast<long long>(part.first_row),
                static_cast<long long>(part.first_row + part.rows - 1));
  }
  if (plan.prediction) {
    for (const hetstencil::DevicePrediction& d : plan.prediction->devices)
      std::printf("%s: %.3g s an iteration (compute %.3g s, exposed exchange %.3g s)\n", d.name.c_str(),
                  d.iteration_s, d.compute_s, d.exposed_s);
    std::printf("predicted: %.3g s in all\n", plan.prediction->total_s);
  }
  for (const hetstencil::LeftOut& l : plan.left_out) std::printf("%s left out: %s\n", l.name.c_str(), l.reason.c_str());
  std::string saved;
  if (plan.prediction) saved = hetstencil::to_json(plan, problem);  // read_saved_plan reads it back
  return saved;
}

hetstencil::Result solve_problem(hetstencil::Runtime& runtime, const hetstencil::Problem& problem,
                                 const hetstencil::Plan& plan) {
  const hetstencil::Result result = runtime.solve(
      problem, plan,
      [](const hetstencil::Progress& p) {  // on a thread of the runtime's: short, and locking what it shares
        std::fprintf(stderr, "iteration %lld of %lld\n", static_cast<long long>(p.iteration),
                     static_cast<long long>(p.max_iterations));
      },
      0.5);  // seconds between calls
  const hetstencil::Grid<float>& u = result.grid<float>();  // (ny+2) x (nx+2), boundary included
  std::printf("u at the centre: %g\n", u(u.rows() / 2, u.cols() / 2));
  return result;
}

std::string read_report(const hetstencil::Result& result) {
  const hetstencil::Report& report = result.report;
  std::fputs(hetstencil::format_report(report).c_str(), stdout);  // the table `hetstencil solve` prints
  if (const std::optional<double> predicted = hetstencil::predicted_iteration_s(report)) {
    const double measured = hetstencil::iteration_s(report);
    std::printf("an iteration: %.3g s predicted, %.3g s measured (%+.0f%%)\n", *predicted, measured,
                hetstencil::error_percent(*predicted, measured));
  }
  for (const hetstencil::DeviceReport& d : report.devices)
    std::printf("%s: %lld rows, sweeps %.3g s, exchange %.3g s\n", d.name.c_str(), static_cast<long long>(d.rows),
                d.compute_s, d.exchange_s);
  const std::string json = hetstencil::to_json(report);  // the same figures, for programs
  return json;
}

int reuse_runtime(hetstencil::Runtime& runtime, hetstencil::Problem problem) {
  int moved = 0;
  for (int k = 1; k <= 3; ++k) {
    problem.boundary = hetstencil::Boundary::constant(0.1 * k);
    const hetstencil::Plan plan = runtime.plan(problem);  // from the profile: no calibration now
    const hetstencil::Result r = runtime.solve(problem, plan);
    moved += runtime.learn(r.report, plan.variant);  // what it measured refines the next plan
  }
  return moved;
}

void solve_on_two_threads(hetstencil::Runtime& runtime, const hetstencil::Problem& problem) {
  std::thread other([&runtime, problem] { runtime.solve(problem); });  // the two solves take turns
  const hetstencil::Result mine = runtime.solve(problem);
  other.join();
}

std::string catch_errors(hetstencil::Runtime& runtime, const hetstencil::Problem& problem) {
  std::string said;
  try {
    hetstencil::Problem bad = problem;
    bad.nx = 0;
    runtime.solve(bad);
  } catch (const hetstencil::InvalidArgument& e) {  // what the caller gave: nothing ran
    said = e.what();
    std::fprintf(stderr, "not solved: %s (raised at %s:%d)\n", e.what(), e.file(), e.line());
  } catch (const hetstencil::Error& e) {  // SystemError, NotCompiled, a device's failure
    said = e.what();
    std::fprintf(stderr, "failed: %s\n", e.what());
  }
  return said;
}

// One worker a device: on a many-core host running other tests at once, the
// 2 s budget would go on waking idle workers before the set-up is measured.
hetstencil::Calibrated calibrate(const std::string& profile_path) {
  hetstencil::RuntimeOptions machine;
  machine.cpu_devices = 2;
  machine.devices = "cpu";
  machine.threads_per_device = 1;  // 0: one per core of the device
  hetstencil::CalibrateOptions c;
  c.nx = 64;                  // the row width the curves are for
  c.precisions = {hetstencil::Precision::Float};
  c.budget_s = 2.0;
  c.profile = profile_path;   // "": this machine's profile
  const hetstencil::Calibrated cal = hetstencil::calibrate_machine(machine, c);
  std::printf("calibrated in %.1f s into %s\n", cal.seconds, cal.path.c_str());
  if (const std::optional<hetstencil::MachineProfile> saved = hetstencil::MachineProfile::load(cal.path))
    std::fputs(saved->to_text().c_str(), stdout);
  return cal;
}

hetstencil::Plan plan_elsewhere(const std::string& profile_file, const hetstencil::Problem& problem) {
  const hetstencil::ProfileModel model({}, profile_file, hetstencil::ProfileModel::Use::Plan);
  const hetstencil::Plan plan = model.plan(problem);  // indices into model.devices()
  const hetstencil::Prediction even =
      model.predict(problem, hetstencil::even_rows(problem.ny, model.devices().size()));
  std::printf("planned: %.3g s, evenly: %.3g s\n", plan.prediction->total_s, even.total_s);
  return plan;
}

int bench(const hetstencil::Problem& problem) {
  hetstencil::RuntimeOptions machine;
  machine.cpu_devices = 2;
  int timings = 0;
  hetstencil::bench_cpu_sweeps(machine, 64, 64, {hetstencil::Precision::Double}, 5, false,
                               [&timings](const hetstencil::SweepTiming& t) {
                                 ++timings;
                                 std::printf("%s: sweep %.3g s, a copy of its bytes %.3g s\n", t.device.c_str(),
                                             t.sweep_s, t.copy_s);
                               });
  try {
    hetstencil::VariantSolver gpu(0, problem);  // the problem's grid on GPU 0
    const double seconds = gpu.advance({hetstencil::Variant::Async2, 4}, 100);
    std::printf("100 iterations of async2 (alpha 4): %.3g s\n", seconds);
  } catch (const hetstencil::Error& e) {  // NotCompiled without a GPU backend, or no GPU 0
    std::printf("no GPU benchmark: %s\n", e.what());
  }
  return timings;
}

// The tests run the blocks in the page's order on one Runtime.

TEST(DocsSnippets, EveryBlockRunsOnTwoCpuDevices) {
  const Scratch scratch("hetstencil_docs");
  const std::string profile = scratch.file("profile.json");
  hetstencil::Runtime runtime = make_runtime(profile);
  ASSERT_EQ(runtime.devices().size(), 2u);
  EXPECT_EQ(runtime.profile_path(), profile);

  const hetstencil::Problem problem = make_problem();
  const hetstencil::Plan plan = plan_problem(runtime, problem);
  EXPECT_TRUE(plan.modelled) << plan.origin;
  ASSERT_TRUE(plan.prediction);
  const std::string saved = inspect_plan(runtime, problem, plan);
  EXPECT_NE(saved.find("\"devices\""), std::string::npos) << saved;

  const hetstencil::Result result = solve_problem(runtime, problem, plan);
  EXPECT_TRUE(result.report.converged);
  EXPECT_TRUE(hetstencil::same_bits(result.solution, hetstencil::solve_reference(problem).solution));
  ASSERT_TRUE(result.report.predicted);
  EXPECT_NE(read_report(result).find("\"devices\""), std::string::npos);

  reuse_runtime(runtime, problem);
  solve_on_two_threads(runtime, problem);
  EXPECT_NE(catch_errors(runtime, problem), "");
  hetstencil::Problem bad = problem;
  bad.nx = 0;
  EXPECT_THROW(runtime.solve(bad), hetstencil::InvalidArgument);
}

TEST(DocsSnippets, ADescribedMachineHasItsDevices) {
  const std::vector<hetstencil::DeviceInfo> devices = describe_machine();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].name, "cpu0");
  EXPECT_EQ(devices[1].name, "cpu1");
}

TEST(DocsSnippets, ProfilesAreMadePrintedAndPlannedFrom) {
  const Scratch scratch("hetstencil_docs");
  const hetstencil::Calibrated cal = calibrate(scratch.file("profile.json"));
  EXPECT_EQ(cal.path, scratch.file("profile.json"));
  EXPECT_TRUE(cal.skipped.empty()) << cal.skipped.front();
  const std::optional<hetstencil::MachineProfile> saved = hetstencil::MachineProfile::load(cal.path);
  ASSERT_TRUE(saved);
  EXPECT_NE(saved->to_text().find("float/64"), std::string::npos) << saved->to_text();

  hetstencil::Problem problem = make_problem();
  problem.nx = problem.ny = 16384;
  problem.precision = hetstencil::Precision::Double;  // the fixture's curves
  const hetstencil::Plan plan = plan_elsewhere(kEightGpus, problem);
  EXPECT_EQ(plan.parts.size(), 8u);
}

TEST(DocsSnippets, BenchmarksReportEachCpuDevice) { EXPECT_EQ(bench(make_problem()), 2); }

// Each ```cpp block of the page, its lines stripped of indentation, is a run
// of consecutive lines of this file (blank lines aside).
std::vector<std::string> stripped_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find_first_not_of(' ');
    if (first != std::string::npos) lines.push_back(line.substr(first));
  }
  return lines;
}

TEST(DocsSnippets, EveryCodeBlockOfThePageIsInThisFile) {
  std::ifstream page_in(kPage), self_in(__FILE__);
  ASSERT_TRUE(page_in) << kPage;
  ASSERT_TRUE(self_in) << __FILE__;
  std::stringstream self_text;
  self_text << self_in.rdbuf();
  const std::vector<std::string> self = stripped_lines(self_text.str());

  std::vector<std::string> blocks;
  std::string block;
  bool in_cpp = false;
  for (std::string line; std::getline(page_in, line);) {
    if (!in_cpp && line == "```cpp") {
      in_cpp = true;
      block.clear();
    } else if (in_cpp && line == "```") {
      in_cpp = false;
      blocks.push_back(block);
    } else if (in_cpp) {
      block += line + "\n";
    }
  }
  EXPECT_FALSE(in_cpp) << "a ```cpp block of the page is not closed";
  EXPECT_GE(blocks.size(), 10u);
  for (const std::string& b : blocks) {
    const std::vector<std::string> lines = stripped_lines(b);
    ASSERT_FALSE(lines.empty());
    const auto at = std::search(self.begin(), self.end(), lines.begin(), lines.end());
    EXPECT_NE(at, self.end()) << "this block of " << kPage << " is not in " << __FILE__ << ":\n" << b;
  }
}

}  // namespace
