// The command line's stencils: --stencil and --nz on solve/plan/predict, the
// reference through solve --reference, the stencils command, and their messages.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "hetstencil/stencil.hpp"
#include "tests/tools/cli_runner.hpp"

namespace hetstencil {
namespace {

namespace fs = std::filesystem;

const std::string kExamples = std::string(HETSTENCIL_TOOLS) + "/../examples/stencils";
const std::string kProfile = std::string(HETSTENCIL_FIXTURES) + "/profiles/eight_gpus_two_sockets.json";

test::CliResult run(const std::string& args) {
  return test::run_command_line(HETSTENCIL_CLI, args, test::own_folder("hetstencil_cli_stencils_cache"));
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(CliStencils, ListsTheBuiltins) {
  const auto r = run("stencils");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"poisson5", "box9", "poisson7", "box27", "star4"}) EXPECT_TRUE(has(r.out, name)) << r.out;
}

TEST(CliStencils, ShowsOneWithItsRadiusAndPoints) {
  const auto r = run("stencils star4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "star4: 3-D, radius 4, 24 points, d = 43050, s = 5040 h^2")) << r.out;
  const auto file = run("stencils " + kExamples + "/cross9.json --json");
  ASSERT_EQ(file.exit_code, 0) << file.err;
  EXPECT_TRUE(has(file.out, "\"schema\": \"hetstencil-stencil\"")) << file.out;
  EXPECT_TRUE(has(file.out, "\"name\": \"cross9\"")) << file.out;
}

// How much a sweep may grow the error, and what that means for Jacobi.
TEST(CliStencils, SaysWhetherItsJacobiSweepsDiverge) {
  const auto star4 = run("stencils star4");
  ASSERT_EQ(star4.exit_code, 0) << star4.err;
  char growth[32];
  std::snprintf(growth, sizeof growth, "%.4f", jacobi_growth(Stencil::builtin("star4")));
  EXPECT_TRUE(has(star4.out, std::string("Jacobi: a sweep multiplies an error mode by up to ") + growth +
                                 ": its sweeps diverge"))
      << star4.out;
  const auto box9 = run("stencils box9");
  ASSERT_EQ(box9.exit_code, 0) << box9.err;
  EXPECT_TRUE(has(box9.out, "by up to 1.0000: its sweeps do not grow the error")) << box9.out;
}

TEST(CliStencils, ABadFileIsRefusedNamingTheFileAndTheField) {
  const fs::path bad = test::own_folder("hetstencil_cli_stencils") / "bad.json";
  {
    std::ofstream out(bad);
    out << R"({"name": "bad", "dimension": 2, "diagonal": 4,
              "points": [{"offset": [1, 0], "weight": 1}, {"offset": [0, 9], "weight": 1}]})";
  }
  for (const char* command : {"stencils ", "solve --reference --nx 8 --stencil "}) {
    const auto r = run(std::string(command) + bad.string());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(has(r.err, bad.string() + ": points[1].offset: dy = 9 is beyond radius 4")) << r.err;
  }
  const auto unknown = run("stencils poisson9");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(has(unknown.err, "no built-in stencil is called 'poisson9' and no stencil file can be opened there"))
      << unknown.err;
}

TEST(CliStencils, TheCpuDevicesSolveAnyStencilAsTheReferenceDoes) {
  const fs::path folder = test::own_folder("hetstencil_cli_stencils");
  const std::string grid = " --stencil poisson7 --nx 9 --ny 7 --nz 8 --iters 6 -o ";
  const auto reference = run("solve --reference" + grid + (folder / "reference.npy").string());
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  const auto devices = run("solve --devices cpu --cpu-devices 2 --rows 3,5 --no-learn" + grid + (folder / "devices.npy").string());
  ASSERT_EQ(devices.exit_code, 0) << devices.err;
  EXPECT_EQ(test::read_all(folder / "devices.npy"), test::read_all(folder / "reference.npy"));
  EXPECT_TRUE(has(devices.out, "9 x 7 x 8 double: 6 iterations")) << "the report names the planes: " << devices.out;
  const auto even = run("solve --cpu-devices 2 --no-calibrate --no-learn --stencil box9 --nx 16 --iters 2");
  ASSERT_EQ(even.exit_code, 0) << even.err;
  EXPECT_TRUE(has(even.out, "even over the devices with a kernel for the stencil 'box9'") ||
              has(even.out, "box9 not measured on rows of 16: estimated"))
      << "even, or estimated from this machine's poisson5 curves: " << even.out;
}

TEST(CliStencils, TheModelEstimatesAStencilItNeverMeasuredAndSaysSo) {
  const std::string estimated = "box9 not measured on rows of 64: estimated by time per cell";
  const auto plan = run("plan --stencil box9 --nx 64 --iters 10 --profile " + kProfile);
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_TRUE(has(plan.out, estimated)) << plan.out;
  EXPECT_TRUE(has(plan.out, "scaled by cell cost")) << plan.out;
  EXPECT_FALSE(has(plan.out, "gpu0 ")) << "only poisson5's tuned GPU kernel measured: no box9 to plan with: " << plan.out;
  const auto predict = run("predict --stencil box9 --nx 64 --iters 10 --devices cpu0,cpu1 --profile " + kProfile);
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  EXPECT_TRUE(has(predict.out, estimated)) << predict.out;
  const auto gpu = run("predict --stencil box9 --nx 64 --iters 10 --devices cpu0,gpu0 --profile " + kProfile);
  EXPECT_EQ(gpu.exit_code, 2);
  EXPECT_TRUE(has(gpu.err, "the profile has no double rate curve for gpu0")) << gpu.err;
}

TEST(CliStencils, TheReferenceSolvesA3dStencilAndWritesA3dArray) {
  const fs::path out = test::own_folder("hetstencil_cli_stencils") / "u.npy";
  const auto r = run("solve --reference --stencil poisson7 --nx 8 --nz 6 --iters 5 --json -o " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "\"schema\": \"hetstencil-report\"") || has(r.out, "\"schema\":\"hetstencil-report\"")) << r.out;
  EXPECT_TRUE(has(test::read_all(out), "'shape': (8, 10, 10)"));  // nz + 2, ny + 2, nx + 2
}

TEST(CliStencils, A3dGridNotSizedIs256ASide) {
  const auto plan = run("plan --stencil poisson7 --iters 10 --profile " + kProfile);
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_TRUE(has(plan.out, "256 x 256 x 256")) << plan.out;
  const auto flat = run("plan --stencil box9 --iters 10 --profile " + kProfile);
  ASSERT_EQ(flat.exit_code, 0) << flat.err;
  EXPECT_TRUE(has(flat.out, "2048 x 2048")) << flat.out;
}

TEST(CliStencils, GridsTheHostCannotHoldAreRefusedBeforeAnyCalibration) {
  // 8192^3 doubles: 4 TiB. With no profile, a solve would measure the devices first.
  const auto r = test::run_command_line(HETSTENCIL_CLI, "solve --stencil poisson7 --nx 8192 --iters 1",
                                        test::own_folder("hetstencil_cli_stencils_no_profile"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "the host's copy of the grids needs")) << r.err;
  EXPECT_FALSE(has(r.err, "measuring its devices first")) << r.err;
  EXPECT_FALSE(has(r.err, "calibrated in")) << r.err;
}

TEST(CliStencils, ASizeOfTheOtherDimensionIsRefusedNamingBoth) {
  const auto r = run("solve --reference --stencil box9 --nx 8 --nz 4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "the stencil 'box9' is 2-D but the problem has nz = 4 planes")) << r.err;
}

}  // namespace
}  // namespace hetstencil
