// plan, predict and solve --plan from the command line: large counts, many
// devices, bad numbers, other machines' profiles, saved plans.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/tools/cli_runner.hpp"

namespace hetstencil {
namespace {

namespace fs = std::filesystem;

using CliRun = test::CliResult;

// A cache and a folder for the files it writes of the test's own (each test
// runs in a process of its own): no test reads or writes the user's profile.
fs::path test_cache() { return test::own_folder("hetstencil_cli_plan_cache"); }
fs::path test_folder() { return test::own_folder("hetstencil_cli_plan_files"); }

// The command with a cache of the test's own (no test touches the user's profile).
CliRun run_cli(const std::string& args) { return test::run_command_line(HETSTENCIL_CLI, args, test_cache()); }

// Refused before anything runs, saying each of `parts`, never the library's words.
void expect_refused(const std::string& args, std::initializer_list<std::string> parts) {
  const CliRun r = run_cli(args);
  EXPECT_NE(r.exit_code, 0) << args;
  EXPECT_EQ(r.out.find("ms an iteration"), std::string::npos) << args << "\n" << r.out;
  for (const auto& part : parts) EXPECT_NE(r.err.find(part), std::string::npos) << args << "\nstderr: " << r.err;
  for (const char* raw : {"stoll", "stod", "json.exception", "Could not convert"}) {
    EXPECT_EQ(r.err.find(raw), std::string::npos) << args << "\nstderr: " << r.err;
  }
}

const std::string kEightGpus = std::string(HETSTENCIL_FIXTURES) + "/profiles/eight_gpus_two_sockets.json";
const std::string kMostIters = "9223372036854775807";

TEST(CliPlan, EightGpusAndTwoSocketsPlanASmallGrid) {
  const CliRun r = run_cli("plan --json --profile " + kEightGpus + " --nx 2048 --ny 2048 --iters 100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::int64_t rows = 0;
  int gpus = 0;
  for (const auto& d : j["devices"]) {
    rows += d["rows"].get<std::int64_t>();
    gpus += d["name"].get<std::string>().rfind("gpu", 0) == 0 ? 1 : 0;
  }
  EXPECT_EQ(rows, 2048);
  EXPECT_EQ(gpus, 8) << "equal GPUs, each with its share of the set-up";
  EXPECT_EQ(j["devices"].size() + j["left_out"].size(), 10u);
  for (const auto& l : j["left_out"]) EXPECT_FALSE(l["reason"].get<std::string>().empty()) << l["name"];
}

TEST(CliPlan, EveryDeviceLeftOutOfATinyGridSaysWhatItWouldCost) {
  // 256 rows: the balance of iterations gives most GPUs no row at all; each
  // is priced at its fewest rows beside the plan's devices instead.
  const CliRun r = run_cli("plan --json --profile " + kEightGpus + " --nx 256 --iters 100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_GE(j["left_out"].size(), 5u) << r.out;
  for (const auto& l : j["left_out"]) {
    const std::string reason = l["reason"].get<std::string>();
    EXPECT_NE(reason.find("% of the rows would"), std::string::npos) << l["name"] << ": " << reason;
    EXPECT_NE(reason.find(" s against "), std::string::npos) << l["name"] << ": " << reason;
  }
}

TEST(CliPlan, TheLargestIterationCountPlansAndPredictsAtOnce) {
  const CliRun plan =
      run_cli("plan --json --profile " + kEightGpus + " --nx 16384 --iters " + kMostIters + " --tol 1e-9 --check-every 3");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_LT(plan.seconds, 1.0);
  const auto j = nlohmann::json::parse(plan.out);
  EXPECT_TRUE(std::isfinite(j["total_s"].get<double>()));
  EXPECT_EQ(j["iterations"].get<std::int64_t>(), std::numeric_limits<std::int64_t>::max());

  const CliRun predict = run_cli("predict --profile " + kEightGpus + " --nx 16384 --iters " + kMostIters + " --tol 1e-9");
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  EXPECT_LT(predict.seconds, 1.0);
  EXPECT_NE(predict.out.find("ms an iteration"), std::string::npos) << predict.out;
  EXPECT_EQ(predict.out.find("inf"), std::string::npos) << predict.out;
}

// The profile's machine is predicted for: its devices, in device order, and
// a device it lacks is named with those it has.
TEST(CliPlan, PredictIsForTheProfilesMachine) {
  const CliRun r = run_cli("predict --profile " + kEightGpus + " --nx 16384 --ny 1000 --devices cpu0,gpu0,gpu1 "
                           "--rows 100,450,450");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* device : {"cpu0 ", "gpu0 ", "gpu1 "}) EXPECT_NE(r.out.find(device), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("gpu2"), std::string::npos) << r.out;
  expect_refused("predict --profile " + kEightGpus + " --nx 16384 --devices gpu9",
                 {"profile has no device 'gpu9' (it has: cpu0, cpu1, gpu0, gpu1, gpu2"});
  expect_refused("plan --profile " + kEightGpus + " --nx 16384 --devices cpu0,gpu12",
                 {"profile has no device 'gpu12' (it has: cpu0, cpu1, gpu0"});
}

// A device the profile tuned for the problem's stencil and precision: plan and
// predict say what it sweeps with; one without rows, or tuned for another
// precision, is not named.
TEST(CliPlan, PlanAndPredictNameTheTunedValuesOfTheDevicesWithRows) {
  nlohmann::json profile = nlohmann::json::parse(test::read_all(kEightGpus));
  const auto tuned_entry = [](int threads) {
    return nlohmann::json{{"values", {{"threads", threads}}}, {"default_s", 2e-3}, {"tuned_s", 1e-3}};
  };
  profile["devices"]["cpu0"]["tuned"]["poisson5/double"] = tuned_entry(7);
  profile["devices"]["cpu1"]["tuned"]["poisson5/float"] = tuned_entry(5);
  const fs::path tuned = test_folder() / "tuned.json";
  std::ofstream(tuned) << profile.dump(2);
  const std::string problem = " --profile " + tuned.string() + " --nx 16384 --ny 1000 --precision double";
  const CliRun predict = run_cli("predict" + problem + " --devices cpu0,cpu1,gpu0 --rows 100,100,800");
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  EXPECT_NE(predict.out.find("note: cpu0 sweeps with threads=7 (tuned in the profile"), std::string::npos) << predict.out;
  EXPECT_EQ(predict.out.find("cpu1 sweeps with"), std::string::npos) << predict.out;
  const CliRun without = run_cli("predict" + problem + " --devices cpu0,cpu1,gpu0 --rows 0,100,900");
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_EQ(without.out.find("sweeps with"), std::string::npos) << without.out;
  const CliRun plan = run_cli("plan" + problem + " --devices cpu0");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("note: cpu0 sweeps with threads=7"), std::string::npos) << plan.out;
}

TEST(CliPlan, RowCountsAreCheckedAndZeroLeavesADeviceOut) {
  const std::string two_cpus = " --profile " + kEightGpus + " --nx 16384 --ny 100 --devices cpu0,cpu1";
  expect_refused("predict --rows 105,-5" + two_cpus, {"--rows", "-5", "0 to 1073741824"});
  const CliRun zero = run_cli("predict --rows 100,0" + two_cpus);
  ASSERT_EQ(zero.exit_code, 0) << zero.err;
  EXPECT_EQ(zero.out.find("inf"), std::string::npos) << zero.out;
  EXPECT_EQ(zero.out.find("cpu1"), std::string::npos) << "a device without rows takes no part:\n" << zero.out;
  expect_refused("predict --rows 200,0" + two_cpus, {"--rows gives cpu0 200 rows", "0 (left out) to 100"});
  expect_refused("predict --rows 9223372036854775807,9223372036854775807" + two_cpus, {"--rows", "0 to 1073741824"});
  const std::string huge(309, '9');
  const CliRun r = run_cli("predict --rows " + huge + ",1" + two_cpus);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err.find(huge), std::string::npos) << "echoed whole: " << r.err;
  EXPECT_NE(r.err.find("(309 characters)"), std::string::npos) << r.err;
  expect_refused("solve --nx 8 --cpu-devices 2 --devices cpu --no-calibrate --rows 8,-1", {"--rows", "-1"});
  expect_refused("solve --nx 8 --cpu-devices 2 --devices cpu --no-calibrate --rows 9223372036854775807,1", {"--rows"});
  expect_refused("solve --nx 8 --cpu-devices 2 --devices cpu --no-calibrate --split 1,nan", {"--split", "from 0 to 1000000000"});
  expect_refused("solve --nx 8 --cpu-devices 2 --devices cpu --no-calibrate --split 1e999,1", {"--split", "from 0 to 1000000000"});
}

TEST(CliPlan, ModelOptionsAreValidated) {
  for (const char* budget : {"nan", "-1", "inf", "0", "1e999"}) {
    expect_refused(std::string("calibrate --budget ") + budget, {"--budget", "greater than 0 and at most 86400"});
  }
  expect_refused("calibrate --nx 9223372036854775807", {"--nx", "1 to 1073741824"});
  expect_refused("calibrate --max-rows -3", {"--max-rows", "0 to 1073741824"});
}

// A saved plan runs as it was planned: variant, depth, iterations and stop
// rule; an option that contradicts it is refused.
TEST(CliPlan, ASavedPlanKeepsItsVariantAndStopRule) {
  const std::string machine = " --cpu-devices 2 --devices cpu --threads 1";
  ASSERT_EQ(run_cli("calibrate --nx 40 --budget 3" + machine).exit_code, 0);
  const CliRun plan = run_cli("plan --json --nx 40 --ny 24 --iters 7 --tol 1e-30 --check-every 3 --variant blocked "
                              "--depth 2 --devices cpu0,cpu1");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const auto saved = nlohmann::json::parse(plan.out);
  EXPECT_EQ(saved["variant"], "blocked");
  EXPECT_EQ(saved["depth"], 2);
  EXPECT_EQ(saved["iterations"], 7);
  EXPECT_EQ(saved["check_every"], 3);
  const fs::path file = test_folder() / "plan.json";
  std::ofstream(file) << plan.out;

  const CliRun r = run_cli("solve --json --no-learn --plan " + file.string() + machine);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["iterations"], 7) << "the plan's iterations, not the default";
  EXPECT_NE(j["split"].get<std::string>().find("blocked (depth 2)"), std::string::npos) << j["split"];

  expect_refused("solve --iters 8 --plan " + file.string() + machine, {"--iters 8 contradicts the plan"});
  expect_refused("solve --depth 3 --plan " + file.string() + machine, {"--depth 3 contradicts the plan"});
  expect_refused("solve --variant sync --plan " + file.string() + machine, {"--variant sync contradicts the plan"});

  auto broken = saved;
  broken["devices"][0]["rows"] = -4;
  std::ofstream(test_folder() / "negative.json") << broken.dump();
  expect_refused("solve --plan " + (test_folder() / "negative.json").string() + machine,
                 {"'rows' must be a whole number from 0 to 24"});
  broken["devices"][0]["rows"] = nlohmann::json::parse("18446744073709551615");
  std::ofstream(test_folder() / "huge.json") << broken.dump();
  expect_refused("solve --plan " + (test_folder() / "huge.json").string() + machine, {"'rows' must be a whole number"});
  broken = saved;
  broken.erase("iterations");
  std::ofstream(test_folder() / "old.json") << broken.dump();
  expect_refused("solve --plan " + (test_folder() / "old.json").string() + machine, {"no field 'iterations'"});
  std::ofstream(test_folder() / "text.json") << "{ not json";
  expect_refused("solve --plan " + (test_folder() / "text.json").string() + machine, {"is not JSON"});
}

// project: a table a node count, with the network it assumed; a bad cluster
// file is refused naming its field, nothing printed.
TEST(CliProject, PrintsTheTableAndItsAssumptions) {
  const std::string cluster = std::string(HETSTENCIL_FIXTURES) + "/clusters/eight_h200_nodes.json";
  const CliRun r = test::run_command(HETSTENCIL_CLI, {"project", "--cluster", cluster, "--nx", "65536", "--nodes", "1,2,64"},
                                     fs::current_path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("65536 x 65536 float"), std::string::npos) << r.out;
  for (const char* row : {"\n    1 |", "\n    2 |", "\n   64 |"}) EXPECT_NE(r.out.find(row), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    1 |       1.0693     1.00     100.0%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2.00 us + bytes at 25.00 GB/s a message (assumed:"), std::string::npos) << r.out;

  nlohmann::json bad = nlohmann::json::parse(test::read_all(cluster));
  bad["network"].erase("latency_s");
  std::ofstream(test_folder() / "cluster.json") << bad.dump();
  const CliRun refused = test::run_command(
      HETSTENCIL_CLI, {"project", "--cluster", (test_folder() / "cluster.json").string()}, fs::current_path());
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("network.latency_s is missing"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.out, "");
}

}  // namespace
}  // namespace hetstencil
