// The public planning API: plans from a profile of a machine we do not have
// (who is left out and why), plans on this machine calibrated on demand, and
// reports with the prediction beside what was measured.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetstencil/hetstencil.hpp"
#include "tests/test_support.hpp"

namespace hetstencil {
namespace {

using hetstencil::testing_support::Scratch;

const std::string kEightGpus = std::string(HETSTENCIL_FIXTURES) + "/profiles/eight_gpus_two_sockets.json";


// Another machine than this one: its GPUs are planned for, never run.
RuntimeOptions described_machine() {
  RuntimeOptions o;
  o.topology.synthetic = "pack:2 numa:1 core:4 pu:1";
  return o;
}

Problem problem_of(std::int64_t nx, std::int64_t ny, std::int64_t iterations) {
  Problem p;
  p.nx = nx;
  p.ny = ny;
  p.boundary = Boundary::constant(0.5);
  p.stop.max_iterations = iterations;
  return p;
}

// The parts follow each other from row 1 and cover the grid's rows once.
void expect_covers(const Plan& plan, std::int64_t ny, std::size_t devices) {
  std::int64_t next = 1;
  for (const auto& part : plan.parts) {
    EXPECT_LT(part.device, devices);
    EXPECT_EQ(part.first_row, next);
    EXPECT_GT(part.rows, 0);
    next += part.rows;
  }
  EXPECT_EQ(next, ny + 1);
}

TEST(PlanApi, EightGpusAndTwoSocketsLeaveTheSocketsOutWithTheReason) {
  const ProfileModel model(described_machine(), kEightGpus, ProfileModel::Use::Plan);
  EXPECT_EQ(model.path(), kEightGpus);
  ASSERT_EQ(model.devices().size(), 10u);
  const Plan plan = model.plan(problem_of(16384, 16384, 1000));
  expect_covers(plan, 16384, model.devices().size());
  ASSERT_EQ(plan.parts.size(), 8u);
  for (const auto& part : plan.parts) EXPECT_EQ(model.devices()[part.device].kind, DeviceKind::Gpu);
  ASSERT_TRUE(plan.prediction);
  ASSERT_EQ(plan.prediction->devices.size(), plan.parts.size()) << "a prediction for each part";
  for (std::size_t k = 0; k < plan.parts.size(); ++k) {
    EXPECT_EQ(plan.prediction->devices[k].name, model.devices()[plan.parts[k].device].name);
    EXPECT_EQ(plan.prediction->devices[k].rows, plan.parts[k].rows);
  }
  EXPECT_TRUE(std::isfinite(plan.prediction->total_s));
  EXPECT_TRUE(plan.modelled);
  ASSERT_EQ(plan.left_out.size(), 2u);
  for (const auto& l : plan.left_out) {
    EXPECT_EQ(l.name.rfind("cpu", 0), 0u) << l.name;
    EXPECT_NE(l.reason.find("a device joins only to save 1%"), std::string::npos) << l.reason;
  }
}

TEST(PlanApi, APredictionIsForTheProfilesMachineAndItsChosenDevices) {
  RuntimeOptions machine = described_machine();
  machine.devices = "cpu0,gpu0,gpu1";
  const ProfileModel model(machine, kEightGpus, ProfileModel::Use::Predict);
  ASSERT_EQ(model.devices().size(), 3u);
  const Prediction p = model.predict(problem_of(16384, 1000, 100), {100, 450, 450});
  ASSERT_EQ(p.devices.size(), 3u);
  EXPECT_EQ(p.devices[0].name, "cpu0");
  EXPECT_EQ(p.devices[2].rows, 450);
  EXPECT_GT(p.total_s, p.setup_s);

  machine.devices = "gpu9";
  EXPECT_THROW(ProfileModel(machine, kEightGpus, ProfileModel::Use::Plan), InvalidArgument);
}

TEST(PlanApi, ASavedPlanReadsBackItsProblemAndRows) {
  const ProfileModel model(described_machine(), kEightGpus, ProfileModel::Use::Plan);
  Problem problem = problem_of(16384, 4096, 300);
  problem.stop.tolerance = 1e-6;
  problem.stop.check_every = 50;
  const Plan plan = model.plan(problem, {Variant::Blocked, 4});
  const Scratch scratch("hetstencil_plan_api");
  const std::string path = scratch.file("plan.json");
  std::ofstream(path) << to_json(plan, problem);
  const SavedPlan saved = read_saved_plan(path);
  EXPECT_EQ(saved.nx, 16384);
  EXPECT_EQ(saved.ny, 4096);
  EXPECT_EQ(saved.variant.variant, Variant::Blocked);
  EXPECT_EQ(saved.variant.param, 4);
  EXPECT_EQ(saved.stop.max_iterations, 300);
  EXPECT_EQ(saved.stop.check_every, 50);
  ASSERT_EQ(saved.names.size(), plan.parts.size());
  for (std::size_t k = 0; k < plan.parts.size(); ++k) {
    EXPECT_EQ(saved.names[k], model.devices()[plan.parts[k].device].name);
    EXPECT_EQ(saved.rows[k], plan.parts[k].rows);
  }

  Plan unpredicted = plan;
  unpredicted.prediction.reset();
  EXPECT_THROW(to_json(unpredicted, problem), InvalidArgument);
}

TEST(PlanApi, ASavedPlanNamesItsSchemaAndAnotherSchemaIsRefused) {
  const ProfileModel model(described_machine(), kEightGpus, ProfileModel::Use::Plan);
  const Problem problem = problem_of(4096, 1024, 10);
  const std::string text = to_json(model.plan(problem), problem);
  EXPECT_NE(text.find("\"schema\": \"hetstencil-plan\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"schema_version\": 1"), std::string::npos) << text;
  EXPECT_NE(text.find(std::string("\"hetstencil_version\": \"") + version() + "\""), std::string::npos) << text;
  EXPECT_EQ(text.find("_ms\""), std::string::npos) << "seconds only: " << text;
  const Scratch scratch("hetstencil_plan_api");
  const std::string path = scratch.file("plan.json");
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"\"hetstencil-plan\"", "\"hetstencil-report\""},
                                 {"\"schema_version\": 1", "\"schema_version\": 2"}}) {
    std::string changed = text;
    changed.replace(changed.find(from), from.size(), to);
    std::ofstream(path) << changed;
    try {
      read_saved_plan(path);
      ADD_FAILURE() << "read a plan of " << to;
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(path), std::string::npos) << what;
      EXPECT_NE(what.find("schema 'hetstencil-plan' version 1"), std::string::npos) << what;
    }
  }
}

TEST(PlanApi, RowsOfSharesAndEvenRowsAddUpToTheGrid) {
  EXPECT_EQ(even_rows(10, 3), (std::vector<std::int64_t>{3, 3, 4}));
  EXPECT_EQ(even_rows(2, 3), (std::vector<std::int64_t>{0, 1, 1}));
  EXPECT_EQ(rows_of_shares({1.0, 2.0, 1.0}, 8), (std::vector<std::int64_t>{2, 4, 2}));
  EXPECT_EQ(rows_of_shares({0.0, 1.0}, 7), (std::vector<std::int64_t>{0, 7}));
  EXPECT_THROW(rows_of_shares({0.0, 0.0}, 7), InvalidArgument);
}

// This machine's CPU devices, calibrated on demand into a profile of the
// test's own: the model's plan, and its prediction beside the measurement.
TEST(PlanApi, ACalibratedPlanOnCpuDevicesReportsPredictedBesideMeasured) {
  const Scratch scratch("hetstencil_plan_api");
  RuntimeOptions options = testing_support::cpu_devices(2, 1);
  options.profile = scratch.file("profile.json");
  Runtime rt(options);
  EXPECT_EQ(rt.profile_path(), options.profile);
  const Problem problem = problem_of(64, 80, 60);

  std::vector<std::string> told;
  PlanOptions planning;
  planning.calibrate = true;
  planning.budget_s = 2.0;
  planning.notify = [&](const std::string& what) { told.push_back(what); };
  const Plan plan = rt.plan(problem, planning);
  ASSERT_FALSE(told.empty());
  EXPECT_NE(told.front().find("calibrating first"), std::string::npos) << told.front();
  EXPECT_TRUE(std::filesystem::exists(options.profile)) << "the calibration is saved";
  EXPECT_TRUE(rt.profile_not_saved().empty());
  EXPECT_TRUE(plan.modelled);
  EXPECT_EQ(plan.origin.rfind("planned from " + options.profile, 0), 0u) << plan.origin;
  expect_covers(plan, problem.ny, rt.devices().size());
  ASSERT_TRUE(plan.prediction);
  ASSERT_EQ(plan.prediction->devices.size(), plan.parts.size());
  EXPECT_EQ(plan.parts.size() + plan.left_out.size(), rt.devices().size());

  // A second plan reads the figures the first measured: no calibration.
  told.clear();
  EXPECT_EQ(rt.plan(problem, planning).parts.size(), plan.parts.size());
  EXPECT_TRUE(told.empty());

  const Result r = rt.solve(problem, plan);
  EXPECT_TRUE(same_bits(r.solution, solve_reference(problem).solution));
  ASSERT_TRUE(r.report.predicted);
  EXPECT_EQ(r.report.predicted->iterations, r.report.iterations);
  ASSERT_EQ(r.report.predicted->devices.size(), r.report.devices.size());
  for (std::size_t k = 0; k < r.report.devices.size(); ++k) {
    EXPECT_EQ(r.report.predicted->devices[k].name, r.report.devices[k].name);
  }
  EXPECT_GT(r.report.predicted->total_s, 0.0);
  EXPECT_DOUBLE_EQ(r.report.predicted->total_s, plan.prediction->total_s)
      << "the run went as planned (no tolerance): its total as predicted, its fixed time ("
      << plan.prediction->fixed_s << " s) included";
  ASSERT_TRUE(predicted_iteration_s(r.report));
  EXPECT_GE(r.report.host.load.others, 0.0) << "other processes' load over the iterations, from /proc/stat";
  EXPECT_GT(iteration_s(r.report), 0.0);
  EXPECT_EQ(r.report.split, plan.origin);
  const std::string table = format_report(r.report);
  EXPECT_NE(table.find("predicted"), std::string::npos) << table;
  EXPECT_EQ(table.find("no model"), std::string::npos) << table;
  EXPECT_NE(table.find("split: planned from"), std::string::npos) << table;
  const std::string json = to_json(r.report);
  EXPECT_EQ(json.find("\"predicted_s\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"schema\": \"hetstencil-report\""), std::string::npos) << json;
  EXPECT_EQ(json.find("_ms\""), std::string::npos) << "seconds only: " << json;

  EXPECT_GE(rt.learn(r.report), 0);
  // Without a plan of its own, a solve uses the model's.
  EXPECT_TRUE(rt.solve(problem).report.predicted);
}

TEST(PlanApi, WithoutAProfileTheSplitIsEvenAndNothingIsPredicted) {
  const Scratch scratch("hetstencil_plan_api");
  RuntimeOptions options = testing_support::cpu_devices(2, 1);
  options.profile = scratch.file("none.json");
  Runtime rt(options);
  const Problem problem = problem_of(48, 48, 20);
  const Plan plan = rt.plan(problem);
  EXPECT_FALSE(plan.modelled);
  EXPECT_FALSE(plan.prediction);
  EXPECT_EQ(plan.origin.rfind("even (no model", 0), 0u) << plan.origin;
  const Plan even = rt.even_plan(problem);
  ASSERT_EQ(plan.parts.size(), even.parts.size());
  for (std::size_t k = 0; k < even.parts.size(); ++k) EXPECT_EQ(plan.parts[k].rows, even.parts[k].rows);
  EXPECT_FALSE(std::filesystem::exists(options.profile)) << "no calibration unless asked";

  const Result r = rt.solve(problem, plan);
  EXPECT_FALSE(r.report.predicted);
  EXPECT_FALSE(predicted_iteration_s(r.report));
  EXPECT_NE(format_report(r.report).find("(no model to predict it)"), std::string::npos);
  EXPECT_EQ(rt.learn(r.report), 0);
}

TEST(PlanApi, ADescribedMachineHasNoProfileAndIsSplitEvenly) {
  Runtime rt(described_machine());
  EXPECT_TRUE(rt.profile_path().empty());
  PlanOptions planning;
  planning.calibrate = true;  // nothing to measure on a machine we do not have
  const Plan plan = rt.plan(problem_of(32, 32, 5), planning);
  EXPECT_EQ(plan.origin, "even (a described machine has no model)");
  EXPECT_FALSE(plan.prediction);
  expect_covers(plan, 32, rt.devices().size());
}


TEST(PlanApi, AStencilIsCalibratedOnTheCpuDevicesBesidePoisson5AndPlannedByItsCurves) {
  const Scratch scratch("hetstencil_plan_api");
  RuntimeOptions options = testing_support::cpu_devices(2, 1);
  options.profile = scratch.file("profile.json");
  Runtime rt(options);
  std::vector<std::string> told;
  PlanOptions planning;
  planning.calibrate = true;
  planning.budget_s = 2.0;
  planning.notify = [&](const std::string& what) { told.push_back(what); };
  ASSERT_TRUE(rt.plan(problem_of(64, 80, 60), planning).modelled);
  std::ifstream first(options.profile);
  const nlohmann::json before = nlohmann::json::parse(first);

  // A stencil never measured, without calibrating: estimated from poisson5, and said so.
  Problem box = problem_of(64, 80, 60);
  box.stencil = Stencil::builtin("box9");
  PlanOptions quiet;
  const Plan estimated = rt.plan(box, quiet);
  EXPECT_EQ(estimated.origin.rfind("planned from " + options.profile, 0), 0u) << estimated.origin;
  EXPECT_NE(estimated.origin.find("box9 not measured on rows of 64: estimated"), std::string::npos) << estimated.origin;
  ASSERT_TRUE(estimated.prediction);
  ASSERT_TRUE(rt.predict(box, estimated));

  told.clear();
  const Plan plan = rt.plan(box, planning);
  ASSERT_FALSE(told.empty());
  EXPECT_NE(told.front().find("no curves of the stencil 'box9'"), std::string::npos) << told.front();
  EXPECT_EQ(plan.origin, "planned from " + options.profile) << "its own curves now";
  expect_covers(plan, box.ny, rt.devices().size());
  ASSERT_TRUE(plan.prediction);
  std::ifstream second(options.profile);
  const nlohmann::json after = nlohmann::json::parse(second);
  for (const auto& [key, device] : before.at("devices").items()) {
    for (const auto& [curve, points] : device.at("rates").items()) {
      EXPECT_EQ(after.at("devices").at(key).at("rates").at(curve), points) << key << " " << curve << " untouched";
    }
    EXPECT_TRUE(after.at("devices").at(key).at("rates").contains("box9/double/64")) << key;
  }
  told.clear();
  rt.plan(box, planning);
  EXPECT_TRUE(told.empty()) << "measured once";

  const Result r = rt.solve(box, plan);
  EXPECT_TRUE(same_bits(r.solution, solve_reference(box).solution));
  ASSERT_TRUE(r.report.predicted);
  EXPECT_EQ(r.report.split, plan.origin);
  EXPECT_FALSE(r.report.poisson5);
  EXPECT_EQ(rt.learn(r.report), 0) << "a box9 run teaches poisson5's curves nothing";
}

}  // namespace
}  // namespace hetstencil
