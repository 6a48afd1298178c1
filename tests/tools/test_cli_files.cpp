// The command line and the files it writes: outputs, the profile, runs at once.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/tools/cli_runner.hpp"

namespace hetstencil {
namespace {

namespace fs = std::filesystem;

using CliRun = test::CliResult;

class CliFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hetstencil_cli_files_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "cache");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `args` run with the test's own cache (or `cache`).
  CliRun run(const std::string& args, const std::string& cache = "") const {
    return test::run_command_line(HETSTENCIL_CLI, args, cache.empty() ? dir_ / "cache" : fs::path(cache));
  }
  static std::string read(const fs::path& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  // The one profile in the test's cache.
  fs::path profile() const {
    for (const auto& e : fs::directory_iterator(dir_ / "cache" / "hetstencil")) {
      if (e.path().extension() == ".json") return e.path();
    }
    return {};
  }

  fs::path dir_;
};

TEST_F(CliFiles, OutputsAreWrittenThroughLinksAndNeverOverAFolderOrAReadOnlyFile) {
  const std::string solve = "solve --no-calibrate --nx 16 --ny 16 --iters 2 --output ";
  const fs::path target = dir_ / "solution.npy", link = dir_ / "link.npy";
  fs::create_symlink(target, link);
  CliRun r = run(solve + link.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_GT(fs::file_size(target), 0u);
  struct stat st {};
  ASSERT_EQ(stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u & ~[] { const mode_t m = umask(0); umask(m); return m; }());

  r = run(solve + dir_.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("hetstencil: error: cannot write '" + dir_.string() + "': it is a directory"),
            std::string::npos) << r.err;

  const fs::path read_only = dir_ / "read_only.npy";
  { std::ofstream(read_only) << "keep"; }
  fs::permissions(read_only, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  r = run(solve + read_only.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("read-only"), std::string::npos) << r.err;
  EXPECT_EQ(read(read_only), "keep");

  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  r = run("sweep --no-calibrate --cpu-devices 2 --nx 16 --ny 16 --iters 2 --csv " + fifo.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'" + fifo.string() + "': it is not a regular file"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST_F(CliFiles, CpuDevicesCutDifferentlyKeepCurvesOfTheirOwn) {
  ASSERT_EQ(run("calibrate --nx 64 --budget 2 --cpu-devices 2 --devices cpu").exit_code, 0);
  ASSERT_EQ(run("calibrate --nx 64 --budget 2 --devices cpu").exit_code, 0);
  const auto j = nlohmann::json::parse(read(profile()));
  std::set<std::string> keys;
  for (const auto& [key, device] : j.at("devices").items()) {
    if (device.at("kind") == "cpu" && !device.at("rates").empty()) keys.insert(key);
  }
  EXPECT_EQ(keys.size(), 3u) << "the two halves and the whole: " << j.at("devices").dump();
  for (const auto& key : keys) EXPECT_EQ(key.rfind("cpu:node", 0), 0u) << key;
}

TEST_F(CliFiles, CalibrationsAtOnceBothKeepTheirCurves) {
  for (int round = 0; round < 3; ++round) {
    fs::remove_all(dir_ / "cache");
    const std::string cache = (dir_ / "cache").string();
    const std::string both = "XDG_CACHE_HOME=" + cache + " " + HETSTENCIL_CLI + " calibrate --nx 64 --budget 2 >/dev/null 2>&1 & " +
                             "XDG_CACHE_HOME=" + cache + " " + HETSTENCIL_CLI + " calibrate --nx 96 --budget 2 >/dev/null 2>&1; wait";
    ASSERT_EQ(std::system(both.c_str()), 0);
    const auto j = nlohmann::json::parse(read(profile()));
    std::set<std::string> widths;
    for (const auto& [key, device] : j.at("devices").items()) {
      for (const auto& [width, curve] : device.at("rates").items()) widths.insert(width);
    }
    EXPECT_EQ(widths.count("double/64"), 1u) << "round " << round;
    EXPECT_EQ(widths.count("double/96"), 1u) << "round " << round;
  }
}

TEST_F(CliFiles, ACorruptProfileIsKeptAsABadCopy) {
  fs::create_directories(dir_ / "cache" / "hetstencil");
  ASSERT_EQ(run("calibrate --nx 64 --budget 2").exit_code, 0);
  const fs::path path = profile();
  { std::ofstream(path) << "{ corrupt"; }
  const CliRun r = run("calibrate --nx 64 --budget 2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("kept as '" + path.string() + "."), std::string::npos) << r.err;
  int bad = 0;
  for (const auto& e : fs::directory_iterator(path.parent_path())) {
    if (e.path().extension() == ".bad") {
      ++bad;
      EXPECT_EQ(read(e.path()), "{ corrupt");
    }
  }
  EXPECT_EQ(bad, 1);
}

TEST_F(CliFiles, ASolveWhoseProfileCannotBeSavedReportsFirstAndExitsThree) {
  // A cache below a regular file: no one, root included, can create the profile.
  const fs::path file = dir_ / "not_a_folder";
  { std::ofstream(file) << "x"; }
  const fs::path solution = dir_ / "solution.npy";
  const CliRun r = run("solve --nx 32 --ny 32 --iters 4 --budget 2 --output " + solution.string(), file.string());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("residual"), std::string::npos) << "the report comes first: " << r.out;
  EXPECT_NE(r.out.find("solution written to"), std::string::npos) << r.out;
  EXPECT_GT(fs::file_size(solution), 0u);
  EXPECT_NE(r.err.find("could not be saved"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("error"), std::string::npos) << "a warning, not an error: " << r.err;
}

}  // namespace
}  // namespace hetstencil
