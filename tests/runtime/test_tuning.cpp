// Tuned kernel parameters change no bit: every value of every parameter a CPU
// device tunes, on a few stencils and both precisions, over two devices, gives
// the defaults' bits (and the reference's); and a solve takes its parameters
// from the profile.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "devices/backend.hpp"
#include "hetstencil/logging.hpp"
#include "hetstencil/reference.hpp"
#include "model/profile.hpp"
#include "runtime/executor.hpp"
#include "tests/test_support.hpp"

namespace hetstencil {
namespace {

namespace fs = std::filesystem;
using testing_support::expect_same_bits;

// Two CPU devices of 2 workers, the first with the fewest units it may have.
struct TwoDevices {
  MachineDevices made = make_devices(load_topology(), DeviceMapOptions{2, 2, "cpu", false, {}});
  std::vector<Device*> devices{made.devices[0].get(), made.devices[1].get()};

  Plan plan_for(const Problem& p) const {
    const std::int64_t first = p.stencil.radius() + 1;
    return Plan{{{0, 1, first}, {1, first + 1, p.units() - first}}};
  }
};

TEST(TunedSweeps, EveryValueOfEveryParameterGivesTheDefaultsBits) {
  TwoDevices two;
  int variety = 0;
  for (const std::string name : {"poisson5", "box9", "poisson7", "star4"}) {
    for (Precision precision : {Precision::Float, Precision::Double}) {
      const Stencil s = Stencil::builtin(name);
      // Rows longer than the smallest chunk, and 3-D planes larger than the
      // smallest tile (whose columns are then narrowed): every value counts.
      const Problem p = testing_support::stencil_problem(s, precision, 300, 40, 12, false, variety++, 9);
      const Plan plan = two.plan_for(p);
      const Result reference = solve_reference(p);
      const Result defaults = execute(p, plan, two.devices, two.made.spins);
      expect_same_bits(defaults, reference);
      StencilJob job;
      job.stencil = s;
      job.poisson5 = is_poisson5(s);
      job.precision = precision;
      for (const Tunable& t : two.devices[0]->tunables(job)) {
        for (int value : t.values) {
          if (value == t.default_value) continue;
          SCOPED_TRACE(name + " " + to_string(precision) + " " + t.name + "=" + std::to_string(value));
          const Result tuned = execute(p, plan, two.devices, two.made.spins, {}, nullptr,
                                       [&](const Device&) { return Tuning{{t.name, value}}; });
          expect_same_bits(tuned, defaults);
          EXPECT_EQ(tuned.report.residual.l2, defaults.report.residual.l2);
        }
      }
    }
  }
}

// A runtime of `cpu_devices` CPU devices of 2 workers whose profile, in a
// folder of its own (removed at the end), stores `tuning` as its first
// device's tuning of box9 in double.
struct TunedRuntime {
  TunedRuntime(const std::string& name, int cpu_devices, const Tuning& tuning)
      : dir(fs::temp_directory_path() / ("hetstencil_tuned_" + name + "_" + std::to_string(getpid()))),
        options(options_in(dir, cpu_devices)),
        runtime(options) {
    Profile stored;
    stored.fingerprint = fingerprint_of(runtime.topology());
    DeviceProfile& d = stored.devices[device_key(runtime.devices().front())];
    d.name = runtime.devices().front().name;
    d.kind = "cpu";
    d.tuned["box9/double"] = {tuning, 1e-3, 5e-4, "64x64"};
    save_profile(options.profile, stored);
  }
  ~TunedRuntime() { fs::remove_all(dir); }

  static RuntimeOptions options_in(const fs::path& dir, int cpu_devices) {
    fs::create_directories(dir);
    RuntimeOptions o = testing_support::cpu_devices(cpu_devices, 2);
    o.profile = (dir / "profile.json").string();
    return o;
  }

  fs::path dir;
  RuntimeOptions options;
  Runtime runtime;
};

// A stored tuning the device does not take: the solve says so and runs its
// defaults, which shows that solves read their parameters from the profile.
TEST(TunedSweeps, ASolveTakesItsParametersFromTheProfile) {
  TunedRuntime tuned("solve", 1, {{"threads", 99}});
  Runtime& runtime = tuned.runtime;

  const Problem p =
      testing_support::stencil_problem(Stencil::builtin("box9"), Precision::Double, 20, 12, 0, false, 0, 5);
  std::vector<std::string> warned;
  set_log_sink([&](LogLevel, const std::string& m) { warned.push_back(m); });
  const Result solved = runtime.solve(p, runtime.even_plan(p));
  set_log_sink(nullptr);
  expect_same_bits(solved, solve_reference(p));
  bool said = false;
  for (const std::string& m : warned) {
    said = said || (m.find("tuned value is not used") != std::string::npos &&
                    m.find("'threads' takes 1, 2, not 99") != std::string::npos);
  }
  EXPECT_TRUE(said) << (warned.empty() ? "no warning" : warned.front());
}

// The same through a calibration: the devices it measures sweep with the
// profile's tuned parameters, which a value the device does not take shows.
TEST(TunedSweeps, ACalibrationTakesItsParametersFromTheProfile) {
  TunedRuntime tuned("calibration", 1, {{"block_x", 8}});
  Runtime& runtime = tuned.runtime;

  const Problem p =
      testing_support::stencil_problem(Stencil::builtin("box9"), Precision::Double, 64, 32, 0, false, 0, 5);
  std::vector<std::string> warned;
  set_log_sink([&](LogLevel, const std::string& m) { warned.push_back(m); });
  PlanOptions plan;
  plan.calibrate = true;
  plan.budget_s = 1.0;
  runtime.plan(p, plan);
  set_log_sink(nullptr);
  bool said = false;
  for (const std::string& m : warned) said = said || m.find("has no kernel parameter 'block_x'") != std::string::npos;
  EXPECT_TRUE(said) << (warned.empty() ? "no warning" : warned.front());
  const auto saved = load_profile(tuned.options.profile, nullptr);
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->devices.at(device_key(runtime.devices().front())).tuned.count("box9/double"), 1u)
      << "the calibration keeps the tuning";
}

// The report names the parameters each device swept with that are not its
// defaults, in its table and its JSON.
TEST(TunedSweeps, TheReportSaysWhatEachDeviceSweptWith) {
  TunedRuntime tuned("report", 2, {{"threads", 1}});
  Runtime& runtime = tuned.runtime;
  const Problem p =
      testing_support::stencil_problem(Stencil::builtin("box9"), Precision::Double, 20, 12, 0, false, 0, 5);
  const Result solved = runtime.solve(p, runtime.even_plan(p));
  expect_same_bits(solved, solve_reference(p));
  ASSERT_EQ(solved.report.devices.size(), 2u);
  EXPECT_EQ(solved.report.devices[0].tuning, (Tuning{{"threads", 1}}));
  EXPECT_TRUE(solved.report.devices[1].tuning.empty());
  const std::string table = format_report(solved.report);
  EXPECT_NE(table.find("tuned: " + solved.report.devices[0].name + " threads=1 (from the profile"), std::string::npos)
      << table;
  const auto json = nlohmann::json::parse(to_json(solved.report));
  EXPECT_EQ(json.at("devices").at(0).at("tuning").at("threads"), 1);
  EXPECT_EQ(json.at("devices").at(1).at("tuning"), nlohmann::json::object());
}

}  // namespace
}  // namespace hetstencil
