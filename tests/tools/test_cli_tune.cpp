// hetstencil tune: what it prints and keeps, what bench stencils then shows,
// and its refusals. No timing is asserted: which values win is the machine's.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/tools/cli_runner.hpp"

namespace hetstencil {
namespace {

namespace fs = std::filesystem;

const std::string kOneDevice = " --cpu-devices 1 --threads 2 --devices cpu";

test::CliResult run(const std::string& args, const std::string& cache) {
  return test::run_command_line(HETSTENCIL_CLI, args, test::own_folder(cache));
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(CliTune, PrintsEachDevicesParametersAndKeepsThemInTheProfile) {
  const std::string cache = "hetstencil_cli_tune_table";
  const fs::path profile = test::own_folder("hetstencil_cli_tune") / "table.json";
  const auto r = run("tune --stencil box9 --precision float --budget 1 --reps 3 --nx 96 --ny 32 --profile " +
                         profile.string() + kOneDevice,
                     cache);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* part : {"default_ms", "tuned_ms", "gain", "cpu0", "96x32", "threads=", "chunk_values=",
                           "points_per_pass=", "more than both spreads", "saved to " }) {
    EXPECT_TRUE(has(r.out, part)) << part << "\n" << r.out;
  }
  EXPECT_TRUE(has(r.err, "cpu0: tuning box9 float on 96x32")) << r.err;
  const nlohmann::json stored = nlohmann::json::parse(test::read_all(profile));
  bool kept = false;
  for (const auto& [key, device] : stored.at("devices").items()) {
    kept = kept || (device.contains("tuned") && device.at("tuned").contains("box9/float"));
  }
  EXPECT_TRUE(kept) << stored.dump(1);
  const auto shown = run("profile show --profile " + profile.string(), cache);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_TRUE(has(shown.out, "box9/float       tuned on 96x32: ")) << shown.out;
}

// Figures measured with other values of the stencil and precision tuned go;
// another precision's stay.
TEST(CliTune, ChangedValuesDropTheFiguresMeasuredWithTheOldOnes) {
  const std::string cache = "hetstencil_cli_tune_drop";
  const fs::path profile = test::own_folder("hetstencil_cli_tune") / "drop.json";
  const std::string tune = "tune --stencil box9 --precision double --budget 0.2 --reps 3 --nx 64 --ny 16 --profile " +
                           profile.string() + kOneDevice;
  ASSERT_EQ(run(tune, cache).exit_code, 0);
  nlohmann::json stored = nlohmann::json::parse(test::read_all(profile));
  for (auto& [key, device] : stored.at("devices").items()) {
    device["tuned"]["box9/double"]["values"] = {{"chunk_values", 7}};  // no value a search tries
    device["step"] = {{"box9/double/64", 1e-3}, {"box9/float/64", 2e-3}};
  }
  std::ofstream(profile) << stored.dump(2);
  const auto again = run(tune, cache);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  stored = nlohmann::json::parse(test::read_all(profile));
  for (const auto& [key, device] : stored.at("devices").items()) {
    EXPECT_FALSE(device.at("step").contains("box9/double/64")) << device.dump(1);
    EXPECT_TRUE(device.at("step").contains("box9/float/64")) << device.dump(1);
    EXPECT_NE(device.at("tuned").at("box9/double").at("values").value("chunk_values", 0), 7) << device.dump(1);
  }
}

TEST(CliTune, PrintsOneJsonObjectNamingItsSchema) {
  const auto r = run("tune --stencil poisson7 --precision double --budget 0.5 --reps 3 --nx 24 --ny 16 --nz 12 --json" +
                         kOneDevice,
                     "hetstencil_cli_tune_json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("schema"), "hetstencil-tune");
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(j.at("stencil"), "poisson7");
  EXPECT_EQ(j.at("precision"), "double");
  ASSERT_EQ(j.at("devices").size(), 1u);
  const auto& d = j.at("devices")[0];
  EXPECT_EQ(d.at("name"), "cpu0");
  EXPECT_EQ(d.at("nz"), 12);
  std::string names;
  for (const auto& p : d.at("parameters")) names += p.at("name").get<std::string>() + " ";
  EXPECT_EQ(names, "threads streaming chunk_values points_per_pass tile_kib tile_rows_per_radius ");
  EXPECT_GT(d.at("default_s").get<double>(), 0.0);
  EXPECT_GT(d.at("tuned_s").get<double>(), 0.0);
}

// A tuning in the profile: bench stencils sweeps with it and again at the
// defaults; the profile of another machine is not used, and says so.
TEST(CliTune, BenchStencilsShowsTunedBesideDefaultAndIgnoresAnotherMachines) {
  const std::string cache = "hetstencil_cli_tune_bench";
  const fs::path folder = test::own_folder("hetstencil_cli_tune");
  const fs::path profile = folder / "bench.json";
  ASSERT_EQ(run("tune --stencil box9 --precision double --budget 0.2 --reps 3 --nx 64 --ny 16 --profile " +
                    profile.string() + kOneDevice,
                cache)
                .exit_code,
            0);
  nlohmann::json stored = nlohmann::json::parse(test::read_all(profile));
  for (auto& [key, device] : stored.at("devices").items()) {
    device["tuned"]["box9/double"]["values"] = {{"chunk_values", 1024}};
  }
  std::ofstream(profile) << stored.dump(2);
  const fs::path csv = folder / "bench.csv";
  const std::string bench = "bench stencils --stencils box9,poisson5 --precision double --nx 64 --ny 16 --reps 1 "
                            "--csv " + csv.string() + " --profile " + profile.string() + kOneDevice;
  const auto tuned = run(bench, cache);
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  EXPECT_TRUE(has(tuned.out, "default_ms")) << tuned.out;
  EXPECT_TRUE(has(tuned.out, "tuned/def")) << tuned.out;
  EXPECT_TRUE(has(tuned.out, "chunk_values=1024")) << tuned.out;
  const std::string rows = test::read_all(csv);
  EXPECT_TRUE(has(rows, ",chunk_values=1024,")) << rows;

  stored["fingerprint"]["host"] = "another-host";
  std::ofstream(profile) << stored.dump(2);
  const auto foreign = run(bench, cache);
  ASSERT_EQ(foreign.exit_code, 0) << foreign.err;
  EXPECT_TRUE(has(foreign.err, "are for another machine (host")) << foreign.err;
  EXPECT_FALSE(has(foreign.out, "chunk_values=1024")) << foreign.out;
}

TEST(CliTune, RefusesBadOptionsWithItsOwnMessages) {
  const std::string cache = "hetstencil_cli_tune_refusals";
  const auto both = run("tune --precision both", cache);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_TRUE(has(both.err, "--precision")) << both.err;
  const auto budget = run("tune --budget 0", cache);
  EXPECT_EQ(budget.exit_code, 2);
  EXPECT_TRUE(has(budget.err, "--budget")) << budget.err;
  const auto reps = run("tune --reps 2", cache);
  EXPECT_EQ(reps.exit_code, 2);
  EXPECT_TRUE(has(reps.err, "--reps: must be a whole number from 3")) << reps.err;
  const auto unknown = run("tune --stencil poisson9", cache);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(has(unknown.err, "no built-in stencil is called 'poisson9'")) << unknown.err;
  const auto described = run("tune --synthetic \"pack:1 numa:1 core:2 pu:1\"", cache);
  EXPECT_EQ(described.exit_code, 2);
  EXPECT_TRUE(has(described.err, "tuning measures this machine's devices")) << described.err;
}

}  // namespace
}  // namespace hetstencil
