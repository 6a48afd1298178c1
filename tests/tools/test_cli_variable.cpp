// A variable stencil on the command line: a JSON description with
// "variable": true and its coefficient grids from --coefficients DIR, solved
// by the reference and the CPU devices with the same bits; the refusals name
// the file or the option.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "hetstencil/npy.hpp"
#include "tests/tools/cli_runner.hpp"

namespace hetstencil {
namespace {

namespace fs = std::filesystem;


fs::path folder() { return test::own_folder("hetstencil_cli_variable"); }

// In folder(), so that the messages' paths are short enough to be shown whole.
test::CliResult run(const std::vector<std::string>& args) { return test::run_command(HETSTENCIL_CLI, args, folder()); }

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A ny x nx interior of values 1 + (k + index % 7) / 8 in `path`.
void write_field(const fs::path& path, std::int64_t ny, std::int64_t nx, int k) {
  Grid<double> g(GridShape{0, ny, nx, 0});
  for (std::size_t i = 0; i < g.values().size(); ++i) g.data()[i] = 1.0 + static_cast<double>(k + i % 7) / 8.0;
  write_npy(path.string(), g);
}

// A variable 5-point stencil, var5.json, and its five 6 x 9 grids in grids/.
void variable_files() {
  std::ofstream(folder() / "var5.json") << R"({"name": "var5", "dimension": 2, "diagonal": 4, "variable": true,
    "points": [{"offset": [0, -1], "weight": 1}, {"offset": [0, 1], "weight": 1},
               {"offset": [-1, 0], "weight": 1}, {"offset": [1, 0], "weight": 1}]})";
  fs::create_directories(folder() / "grids");
  for (int k = 0; k < 4; ++k) write_field(folder() / "grids" / ("point" + std::to_string(k) + ".npy"), 6, 9, k);
  write_field(folder() / "grids" / "diagonal.npy", 6, 9, 20);
}

TEST(CliVariable, TheCpuDevicesSolveAVariableStencilAsTheReferenceDoes) {
  variable_files();
  const std::vector<std::string> grid = {"--stencil", "var5.json", "--coefficients", "grids", "--nx", "9",
                                         "--ny", "6", "--iters", "7", "-o"};
  const auto reference = run(std::vector<std::string>{"solve", "--reference"} + grid + std::vector<std::string>{"reference.npy"});
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  const auto devices = run(std::vector<std::string>{"solve", "--devices", "cpu", "--cpu-devices", "2", "--rows", "2,4",
                                                    "--no-learn"} +
                           grid + std::vector<std::string>{"devices.npy"});
  ASSERT_EQ(devices.exit_code, 0) << devices.err;
  EXPECT_EQ(test::read_all(folder() / "devices.npy"), test::read_all(folder() / "reference.npy"));
  // Another diagonal grid, other bits: the grids are read.
  write_field(folder() / "grids" / "diagonal.npy", 6, 9, 3);
  const auto other = run(std::vector<std::string>{"solve", "--reference"} + grid + std::vector<std::string>{"other.npy"});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(test::read_all(folder() / "other.npy"), test::read_all(folder() / "reference.npy"));
}

TEST(CliVariable, TheStencilsCommandShowsTheVariableUpdate) {
  variable_files();
  const auto r = run({"stencils", "var5.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "variable: u'(p) = (sum_k w_k c_k(p) u(p + o_k) + s f(p)) / (d c_d(p))")) << r.out;
}

TEST(CliVariable, MissingOrMisshapenGridsAreRefusedNamingTheFile) {
  variable_files();
  const std::vector<std::string> solve = {"solve", "--reference", "--stencil", "var5.json"};
  const auto none = run(solve + std::vector<std::string>{"--nx", "9", "--ny", "6"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_TRUE(has(none.err, "the stencil 'var5' is variable: give its coefficient grids with --coefficients DIR "
                            "(point0.npy .. point3.npy and diagonal.npy"))
      << none.err;
  const auto shape = run(solve + std::vector<std::string>{"--nx", "6", "--ny", "9", "--coefficients", "grids"});
  EXPECT_EQ(shape.exit_code, 2);
  EXPECT_TRUE(has(shape.err, "the coefficient grid 'grids/point0.npy' has the shape (6, 9); the stencil 'var5' on "
                             "this grid needs its interior, (9, 6)"))
      << shape.err;
  fs::remove(folder() / "grids" / "diagonal.npy");
  const auto missing = run(solve + std::vector<std::string>{"--nx", "9", "--ny", "6", "--coefficients", "grids"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(has(missing.err, "'grids/diagonal.npy' cannot be opened")) << missing.err;
  const auto constant = run({"solve", "--reference", "--nx", "9", "--ny", "6", "--coefficients", "grids"});
  EXPECT_EQ(constant.exit_code, 2);
  EXPECT_TRUE(has(constant.err, "--coefficients gives a variable stencil's grids; the stencil 'poisson5' is not "
                                "variable"))
      << constant.err;
}

}  // namespace
}  // namespace hetstencil
