// hetstencil bench stencils: a row per device, stencil and precision, its CSV's
// columns, the predictions from the profile's own curves, sets of kernel
// parameters beside the defaults, and its refusals.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/cli_runner.hpp"

namespace hetstencil {
namespace {

namespace fs = std::filesystem;

const std::string kExamples = std::string(HETSTENCIL_TOOLS) + "/../examples/stencils";
const std::string kColumns =
    "device,threads,stencil,dimension,precision,nx,ny,nz,stores,sweep_s,copy_s,sweep_GBps,sweep_over_copy,"
    "predicted_s,predicted_over_measured,default_s,tuned_over_default,tuning,skipped";

// Each test its own cache: a calibration in one must not give another a profile.
test::CliResult run(const std::string& args, const std::string& cache) {
  return test::run_command_line(HETSTENCIL_CLI, args, test::own_folder(cache));
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<std::vector<std::string>> csv_rows(const fs::path& file) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(test::read_all(file));
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::istringstream fields(line + ",");
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

TEST(CliBenchStencils, MeasuresEachStencilAndPrecisionOnEveryCpuDevice) {
  const fs::path csv = test::own_folder("hetstencil_cli_bench_stencils") / "stencils.csv";
  const auto r = run("bench stencils --nx 24 --ny 12 --nz 10 --reps 1 --cpu-devices 2 --threads 1 --devices cpu --stencils "
                     "poisson5,star4," + kExamples + "/cross9.json --csv " + csv.string(),
                     "hetstencil_cli_bench_stencils_cache");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.err, "measuring cpu1: star4 double 24x12x10")) << r.err;
  EXPECT_TRUE(has(r.out, "csv written to " + csv.string())) << r.out;
  for (const char* device : {"cpu0", "cpu1"}) {
    for (const char* stencil : {"poisson5", "star4", "cross9"}) {
      EXPECT_TRUE(has(r.out, std::string(device) + "   " + stencil)) << device << " " << stencil << "\n" << r.out;
    }
  }
  EXPECT_TRUE(has(r.out, "24x12x10")) << r.out;

  const auto rows = csv_rows(csv);
  ASSERT_EQ(rows.size(), 1u + 2 * 3 * 2) << test::read_all(csv);  // devices x stencils x precisions
  std::ostringstream header;
  for (std::size_t k = 0; k < rows[0].size(); ++k) header << (k ? "," : "") << rows[0][k];
  EXPECT_EQ(header.str(), kColumns);
  for (std::size_t k = 1; k < rows.size(); ++k) {
    const auto& row = rows[k];
    ASSERT_EQ(row.size(), rows[0].size()) << k;
    const bool three_d = row[2] == "star4";
    EXPECT_EQ(row[3], three_d ? "3" : "2");
    EXPECT_EQ(row[5] + "x" + row[6] + "x" + row[7], three_d ? "24x12x10" : "24x12x0");
    EXPECT_GT(std::stod(row[9]), 0.0) << "sweep_s of row " << k;
    EXPECT_GT(std::stod(row[12]), 0.0) << "sweep_over_copy of row " << k;
    EXPECT_EQ(row[13], "") << "no profile here: no prediction, row " << k;
    EXPECT_EQ(row[15], "") << "nothing tuned: no default time, row " << k;
    EXPECT_EQ(row[17], "") << "nothing tuned, row " << k;
    EXPECT_EQ(row[18], "") << "measured: not skipped, row " << k;
  }
  EXPECT_TRUE(has(r.out, "-          -")) << "the predictions' cells: " << r.out;
}

TEST(CliBenchStencils, PredictsFromTheProfilesOwnCurveOfTheStencil) {
  const std::string cache = "hetstencil_cli_bench_stencils_profile";
  const auto calibrated = run("calibrate --nx 256 --cpu-devices 1 --threads 1 --devices cpu", cache);
  ASSERT_EQ(calibrated.exit_code, 0) << calibrated.err;
  const fs::path csv = test::own_folder("hetstencil_cli_bench_stencils") / "predicted.csv";
  const auto r = run("bench stencils --nx 256 --ny 64 --reps 1 --cpu-devices 1 --threads 1 --devices cpu --precision double "
                     "--stencils poisson5,box9 --csv " + csv.string(),
                     cache);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = csv_rows(csv);
  ASSERT_EQ(rows.size(), 3u) << test::read_all(csv);
  EXPECT_EQ(rows[1][2], "poisson5");
  EXPECT_GT(std::stod(rows[1][13]), 0.0) << "calibrated: poisson5's curve predicts it";
  EXPECT_EQ(rows[2][2], "box9");
  EXPECT_EQ(rows[2][13], "") << "no curve of box9 in the profile";
}

TEST(CliBenchStencils, SweepsWithEachSetOfKernelParametersBesideTheDefaults) {
  const fs::path csv = test::own_folder("hetstencil_cli_bench_stencils") / "tunings.csv";
  const auto r = run("bench stencils --nx 64 --ny 16 --reps 1 --cpu-devices 1 --threads 1 --devices cpu --precision double "
                     "--stencils box9 --tuning points_per_pass=2 --tuning chunk_values=128,points_per_pass=4 "
                     "--tuning warps=2 --tuning chunk_values=100 --csv " + csv.string(),
                     "hetstencil_cli_bench_stencils_tunings");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "with the parameters of --tuning")) << r.out;
  const auto rows = csv_rows(csv);
  ASSERT_EQ(rows.size(), 5u) << test::read_all(csv);  // the header and a row a set
  for (std::size_t k : {1u, 2u}) {
    EXPECT_GT(std::stod(rows[k][9]), 0.0) << "sweep_s of row " << k;
    EXPECT_GT(std::stod(rows[k][15]), 0.0) << "the defaults measured beside, row " << k;
    EXPECT_EQ(rows[1][15], rows[k][15]) << "one measurement of the defaults for every set";
  }
  EXPECT_EQ(rows[1][17], "points_per_pass=2");
  EXPECT_EQ(rows[2][17], "chunk_values=128 points_per_pass=4");
  const std::string text = test::read_all(csv);
  EXPECT_TRUE(has(text, "warps=2,\"cpu0 has no kernel parameter 'warps' for this job (it tunes: threads,")) << text;
  EXPECT_TRUE(has(text, "chunk_values=100,\"cpu0: the kernel parameter 'chunk_values' takes 64, 128")) << text;
  EXPECT_TRUE(has(r.out, "skipped: cpu0 has no kernel parameter 'warps'")) << r.out;
}

TEST(CliBenchStencils, RefusesWhatItCannotMeasure) {
  const std::string cache = "hetstencil_cli_bench_stencils_refusals";
  const auto unknown = run("bench stencils --nx 8 --ny 8 --stencils poisson9", cache);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(has(unknown.err, "no built-in stencil is called 'poisson9'")) << unknown.err;
  const auto reps = run("bench stencils --reps 0", cache);
  EXPECT_EQ(reps.exit_code, 2);
  EXPECT_TRUE(has(reps.err, "--reps: must be a whole number from 1")) << reps.err;
  const auto precision = run("bench stencils --precision half", cache);
  EXPECT_EQ(precision.exit_code, 2);
  EXPECT_TRUE(has(precision.err, "--precision: must be float, double or both")) << precision.err;
  const auto csv = run("bench stencils --csv ''", cache);
  EXPECT_EQ(csv.exit_code, 2);
  EXPECT_TRUE(has(csv.err, "--csv: must name a file")) << csv.err;
  for (const char* set : {"threads", "threads=x", "threads=1,", "=3", "a=1,,b=2"}) {
    const auto bad = run(std::string("bench stencils --tuning ") + set, cache);
    EXPECT_EQ(bad.exit_code, 2) << set;
    EXPECT_TRUE(has(bad.err, std::string("--tuning: must be NAME=VALUE pairs joined by commas, e.g. warps=2,lines=4, not '") +
                                 set + "'"))
        << bad.err;
  }
  const auto twice = run("bench stencils --tuning threads=1,threads=2", cache);
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_TRUE(has(twice.err, "--tuning: names 'threads' twice in 'threads=1,threads=2'")) << twice.err;
}

}  // namespace
}  // namespace hetstencil
