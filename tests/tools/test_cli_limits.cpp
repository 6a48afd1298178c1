// Sizes beyond any grid, or beyond this machine: refused with the project's
// message before anything is allocated, fast, never a crash.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include "tests/test_support.hpp"

namespace hetstencil {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int exit_code = -1;  // -1: killed by a signal
  std::string err;
  double seconds = 0.0;
};

fs::path scratch(const std::string& what) {
  return fs::temp_directory_path() / ("hetstencil_limits_" + what + "_" + std::to_string(getpid()));
}

// Under a 2 GB address-space limit: a grid that were allocated would fail
// with the allocator's words, not the project's refusal.
CliRun run_limited(const std::string& args) {
  const fs::path err_file = scratch("err");
  const std::string limit = testing_support::sanitized() ? "" : "ulimit -v 2000000; ";
  const std::string command = limit + "XDG_CACHE_HOME=" + scratch("cache").string() + " timeout 60 " +
                              std::string(HETSTENCIL_CLI) + " " + args + " >/dev/null 2>" + err_file.string();
  CliRun r;
  const auto start = std::chrono::steady_clock::now();
  const int status = std::system(command.c_str());
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file);
  r.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  fs::remove(err_file);
  fs::remove_all(scratch("cache"));
  return r;
}

void expect_refused(const std::string& args, const std::string& message_part) {
  const CliRun r = run_limited(args);
  SCOPED_TRACE(args + "\nstderr: " + r.err);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("hetstencil: error: "), std::string::npos);
  EXPECT_NE(r.err.find(message_part), std::string::npos);
  EXPECT_LT(r.seconds, 10.0);
}

TEST(CliLimits, SidesAndGridsBeyondTheBoundsAreRefused) {
  if (const std::string why = testing_support::why_limits_cannot_be_tested(); !why.empty()) GTEST_SKIP() << why;
  expect_refused("calibrate --nx 9223372036854775807", "--nx: must be a whole number from 1 to 1073741824");
  expect_refused("calibrate --nx 1073741824", "a grid may take 70368744177664 bytes (64.0 TiB) at most");
  expect_refused("calibrate --nx 4096 --max-rows 9223372036854775807", "--max-rows: must be a whole number from 0 to 1073741824");
  expect_refused("bench cpu --nx 4611686018427387904 --ny 4", "--nx: must be a whole number from 1 to 1073741824");
  expect_refused("bench cpu --nx 1073741824 --ny 1073741824",
                 "a grid of 1073741824 x 1073741824 float values takes 4611686035607257104 bytes");
  expect_refused("solve --no-calibrate --no-learn --nx 1073741824 --ny 1073741824",
                 "a grid of 1073741824 x 1073741824 double values takes");
}

// Thread and device counts beyond any machine: refused at once, not mapped
// (laying out 2^31 workers would take minutes before any started).
TEST(CliLimits, ThreadAndDeviceCountsHaveBounds) {
  expect_refused("solve --no-calibrate --no-learn --nx 8 --ny 8 --threads 2147483647",
                 "--threads: must be a whole number from 0 to 4096");
  expect_refused("solve --no-calibrate --no-learn --nx 8 --ny 8 --cpu-devices 100000",
                 "--cpu-devices: must be a whole number from 0 to 4096");
  expect_refused("bench cpu --nx 8 --ny 8 --threads 4097", "--threads: must be a whole number from 0 to 4096");
}

// 8 TiB and more: more than this machine has. Refused, naming the bytes, where
// the machine's memory is known; where memory can be plugged in as it is used
// (virtio-mem) it is tried and fails with the project's message.
TEST(CliLimits, GridsBeyondTheMachineAreRefusedBeforeAllocating) {
  if (const std::string why = testing_support::why_limits_cannot_be_tested(); !why.empty()) GTEST_SKIP() << why;
  for (const std::string args : {"solve --no-calibrate --no-learn --nx 1048576 --ny 1048576",
                                 "solve --no-calibrate --no-learn --nx 1048576 --ny 1048576 --cpu-devices 2",
                                 "bench cpu --nx 1048576 --ny 1048576 --precision double",
                                 "calibrate --nx 67108864 --max-rows 64 --budget 1"}) {
    const CliRun r = run_limited(args);
    SCOPED_TRACE(args + "\nstderr: " + r.err);
    EXPECT_TRUE(r.exit_code == 2 || r.exit_code == 1);
    EXPECT_NE(r.err.find("hetstencil: error: "), std::string::npos);
    EXPECT_EQ(r.err.find("std::"), std::string::npos) << "the allocator's words reached the user";
    EXPECT_LT(r.seconds, 20.0);
    if (r.exit_code == 2) {
      EXPECT_NE(r.err.find(" bytes ("), std::string::npos);
      EXPECT_NE(r.err.find("in all"), std::string::npos);
    } else {
      EXPECT_NE(r.err.find("cannot allocate"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace hetstencil
