// The command line as a user meets it: exit codes, messages, files.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "hetstencil/reference.hpp"

namespace hetstencil {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

CliRun run_cli(const std::string& args) {
  const fs::path err_file = fs::temp_directory_path() / ("hetstencil_cli_err_" + std::to_string(getpid()));
  // A cache of the test's own: no test reads or writes the user's profile.
  const fs::path cache = fs::temp_directory_path() / ("hetstencil_cli_cache_" + std::to_string(getpid()));
  const std::string command = "XDG_CACHE_HOME=" + cache.string() + " " + std::string(HETSTENCIL_CLI) + " " + args +
                              " 2>" + err_file.string();
  CliRun r;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file);
  r.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  fs::remove(err_file);
  return r;
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
  expect_failure("solve --nx 4 --ny 2 --cpu-devices 3 --devices cpu", "more devices (3) than rows (2)");
  expect_failure("solve --iters", "--iters");
  expect_failure("explode", "explode");
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

  const CliRun text = run_cli("probe --synthetic 'pack:2 numa:1 core:3 pu:1'");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("cpu1"), std::string::npos) << text.out;

  expect_failure("probe --topology /nonexistent/machine.xml", "/nonexistent/machine.xml");
  expect_failure("probe --topology " + std::string(HETSTENCIL_FIXTURES) + "/../tools/test_cli.cpp", "not an hwloc");
  expect_failure("probe --synthetic 'pack:zero'", "synthetic");
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
                             "--threads", "--output", "--json"}) {
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
  }
}

TEST(Cli, WithoutAProfileTheSplitIsEven) {
  const CliRun r = run_cli("solve --nx 16 --iters 3 --cpu-devices 2 --devices cpu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("split: even"), std::string::npos) << r.out;
}

TEST(Cli, JsonReportDescribesTheSolve) {
  const CliRun r = run_cli("solve --nx 17 --ny 9 --iters 12 --cpu-devices 2 --devices cpu --threads 1 --precision float --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["iterations"], 12);
  EXPECT_EQ(j["nx"], 17);
  EXPECT_EQ(j["precision"], "float");
  ASSERT_EQ(j["devices"].size(), 2u);
  EXPECT_EQ(j["devices"][0]["rows"].get<int>() + j["devices"][1]["rows"].get<int>(), 9);
  EXPECT_GT(j["residual"]["l2"].get<double>(), 0.0);
}

TEST(Cli, OutputHoldsTheReferenceSolution) {
  const fs::path path = fs::temp_directory_path() / ("hetstencil_cli_" + std::to_string(getpid()) + ".npy");
  const CliRun r = run_cli("solve --nx 13 --ny 11 --iters 25 --cpu-devices 3 --devices cpu --boundary 1 --output " + path.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cpu2"), std::string::npos) << r.out;
  std::ifstream in(path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  fs::remove(path);

  Problem p;
  p.nx = 13;
  p.ny = 11;
  p.stop.max_iterations = 25;
  p.boundary = Boundary::constant(1.0);
  const auto want = solve_reference(p).grid<double>().values();
  const std::size_t header = 10 + (static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8));
  ASSERT_EQ(bytes.size(), header + want.size() * sizeof(double));
  EXPECT_EQ(std::memcmp(bytes.data() + header, want.data(), want.size() * sizeof(double)), 0);
}

TEST(Cli, CalibrateShowPredictAndLearn) {
  const fs::path cache = fs::temp_directory_path() / ("hetstencil_cli_cache_" + std::to_string(getpid()));
  fs::remove_all(cache);
  const std::string machine = " --cpu-devices 2 --devices cpu --threads 1";
  const CliRun cal = run_cli("calibrate --nx 64 --budget 3" + machine);
  ASSERT_EQ(cal.exit_code, 0) << cal.err;
  EXPECT_NE(cal.out.find("calibrated in"), std::string::npos) << cal.out;
  const CliRun show = run_cli("profile show --json");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  const auto j = nlohmann::json::parse(show.out);
  for (const char* device : {"cpu0", "cpu1"}) {
    ASSERT_TRUE(j["devices"].contains(device)) << show.out;
    EXPECT_GE(j["devices"][device]["rates"]["double/64"].size(), 2u) << device;
    EXPECT_GE(j["devices"][device]["checks"]["double/64"].size(), 2u) << device;
  }
  EXPECT_TRUE(j["links"].contains("cpu0->cpu1"));

  const CliRun pred = run_cli("predict --nx 64 --iters 10 --rows 20,44" + machine);
  ASSERT_EQ(pred.exit_code, 0) << pred.err;
  EXPECT_NE(pred.out.find("ms an iteration"), std::string::npos) << pred.out;
  expect_failure("predict --nx 64 --rows 20,20" + machine, "add up to 40");
  expect_failure("predict --nx 64 --rows 64" + machine, "1 counts for 2 devices");

  const CliRun solve = run_cli("solve --nx 64 --iters 20" + machine);
  ASSERT_EQ(solve.exit_code, 0) << solve.err;
  EXPECT_NE(solve.out.find("updated from this run"), std::string::npos) << solve.out;
  EXPECT_NE(solve.out.find("split planned from"), std::string::npos) << solve.out;
  const CliRun planned = run_cli("solve --nx 64 --iters 20 --json --no-learn" + machine);
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  const auto pj = nlohmann::json::parse(planned.out);
  EXPECT_EQ(pj["split"], "planned");
  EXPECT_GT(pj["predicted_iteration_s"].get<double>(), 0.0);
  std::int64_t rows = 0;
  for (const auto& d : pj["devices"]) rows += d["rows"].get<std::int64_t>();
  EXPECT_EQ(rows, 64);

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

}  // namespace
}  // namespace hetstencil
