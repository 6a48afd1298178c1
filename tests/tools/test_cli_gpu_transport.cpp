// hetstencil solve --gpu-transport: the choice of how GPUs of different
// processes exchange ghost rows, as the command takes it without a launcher.
#include <gtest/gtest.h>

#include "devices/transport/link_paths.hpp"
#include "tests/tools/cli_runner.hpp"

namespace hetstencil {
namespace {

const std::vector<std::string> kSolve{"solve",  "--devices", "cpu",  "--threads",     "1",          "--nx", "12",
                                      "--ny",   "10",        "--iters", "5",           "--no-learn", "--no-calibrate"};

test::CliResult solve_with(const std::string& transport) {
  std::vector<std::string> args = kSolve;
  args.insert(args.end(), {"--gpu-transport", transport});
  return test::run_command(HETSTENCIL_CLI, args, test::own_folder("hetstencil_gpu_transport"));
}

TEST(CliGpuTransport, AutoIpcAndHostAreTakenByAnyBuild) {
  for (const char* transport : {"auto", "ipc", "host"}) {
    const test::CliResult r = solve_with(transport);
    EXPECT_EQ(r.exit_code, 0) << transport << ": " << r.err;
  }
}

TEST(CliGpuTransport, NcclIsRefusedByABuildWithoutItNamingTheOthers) {
  const test::CliResult r = solve_with("nccl");
  if (nccl_built()) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return;
  }
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("built without NCCL"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("choose auto, ipc or host"), std::string::npos) << r.err;
}

TEST(CliGpuTransport, AnUnknownTransportIsRefused) {
  const test::CliResult r = solve_with("infiniband");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--gpu-transport"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace hetstencil
