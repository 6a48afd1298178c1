// The command line as a user meets it: exit codes, messages, files.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetstencil/reference.hpp"
#include "hetstencil/topology.hpp"
#include "hetstencil/version.hpp"

#include "tests/tools/cli_runner.hpp"

namespace hetstencil {
namespace {

namespace fs = std::filesystem;

using CliRun = test::CliResult;

// A cache and a folder for the files it writes of the test's own (each test
// runs in a process of its own): no test reads or writes the user's profile.
fs::path test_cache() { return test::own_folder("hetstencil_cli_cache"); }
fs::path test_folder() { return test::own_folder("hetstencil_cli_files"); }

CliRun run_cli(const std::string& args) { return test::run_command_line(HETSTENCIL_CLI, args, test_cache()); }

// Plots are drawn by python3-matplotlib, which tools/setup.sh installs; a
// machine without it (the GPU image) skips the tests that draw.
bool can_plot() {
  return std::system("p=python3; [ -x /usr/bin/python3 ] && p=/usr/bin/python3; $p -c 'import matplotlib' >/dev/null 2>&1") == 0;
}

void expect_failure(const std::string& args, const std::string& message_part) {
  const CliRun r = run_cli(args);
  EXPECT_NE(r.exit_code, 0) << args;
  EXPECT_NE(r.err.find(message_part), std::string::npos) << args << "\nstderr: " << r.err;
}

TEST(Cli, BadInputGivesAClearMessageAndNonZeroExit) {
  expect_failure("solve --nx 0", "--nx");
  expect_failure("solve --nx -4", "--nx");
  expect_failure("solve --ny abc", "--ny");
  expect_failure("solve --precision half", "--precision");
  expect_failure("solve --tol 0", "--tol");
  expect_failure("solve --tol -1e-3", "--tol");
  expect_failure("solve --nx 4 --ny 2 --cpu-devices 3 --devices cpu --no-calibrate", "more devices (3) than rows (2)");
  expect_failure("solve --iters", "--iters");
  expect_failure("explode", "explode");
  expect_failure("bench variants --gpu 99 --sizes 64", "no CUDA device 99");
  expect_failure("bench variants --alphas 0", "--alphas");
  if (load_topology().gpus.empty()) expect_failure("bench scaling --nx 64 --iters 2", "bench scaling needs GPUs");
  expect_failure("solve --nx 8 --variant async2 --cpu-devices 2 --devices cpu", "runs on one GPU alone");
  expect_failure("solve --nx 8 --variant blocked --depth 5 --cpu-devices 2 --devices cpu --rows 4,4", "has 4");
  expect_failure("solve --nx 8 --variant blocked --depth 40", "--depth");
  expect_failure("solve --nx 8 --variant wild", "--variant");
}

TEST(Cli, ProbeDescribesMachinesFromFilesAndRefusesBadOnes) {
  const std::string fixture = std::string(HETSTENCIL_FIXTURES) + "/topology/two_sockets_four_gpus.xml";
  const CliRun r = run_cli("probe --json --topology " + fixture);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["sockets"].size(), 2u);
  EXPECT_EQ(j["sockets"][0]["numa_nodes"].size(), 1u);
  EXPECT_EQ(j["sockets"][0]["cores"].size(), 8u);
  ASSERT_EQ(j["gpus"].size(), 4u);
  EXPECT_EQ(j["gpus"][3]["numa_node"], 1);
  EXPECT_GT(j["gpus"][0]["memory_bytes"].get<double>(), 1e11);
  EXPECT_FALSE(j["gpus"][0]["uuid"].get<std::string>().empty());
  ASSERT_EQ(j["devices"].size(), 6u);
  EXPECT_EQ(j["devices"][5]["name"], "gpu3");
  EXPECT_EQ(j["schema"], "hetstencil-probe");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["hetstencil_version"], version());

  const CliRun text = run_cli("probe --synthetic 'pack:2 numa:1 core:3 pu:1'");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("cpu1"), std::string::npos) << text.out;

  // The same messages whether or not hwloc was built with its XML plugin.
  expect_failure("probe --topology /nonexistent/machine.xml",
                 "topology file '/nonexistent/machine.xml' does not exist");
  const std::string source_file = std::string(HETSTENCIL_FIXTURES) + "/../tools/test_cli.cpp";
  expect_failure("probe --topology " + source_file,
                 "topology file '" + source_file + "' is not an hwloc XML topology (no <topology> element)");
  expect_failure("probe --topology " + test_folder().string(), "' is a directory");
  const fs::path truncated = test_folder() / "truncated.xml";
  std::ofstream(truncated) << "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n  <object type=\"Machine\"";
  expect_failure("probe --topology " + truncated.string(),
                 "topology file '" + truncated.string() + "' is not a valid hwloc XML topology");
  expect_failure("probe --synthetic 'pack:zero'", "'pack:zero' is not an hwloc synthetic topology");
  expect_failure("probe --topology " + fixture + " --devices gpu9", "no device 'gpu9'");
  expect_failure("solve --devices cpu5", "no device 'cpu5'");
}

TEST(Cli, UnwritableOutputFailsBeforeSolvingAndWritesNothing) {
  const CliRun r = run_cli("solve --nx 8 --iters 5 --output /nonexistent-dir/u.npy");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("/nonexistent-dir/u.npy"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("iterations in"), std::string::npos) << "it solved before failing:\n" << r.out;
  EXPECT_FALSE(fs::exists("/nonexistent-dir"));
}

TEST(Cli, HelpExplainsEveryOption) {
  const CliRun r = run_cli("solve --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* option : {"--nx", "--ny", "--precision", "--iters", "--tol", "--check-every", "--cpu-devices",
                             "--threads", "--output", "--json", "--split", "--rows", "--plan", "--no-calibrate",
                             "--variant", "--alpha", "--depth"}) {
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
  }
}

// A profile calibrated while the host ran at another speed: a sweep compares
// its canaries with the one the calibration kept, and says which way it was.
// A small sweep of two CPU devices, and the one profile its calibration
// wrote (empty, after a failed assertion, where it wrote none or several).
const std::string kSmallSweep = "sweep --nx 24 --ny 16 --iters 5 --cpu-devices 2 --devices cpu --threads 1 "
                                "--from 0.25 --to 0.75 --step 0.25 --repeats 1";
fs::path calibrated_profile() {
  const CliRun calibrated = run_cli(kSmallSweep + " --budget 60");
  EXPECT_EQ(calibrated.exit_code, 0) << calibrated.err << calibrated.out;
  std::vector<fs::path> profiles;
  for (const auto& e : fs::directory_iterator(test_cache() / "hetstencil")) {
    if (e.path().extension() == ".json") profiles.push_back(e.path());
  }
  EXPECT_EQ(profiles.size(), 1u);
  return profiles.size() == 1u ? profiles[0] : fs::path();
}

TEST(Cli, ASweepSaysWhenTheHostRanAtAnotherSpeedAsItWasCalibrated) {
  const fs::path profile = calibrated_profile();
  ASSERT_FALSE(profile.empty());
  const auto with_canary = [&](double bytes_per_s) {
    std::ifstream in(profile);
    auto j = nlohmann::json::parse(in);
    EXPECT_GT(j.at("canary_bytes_per_s").get<double>(), 0.0) << "the calibration keeps its canary";
    j["canary_bytes_per_s"] = bytes_per_s;
    std::ofstream(profile) << j.dump(2);
    return run_cli(kSmallSweep + " --no-calibrate");
  };
  const CliRun fast = with_canary(1e15);  // no host copies a petabyte a second
  ASSERT_EQ(fast.exit_code, 0) << fast.err;
  EXPECT_NE(fast.out.find("the host was faster then"), std::string::npos) << fast.out;
  const CliRun slow = with_canary(1.0);
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  EXPECT_NE(slow.out.find("the host was slower then"), std::string::npos) << slow.out;
}

// A CPU curve that sweeps 8 rows or fewer at half the pace a row of 12 (a
// cache's edge between them): the sweep gives the points whose slabs fit the
// cache their second pace, counts them, and judges each against the nearer.
TEST(Cli, ASweepGivesASlabThatFitsACacheThePacePastIt) {
  const fs::path profile = calibrated_profile();
  ASSERT_FALSE(profile.empty());
  {
    std::ifstream in(profile);
    auto j = nlohmann::json::parse(in);
    int cpus = 0;
    for (auto& [name, device] : j.at("devices").items()) {
      if (device.at("kind") != "cpu") continue;
      ++cpus;
      device["rates"]["double/24"] = nlohmann::json::array({{2, 2e-5}, {8, 8e-5}, {12, 24e-5}, {16, 32e-5}});
      device.erase("rest");  // priced by the curve alone
      device.erase("rest_rows");
    }
    EXPECT_EQ(cpus, 2) << j.dump(2);
    std::ofstream(profile) << j.dump(2);
  }
  const fs::path json = test_folder() / "cached-sweep.json";
  const CliRun r = run_cli(kSmallSweep + " --no-calibrate --json " + json.string());
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("with the CPU slab that fits a cache swept at the pace past it"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("points give a CPU device rows that its curve sweeps in a cache"), std::string::npos) << r.out;
  std::ifstream in(json);
  const auto j = nlohmann::json::parse(in);
  int cached = 0;
  for (const auto& pt : j.at("points")) {
    if (pt.at("uncached_iteration_s").is_null()) continue;
    ++cached;
    const double more = pt.at("uncached_iteration_s").get<double>() - pt.at("predicted_iteration_s").get<double>();
    if (pt.at("point") == "sweep" && pt.at("share").get<double>() == 0.5) {
      EXPECT_NEAR(more, 8e-5, 1e-9) << "8 rows each, 1e-5 s a row more at the 12-row point's pace: " << pt.dump();
    } else {
      EXPECT_GE(more, 0.0) << "the device with 12 rows may set the iteration at either pace: " << pt.dump();
    }
  }
  EXPECT_GE(cached, 3) << "the three shares each give a device 4 or 8 rows: " << j.dump(2);
  EXPECT_LE(j.at("worst_nearer_error_percent").get<double>(), j.at("worst_error_percent").get<double>());

  // A solve's report gives the second pace too.
  const CliRun solve = run_cli("solve --nx 24 --ny 16 --iters 5 --cpu-devices 2 --devices cpu --threads 1 --no-calibrate "
                               "--no-learn --rows 8,8");
  ASSERT_EQ(solve.exit_code, 0) << solve.err << solve.out;
  EXPECT_NE(solve.out.find("a CPU slab fits a cache in its curve: at the pace past it"), std::string::npos) << solve.out;

  // So does a saved plan, per device and for the iteration.
  // Iterations enough that the sweeps, not a device's set-up, decide the split.
  const CliRun plan = run_cli("plan --nx 24 --ny 16 --iters 100000 --precision double --json");
  ASSERT_EQ(plan.exit_code, 0) << plan.err << plan.out;
  const auto saved = nlohmann::json::parse(plan.out);
  int priced = 0;
  for (const auto& d : saved.at("devices")) {
    if (d.at("uncached_compute_s").is_null()) continue;
    ++priced;
    EXPECT_GT(d.at("uncached_compute_s").get<double>(), 1.4 * d.at("compute_s").get<double>()) << d.dump();
  }
  EXPECT_GE(priced, 1) << saved.dump(2);
  EXPECT_GT(saved.at("uncached_iteration_s").get<double>(), saved.at("iteration_s").get<double>()) << saved.dump(2);
}

TEST(Cli, WithoutAProfileSolveCalibratesFirstAndSaysSo) {
  const std::string machine = " --cpu-devices 2 --devices cpu --threads 1";
  const CliRun even = run_cli("solve --nx 16 --iters 3 --no-calibrate" + machine);
  ASSERT_EQ(even.exit_code, 0) << even.err;
  EXPECT_NE(even.out.find("split: even"), std::string::npos) << even.out;
  EXPECT_FALSE(fs::exists(test_cache() / "hetstencil")) << "--no-calibrate wrote a profile";

  const CliRun first = run_cli("solve --nx 16 --iters 3" + machine);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("calibrating first"), std::string::npos) << first.err;
  EXPECT_NE(first.err.find("calibrated in"), std::string::npos) << first.err;
  EXPECT_NE(first.out.find("split: planned from"), std::string::npos) << first.out;
  // The profile now covers the problem: the next solve plans without calibrating.
  const CliRun second = run_cli("solve --nx 16 --iters 3" + machine);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.err.find("calibrating"), std::string::npos) << second.err;
  EXPECT_NE(second.out.find("split: planned from"), std::string::npos) << second.out;
}

TEST(Cli, JsonReportPutsThePredictionBesideTheMeasurement) {
  const CliRun r = run_cli("solve --nx 17 --ny 9 --iters 12 --cpu-devices 2 --devices cpu --threads 1 --precision float --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "hetstencil-report");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["hetstencil_version"], hetstencil::version());
  EXPECT_EQ(j["iterations"], 12);
  EXPECT_EQ(j["nx"], 17);
  EXPECT_EQ(j["precision"], "float");
  // On 9 rows the plan may leave a device out; if so, it says why.
  EXPECT_EQ(j["devices"].size() + j["left_out"].size(), 2u) << r.out;
  int rows = 0;
  for (const auto& d : j["devices"]) {
    rows += d["rows"].get<int>();
    EXPECT_FALSE(d["name"].get<std::string>().empty());
    EXPECT_GT(d["predicted_iteration_s"].get<double>(), 0.0) << d;
    EXPECT_GT(d["measured_iteration_s"].get<double>(), 0.0) << d;
  }
  EXPECT_EQ(rows, 9);
  for (const auto& l : j["left_out"]) EXPECT_FALSE(l["reason"].get<std::string>().empty());
  EXPECT_GT(j["predicted_s"].get<double>(), 0.0);
  EXPECT_GT(j["measured_s"].get<double>(), 0.0);
  EXPECT_GT(j["residual"]["l2"].get<double>(), 0.0);
  EXPECT_EQ(j["split"].get<std::string>().rfind("planned from", 0), 0u) << j["split"];

  // Without a model there is nothing to predict: null, not a made-up number.
  const CliRun bare = run_cli("solve --nx 17 --ny 9 --iters 2 --cpu-devices 2 --devices cpu --json --split 1,1");
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  const auto b = nlohmann::json::parse(bare.out);
  EXPECT_TRUE(b["devices"][0]["predicted_iteration_s"].is_null()) << bare.out;
  EXPECT_TRUE(b["predicted_s"].is_null()) << bare.out;
}

TEST(Cli, ForcedSplitsRunAsGiven) {
  const std::string machine = " --cpu-devices 2 --devices cpu --threads 1 --json --no-calibrate";
  const auto rows_of = [](const CliRun& r) {
    std::vector<std::int64_t> rows;
    const auto j = nlohmann::json::parse(r.out);
    for (const auto& d : j["devices"]) rows.push_back(d["rows"].get<std::int64_t>());
    return rows;
  };
  const CliRun shares = run_cli("solve --nx 8 --ny 40 --iters 4 --split 0.25,0.75" + machine);
  ASSERT_EQ(shares.exit_code, 0) << shares.err;
  EXPECT_EQ(rows_of(shares), (std::vector<std::int64_t>{10, 30}));
  const CliRun one = run_cli("solve --nx 8 --ny 40 --iters 4 --split 0,1" + machine);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(rows_of(one), (std::vector<std::int64_t>{40})) << "a zero share leaves the device out";
  const CliRun rows = run_cli("solve --nx 8 --ny 40 --iters 4 --rows 7,33" + machine);
  ASSERT_EQ(rows.exit_code, 0) << rows.err;
  EXPECT_EQ(rows_of(rows), (std::vector<std::int64_t>{7, 33}));

  expect_failure("solve --nx 8 --split 1" + machine, "--split gives 1 values for 2 devices");
  expect_failure("solve --nx 8 --split 0,0" + machine, "add up to 0");
  expect_failure("solve --nx 8 --split -1,2" + machine, "--split: must be a number from 0 to");
  expect_failure("solve --nx 8 --split a,b" + machine, "--split");
  expect_failure("solve --nx 8 --rows 3,3" + machine, "covers rows 1..6 of 8");
  expect_failure("solve --nx 8 --rows 4,4 --split 1,1" + machine, "excludes");
}

TEST(Cli, SolveRunsASavedPlan) {
  const std::string machine = " --cpu-devices 2 --devices cpu --threads 1";
  ASSERT_EQ(run_cli("calibrate --nx 48 --budget 3" + machine).exit_code, 0);
  const fs::path file = test_folder() / "plan.json";
  const CliRun plan = run_cli("plan --json --nx 48 --ny 30 --iters 10 --devices cpu0,cpu1");
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  std::ofstream(file) << plan.out;
  const auto saved = nlohmann::json::parse(plan.out);

  const CliRun r = run_cli("solve --iters 10 --json --plan " + file.string() + machine);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["nx"], 48) << "the plan's grid";
  EXPECT_EQ(j["ny"], 30);
  ASSERT_EQ(j["devices"].size(), saved["devices"].size());
  for (std::size_t k = 0; k < saved["devices"].size(); ++k) {
    EXPECT_EQ(j["devices"][k]["name"], saved["devices"][k]["name"]);
    EXPECT_EQ(j["devices"][k]["rows"], saved["devices"][k]["rows"]);
  }
  EXPECT_NE(j["split"].get<std::string>().find("saved plan"), std::string::npos);

  expect_failure("solve --nx 64 --plan " + file.string() + machine, "contradicts the plan");
  std::ofstream(test_folder() / "bad.json") << R"({"nx": 4, "ny": 4, "precision": "double", "devices": [{"name": "cpu0", "rows": 3}]})";
  expect_failure("solve --plan " + (test_folder() / "bad.json").string() + machine, "add up to 3, not its ny = 4");
}

// The study's experiment, on CPU devices: every split runs, each gives the
// reference's bits, and the CSV and the plot are written. Times are printed by
// the command, never asserted.
TEST(Cli, SweepRunsEverySplitAndDrawsIt) {
  if (!can_plot()) GTEST_SKIP() << "python3-matplotlib is not installed (tools/setup.sh installs it)";
  const fs::path csv = test_folder() / "sweep.csv";
  const CliRun r = run_cli("sweep --nx 40 --ny 30 --iters 15 --cpu-devices 3 --devices cpu --threads 1 --budget 60 --verify "
                           "--from 0 --to 0.5 --step 0.1 --csv " + csv.string() + " --plot " +
                           (test_folder() / "sweep.png").string() + " --json " + (test_folder() / "sweep.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::cout << r.out;
  EXPECT_NE(r.out.find("every split bitwise equal to the reference: yes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model's split"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("measured best"), std::string::npos) << r.out;

  std::ifstream in(csv);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line, "point,share,cpu0_rows,cpu1_rows,cpu2_rows,predicted_iteration_s,measured_iteration_s,measured_min_s,"
                  "measured_max_s,error_percent,disturbed,same_bits,uncached_iteration_s");
  int sweep = 0, model = 0, cached = 0;
  std::vector<std::int64_t> cpu0_rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    ASSERT_TRUE(cells.size() == 12u || cells.size() == 13u) << "the last cell empty where no slab fits a cache: " << line;
    EXPECT_EQ(std::stoll(cells[2]) + std::stoll(cells[3]) + std::stoll(cells[4]), 30) << line;
    EXPECT_GT(std::stod(cells[5]), 0.0) << "predicted: " << line;
    EXPECT_GT(std::stod(cells[6]), 0.0) << "measured: " << line;
    EXPECT_LE(std::stod(cells[7]), std::stod(cells[6])) << "fastest run, median: " << line;
    EXPECT_GE(std::stod(cells[8]), std::stod(cells[6])) << "slowest run, median: " << line;
    EXPECT_TRUE(cells[10] == "yes" || cells[10] == "no") << "disturbed: " << line;
    EXPECT_EQ(cells[11], "yes") << line;
    if (cells.size() == 13u) {
      ++cached;
      EXPECT_GE(std::stod(cells[12]), std::stod(cells[5])) << "the pace past a cache is the slower: " << line;
    }
    if (cells[0] == "sweep") {
      ++sweep;
      cpu0_rows.push_back(std::stoll(cells[2]));
    }
    model += cells[0] == "model" ? 1 : 0;
  }
  EXPECT_EQ(cpu0_rows, (std::vector<std::int64_t>{0, 3, 6, 9, 12, 15})) << "shares 0, 0.1, ... 0.5 of 30 rows";
  EXPECT_EQ(sweep, 6);
  EXPECT_EQ(model, 1);

  std::ifstream png(test_folder() / "sweep.png", std::ios::binary);
  char magic[8] = {};
  png.read(magic, sizeof(magic));
  EXPECT_EQ(std::string(magic + 1, 3), "PNG") << "no plot at " << (test_folder() / "sweep.png");
  EXPECT_NE(r.out.find("plot written to"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("worst point error"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("against the nearer of the two") != std::string::npos, cached > 0) << r.out;

  // The JSON: its schema, every point measured in each of the 3 rounds, a canary before each run.
  std::ifstream json_file(test_folder() / "sweep.json");
  const auto j = nlohmann::json::parse(json_file);
  EXPECT_EQ(j.at("schema"), "hetstencil-sweep");
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(j.at("points").size(), 7u);
  EXPECT_EQ(j.at("order").size(), 7u);
  EXPECT_LE(j.at("worst_nearer_error_percent").get<double>(), j.at("worst_error_percent").get<double>());
  for (const auto& pt : j.at("points")) {
    EXPECT_TRUE(pt.at("uncached_iteration_s").is_null() ||
                pt.at("uncached_iteration_s").get<double>() >= pt.at("predicted_iteration_s").get<double>())
        << pt.dump();
    EXPECT_EQ(pt.at("samples_s").size(), 3u) << pt.dump();
    EXPECT_EQ(pt.at("canary_bytes_per_s").size(), 3u) << pt.dump();
    EXPECT_GT(pt.at("canary_bytes_per_s").at(0).get<double>(), 0.0) << pt.dump();
  }

  expect_failure("sweep --nx 8 --devices cpu0 --cpu-devices 2", "two devices or more");
  expect_failure("sweep --nx 8 --cpu-devices 2 --devices cpu --vary gpu7 --no-calibrate", "--vary gpu7");
  expect_failure("sweep --nx 8 --cpu-devices 2 --devices cpu --from 0.5 --to 0.2 --no-calibrate", "--from");
  expect_failure("sweep --nx 8 --cpu-devices 2 --devices cpu --csv /nonexistent-dir/s.csv", "/nonexistent-dir");
}

// Planned sync and blocked solves (blocked: 3-deep ghost zones, rows traded
// every 3 iterations) both write the reference's bits.
TEST(Cli, OutputHoldsTheReferenceSolution) {
  Problem p;
  p.nx = 13;
  p.ny = 11;
  p.stop.max_iterations = 25;
  p.boundary = Boundary::constant(1.0);
  const auto want = solve_reference(p).grid<double>().values();
  for (const std::string variant : {"", " --variant blocked --depth 3"}) {
    SCOPED_TRACE(variant);
    const fs::path path = fs::temp_directory_path() / ("hetstencil_cli_" + std::to_string(getpid()) + ".npy");
    const CliRun r = run_cli("solve --nx 13 --ny 11 --iters 25 --cpu-devices 3 --devices cpu --budget 60 --boundary 1 --output " +
                             path.string() + variant);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("split: planned from"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("sweep blocked (depth 3)") != std::string::npos, !variant.empty()) << r.out;
    std::ifstream in(path, std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    fs::remove(path);
    const std::size_t header = 10 + (static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8));
    ASSERT_EQ(bytes.size(), header + want.size() * sizeof(double));
    EXPECT_EQ(std::memcmp(bytes.data() + header, want.data(), want.size() * sizeof(double)), 0);
  }
}

TEST(Cli, CalibrateShowPredictAndLearn) {
  const fs::path cache = test_cache();
  fs::remove_all(cache);
  const std::string machine = " --cpu-devices 2 --devices cpu --threads 1";
  const CliRun cal = run_cli("calibrate --nx 64 --budget 3" + machine);
  ASSERT_EQ(cal.exit_code, 0) << cal.err;
  EXPECT_NE(cal.out.find("calibrated in"), std::string::npos) << cal.out;
  const CliRun show = run_cli("profile show --json");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  const auto j = nlohmann::json::parse(show.out);
  // Devices are kept by what they are (see device_key), each with its name.
  std::map<std::string, std::string> key_of;
  for (const auto& [key, d] : j["devices"].items()) key_of[d["name"].get<std::string>()] = key;
  for (const char* device : {"cpu0", "cpu1"}) {
    ASSERT_TRUE(key_of.count(device)) << show.out;
    EXPECT_GE(j["devices"][key_of[device]]["rates"]["double/64"].size(), 2u) << device;
    EXPECT_GE(j["devices"][key_of[device]]["checks"]["double/64"].size(), 2u) << device;
  }
  EXPECT_TRUE(j["links"].contains(key_of["cpu0"] + "->" + key_of["cpu1"]));

  const CliRun pred = run_cli("predict --nx 64 --iters 10 --rows 20,44" + machine);
  ASSERT_EQ(pred.exit_code, 0) << pred.err;
  EXPECT_NE(pred.out.find("ms an iteration"), std::string::npos) << pred.out;
  expect_failure("predict --nx 64 --rows 20,20" + machine, "add up to 40");
  expect_failure("predict --nx 64 --rows 64" + machine, "1 counts for 2 devices");

  // A run more than 4 times off its curve is taken for a spike and teaches
  // nothing: on a loaded 2-core machine one run of a 64 x 64 grid in the cache
  // took 19 times its curve's time. Three runs give learning its chance.
  CliRun solve;
  for (int run = 0; run < 3 && solve.out.find("updated from this run") == std::string::npos; ++run) {
    solve = run_cli("solve --nx 64 --iters 20" + machine);
    ASSERT_EQ(solve.exit_code, 0) << solve.err;
  }
  EXPECT_NE(solve.out.find("updated from this run"), std::string::npos) << solve.out;
  EXPECT_NE(solve.out.find("split: planned from"), std::string::npos) << solve.out;
  const CliRun planned = run_cli("solve --nx 64 --iters 20 --json --no-learn" + machine);
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  const auto pj = nlohmann::json::parse(planned.out);
  EXPECT_EQ(pj["split"].get<std::string>().rfind("planned from", 0), 0u) << pj["split"];
  EXPECT_GT(pj["predicted_iteration_s"].get<double>(), 0.0);
  std::int64_t rows = 0;
  for (const auto& d : pj["devices"]) rows += d["rows"].get<std::int64_t>();
  EXPECT_EQ(rows, 64);
  // Neighbours wait for each other: a device given few rows is predicted to
  // wait as long as the other sweeps, as its measured figures count it.
  const CliRun lopsided = run_cli("solve --nx 64 --iters 20 --json --no-learn --rows 4,60" + machine);
  ASSERT_EQ(lopsided.exit_code, 0) << lopsided.err;
  const auto lj = nlohmann::json::parse(lopsided.out)["devices"];
  ASSERT_EQ(lj.size(), 2u);
  EXPECT_LT(lj[0]["predicted_iteration_compute_s"].get<double>(), lj[1]["predicted_iteration_compute_s"].get<double>());
  EXPECT_NEAR(lj[0]["predicted_iteration_s"].get<double>(), lj[1]["predicted_iteration_s"].get<double>(), 1e-12);
  for (const auto& d : lj) {
    EXPECT_NEAR(d["predicted_iteration_s"].get<double>(),
                d["predicted_iteration_compute_s"].get<double>() + d["predicted_iteration_exposed_s"].get<double>(), 1e-12);
  }

  // A corrupt profile is ignored with a warning, never a crash.
  for (const auto& entry : fs::directory_iterator(cache / "hetstencil")) std::ofstream(entry.path()) << "{ broken";
  expect_failure("profile show", "no usable profile");
  const CliRun after = run_cli("solve --nx 64 --iters 5" + machine);
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_NE(after.err.find("unusable"), std::string::npos) << after.err;
  fs::remove_all(cache);
}

TEST(Cli, PlansForAMachineWeDoNotHave) {
  const std::string profile = std::string(HETSTENCIL_FIXTURES) + "/profiles/eight_gpus_two_sockets.json";
  const CliRun r = run_cli("plan --json --nx 16384 --iters 1000 --profile " + profile);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::int64_t rows = 0, gpu_min = 1 << 30, gpu_max = 0;
  int gpus = 0;
  for (const auto& d : j["devices"]) {
    rows += d["rows"].get<std::int64_t>();
    if (d["name"].get<std::string>().rfind("gpu", 0) == 0) {
      ++gpus;
      gpu_min = std::min(gpu_min, d["rows"].get<std::int64_t>());
      gpu_max = std::max(gpu_max, d["rows"].get<std::int64_t>());
    }
  }
  EXPECT_EQ(rows, 16384);
  EXPECT_EQ(gpus, 8);
  EXPECT_LE(gpu_max - gpu_min, 1) << "equal GPUs get equal shares";
  EXPECT_GT(j["total_s"].get<double>(), 0.0);

  const CliRun small = run_cli("plan --nx 16384 --ny 1024 --iters 1000 --devices cpu0,gpu0,gpu1 --profile " + profile);
  ASSERT_EQ(small.exit_code, 0) << small.err;
  EXPECT_NE(small.out.find("left out: cpu0"), std::string::npos) << small.out;
  expect_failure("plan --nx 64 --profile /nonexistent/profile.json", "no usable profile");
  expect_failure("plan --nx 64 --devices gpu9 --profile " + profile, "no device 'gpu9'");
}

// The variants' plot from a CSV as `bench variants` writes it (the bench itself
// needs a GPU).
TEST(Cli, VariantsPlotIsDrawnFromTheBenchCsv) {
  if (!can_plot()) GTEST_SKIP() << "python3-matplotlib is not installed (tools/setup.sh installs it)";
  const fs::path csv = test_folder() / "variants.csv";
  std::ofstream(csv) << "n,variant,param,run,iterations,iteration_ratio,seconds,speedup,per_iteration_speedup,error,same_bits\n"
                        "64,sync,0,0,100,1,0.01,1,1,0.2,\n"
                        "64,async2,4,0,110,1.1,0.008,1.25,1.4,0.19,\n"
                        "64,async2,4,1,120,1.2,0.009,1.11,1.3,0.19,\n"
                        "64,async3,4,0,80,0.8,0.007,1.43,1.1,0.19,\n"
                        "64,blocked,4,0,100,1,0.006,1.67,1.67,0.2,yes\n";
  const fs::path png = test_folder() / "variants.png";
  const std::string command = "/usr/bin/python3 " + std::string(HETSTENCIL_TOOLS) + "/plot_variants.py " + csv.string() +
                              " " + png.string() + " --title test";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream in(png, std::ios::binary);
  char magic[4] = {};
  in.read(magic, sizeof(magic));
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
}

}  // namespace
}  // namespace hetstencil
