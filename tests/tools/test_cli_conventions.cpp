// The command line's conventions (README, "Exit codes"): one table of exit
// codes for every command, CLI11's errors included; -v anywhere; --version;
// list options as README writes them; every option's value checked with a
// message naming it; results on stdout, logs on stderr; files only where told.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "hetstencil/version.hpp"
#include "tests/tools/cli_runner.hpp"

namespace hetstencil {
namespace {

namespace fs = std::filesystem;
using test::CliResult;


constexpr int kUsage = 2;

CliResult run(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
              const fs::path& cwd = fs::temp_directory_path()) {
  return test::run_command(HETSTENCIL_CLI, args, cwd, env);
}

// A fresh, empty folder to run in.
fs::path empty_work_folder() {
  const fs::path dir = test::own_folder("hetstencil_cli_work") / ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

void expect_usage_error(const std::vector<std::string>& args, const std::string& message_part) {
  std::string line;
  for (const auto& a : args) line += "'" + a + "' ";
  const CliResult r = run(args);
  EXPECT_EQ(r.exit_code, kUsage) << line << "\nstderr: " << r.err;
  EXPECT_EQ(r.err.rfind("hetstencil: error: ", 0), 0u) << line << "\nstderr: " << r.err;
  EXPECT_NE(r.err.find(message_part), std::string::npos) << line << "\nstderr: " << r.err;
  EXPECT_TRUE(r.out.empty()) << line << "\nstdout: " << r.out;
}

// A small CPU-only machine and problem that run in a blink.
const std::vector<std::string> kSmallSolve{"--nx", "8", "--iters", "2", "--cpu-devices", "2", "--devices", "cpu",
                                           "--threads", "1", "--no-calibrate"};

std::vector<std::string> with(std::vector<std::string> head, const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

TEST(CliConventions, ParseErrorsAreUsageErrors) {
  expect_usage_error({"solve", "--bogus"}, "--bogus");                 // an unknown option
  expect_usage_error({"solve", "--iters"}, "--iters needs a value");   // a missing value
  expect_usage_error({"solve", "--nx", "0"}, "--nx: must be");         // a failed check
  expect_usage_error({"solve", "extra"}, "extra");                     // an extra positional argument
  expect_usage_error({"probe", "--topology", "a.xml", "--synthetic", "pack:1"}, "--topology");  // excluded together
  expect_usage_error({"bench"}, "name a command after 'hetstencil bench': cpu, gpu, variants, scaling, stencils");
  expect_usage_error({}, "name a command after 'hetstencil'");
  expect_usage_error({"-v"}, "name a command after 'hetstencil'");
  expect_usage_error({"explode"}, "unknown command 'explode'");
  expect_usage_error({"solve", "--json=maybe"}, "--json does not take the value 'maybe'");
  expect_usage_error({"bench", "gpu", "--sizes"}, "--sizes needs a value");
}

TEST(CliConventions, HelpAndVersionExitZero) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"solve", "--help"}, {"bench", "gpu", "--help"}, {"sweep", "-h"}, {"--version"}}) {
    const CliResult r = run(args);
    EXPECT_EQ(r.exit_code, 0) << args.front() << "\n" << r.err;
    EXPECT_FALSE(r.out.empty()) << args.front();
  }
  const CliResult help = run({"--help"});
  EXPECT_NE(help.out.find("Exit codes: 0 success; 1 run-time failure; 2 usage error"), std::string::npos) << help.out;
}

TEST(CliConventions, VersionIsTheLibrarys) {
  const std::string expected = std::string("hetstencil ") + version() + "\n";
  EXPECT_EQ(run({"--version"}).out, expected);
  EXPECT_EQ(run({"solve", "--version"}).out, expected) << "--version after the command";
  EXPECT_EQ(std::string(version()), HETSTENCIL_VERSION_STRING);
  EXPECT_EQ(std::string(version()), std::to_string(HETSTENCIL_VERSION_MAJOR) + "." +
                                        std::to_string(HETSTENCIL_VERSION_MINOR) + "." +
                                        std::to_string(HETSTENCIL_VERSION_PATCH));
}

TEST(CliConventions, VerboseWorksBeforeAndAfterTheCommand) {
  for (const auto& args : {with({"-v", "solve"}, kSmallSolve), with({"solve", "-v"}, kSmallSolve),
                           with(with({"solve"}, kSmallSolve), {"--verbose"})}) {
    const CliResult r = run(args);
    ASSERT_EQ(r.exit_code, 0) << args[0] << " " << args[1] << "\n" << r.err;
    EXPECT_NE(r.err.find("[debug]"), std::string::npos) << "no log on stderr with " << args[0] << " " << args[1];
    EXPECT_EQ(r.out.find("[debug]"), std::string::npos) << "a log on stdout:\n" << r.out;
    EXPECT_NE(r.out.find("iterations in"), std::string::npos) << "the report belongs on stdout:\n" << r.out;
  }
  EXPECT_EQ(run({"bench", "cpu", "--nx", "8", "--ny", "8", "--reps", "1", "--threads", "1", "-v"}).exit_code, 0);
}

TEST(CliConventions, EveryValueIsCheckedWithAMessageNamingItsOption) {
  expect_usage_error({"solve", "--budget", "nan"}, "--budget: must be a finite number greater than 0, not 'nan'");
  expect_usage_error({"solve", "--budget", "inf"}, "--budget: must be a finite number greater than 0");
  expect_usage_error({"solve", "--tol", "nan"}, "--tol: must be a finite number greater than 0");
  expect_usage_error({"solve", "--boundary", "nan"}, "--boundary: must be a finite number");
  expect_usage_error({"solve", "--boundary", "1e999"}, "--boundary: must be a finite number");
  expect_usage_error({"solve", "--output", ""}, "--output: must name a file, not ''");
  expect_usage_error({"solve", "--nx", "abc"}, "--nx: must be a whole number from 1 to 1073741824, not 'abc'");
  expect_usage_error({"solve", "--nx", "1.5"}, "--nx: must be a whole number");
  expect_usage_error({"solve", "--iters", "-1"}, "--iters: must be a whole number of at least 0, not '-1'");
  expect_usage_error({"solve", "--check-every", "0"}, "--check-every: must be a whole number of at least 1");
  expect_usage_error({"solve", "--threads", "-1"}, "--threads: must be a whole number from 0");
  expect_usage_error({"solve", "--cpu-devices", "-2"}, "--cpu-devices: must be a whole number from 0");
  expect_usage_error({"probe", "--devices", ""}, "--devices: must name devices");
  expect_usage_error({"probe", "--topology", ""}, "--topology: must name a file");
  expect_usage_error({"solve", "--precision", "half"}, "--precision: must be float or double, not 'half'");
  expect_usage_error({"solve", "--variant", "wild"}, "--variant: must be sync, async2, async3 or blocked");
  expect_usage_error({"solve", "--depth", "9"}, "--depth: must be a whole number from 1 to 8");
  expect_usage_error({"sweep", "--from", "2"}, "--from: must be a number from 0 to 1, not '2'");
  expect_usage_error({"sweep", "--step", "0"}, "--step: must be a number greater than 0 and at most 1");
  expect_usage_error({"sweep", "--repeats", "0"}, "--repeats: must be a whole number from 1");
  expect_usage_error({"sweep", "--vary", ""}, "--vary: must name a device");
  expect_usage_error({"sweep", "--csv", ""}, "--csv: must name a file");
  expect_usage_error({"bench", "cpu", "--reps", "0"}, "--reps: must be a whole number from 1");
  expect_usage_error({"bench", "cpu", "--precision", "half"}, "--precision: must be float, double or both");
  expect_usage_error({"bench", "gpu", "--sizes", "16384,0"}, "--sizes: must be a whole number from 1 to 1073741824, not '0'");
  expect_usage_error({"bench", "variants", "--alphas", "2,0"}, "--alphas: must be a whole number from 1 to 32");
  expect_usage_error({"bench", "variants", "--runs", "-3"}, "--runs: must be a whole number from 1");
  expect_usage_error({"bench", "variants", "--gpu", "-1"}, "--gpu: must be a whole number from 0");
  expect_usage_error({"bench", "scaling", "--checks", "end,often"}, "--checks: must be end, every-k, every or blocked");
  expect_usage_error({"bench", "scaling", "--gpus", "0"}, "--gpus: must be a whole number from 1");
  expect_usage_error({"bench", "scaling", "--scaling", "sideways"}, "--scaling: must be strong, weak or both");
}

TEST(CliConventions, AHugeNumberIsCutInItsMessage) {
  const std::string huge(309, '9');
  const CliResult r = run({"solve", "--nx", huge});
  EXPECT_EQ(r.exit_code, kUsage);
  EXPECT_NE(r.err.find("--nx: must be a whole number"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(309 characters)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(huge.substr(0, 100)), std::string::npos) << "echoed whole:\n" << r.err;
  EXPECT_LT(r.err.size(), 300u) << r.err;

  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"solve", huge}, {"solve", "--" + huge}, {"solve", "--tol", "1" + std::string(309, '0')},
           {"solve", "--json=x" + huge}}) {
    const CliResult cut = run(args);
    EXPECT_EQ(cut.exit_code, kUsage) << cut.err;
    EXPECT_EQ(cut.err.find(huge.substr(0, 100)), std::string::npos) << "echoed whole:\n" << cut.err;
    EXPECT_EQ(cut.err.find(std::string(100, '0')), std::string::npos) << "echoed whole:\n" << cut.err;
    EXPECT_NE(cut.err.find("characters)"), std::string::npos) << cut.err;
  }
}

TEST(CliConventions, ANumberIsReadInDecimal) {
  // 010 is ten rows, not eight (CLI11 alone would read it as octal).
  const CliResult r = run(with({"solve", "--json", "--ny", "010"}, kSmallSolve));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"ny\": 10"), std::string::npos) << r.out;
}

TEST(CliConventions, ListOptionsTakeCommaSeparatedValues) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"bench", "gpu", "--sizes", "16384,32768"},
           {"bench", "stencils", "--stencils", "box9,poisson7"},
           {"bench", "variants", "--sizes", "4096,16384", "--alphas", "2,4,8,16", "--depths", "2,4,8"},
           {"solve", "--rows", "100,900"},
           {"solve", "--split", "0.03,0.485,0.485"}}) {
    const CliResult r = run(args, {"HETSTENCIL_PARSE_ONLY=1"});
    EXPECT_EQ(r.exit_code, 0) << args[0] << " " << args[1] << " " << args[2] << "\n" << r.err;
  }
  // Run for real: on a machine without GPUs there is nothing to measure, and that is no error.
  EXPECT_EQ(run({"bench", "gpu", "--sizes", "64,128", "--reps", "1"}).exit_code, 0);
}

TEST(CliConventions, SweepWritesFilesOnlyWhereTold) {
  const std::vector<std::string> sweep =
      with(with({"sweep"}, kSmallSolve), {"--from", "0.25", "--to", "0.5", "--step", "0.25"});
  const fs::path dir = empty_work_folder();
  const CliResult bare = run(sweep, {}, dir);
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_NE(bare.out.find("measured best"), std::string::npos) << bare.out;
  EXPECT_TRUE(files_in(dir).empty()) << "a sweep without --csv or --plot wrote " << files_in(dir).front();

  const CliResult csv = run(with(sweep, {"--csv", "s.csv"}), {}, dir);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"s.csv"});
  EXPECT_EQ(test::read_all(dir / "s.csv").rfind("point,share,cpu0_rows,cpu1_rows", 0), 0u);

  expect_usage_error(with(sweep, {"--plot", "s.png"}), "--plot s.png is drawn from the CSV: give --csv FILE too");
}

TEST(CliConventions, AFailedPlotFailsTheCommandAfterTheCsv) {
  const std::vector<std::string> sweep = with(with({"sweep"}, kSmallSolve),
                                              {"--from", "0.25", "--to", "0.5", "--step", "0.25", "--csv", "s.csv",
                                               "--plot", "s.png"});
  const fs::path dir = empty_work_folder();
  const CliResult failing = run(sweep, {"HETSTENCIL_PYTHON=/bin/false"}, dir);
  EXPECT_EQ(failing.exit_code, 1) << failing.err;
  EXPECT_NE(failing.err.find("hetstencil: error: the plot s.png was not drawn: /bin/false"), std::string::npos)
      << failing.err;
  EXPECT_NE(failing.err.find("failed with exit status 1"), std::string::npos) << failing.err;
  EXPECT_TRUE(fs::exists(dir / "s.csv")) << "the CSV comes first";
  EXPECT_EQ(failing.out.find("plot written"), std::string::npos) << failing.out;

  const CliResult missing = run(sweep, {"HETSTENCIL_PYTHON=/nonexistent/python3"}, dir);
  EXPECT_EQ(missing.exit_code, 1) << missing.err;
  EXPECT_NE(missing.err.find("/nonexistent/python3 could not be run"), std::string::npos) << missing.err;

  // What the plotting script prints is a log: it goes to stderr.
  const CliResult echoed = run(sweep, {"HETSTENCIL_PYTHON=/bin/echo"}, dir);
  EXPECT_EQ(echoed.exit_code, 0) << echoed.err;
  EXPECT_NE(echoed.err.find("plot_sweep.py s.csv s.png"), std::string::npos) << echoed.err;
  EXPECT_EQ(echoed.out.find("plot_sweep.py"), std::string::npos) << echoed.out;
}

TEST(CliConventions, BenchVariantsWritesFilesOnlyWhereTold) {
  expect_usage_error({"bench", "variants", "--plot", "v.png"}, "--plot v.png is drawn from the CSV: give --csv FILE too");
  expect_usage_error({"bench", "variants", "--csv", ""}, "--csv: must name a file");
}

}  // namespace
}  // namespace hetstencil
