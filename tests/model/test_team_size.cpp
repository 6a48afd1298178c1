// A CPU device's team sized where the hypervisor takes cores from it: the
// teams timed, the choice between them, its words, and a device timed with each.
#include <gtest/gtest.h>

#include <string>

#include "core/timing_grid.hpp"
#include "devices/backend.hpp"
#include "model/team_size.hpp"

namespace hetstencil {
namespace {

TeamTrial trial(int workers, double row_us, double error_us, double stolen) {
  TeamTrial t;
  t.workers = workers;
  t.row_s = row_us * 1e-6;
  t.error_s = error_us * 1e-6;
  t.stolen = stolen;
  return t;
}

TEST(TeamSize, SweepsASixteenthAQuarterAndAllOfTheSlab) {
  EXPECT_EQ(team_trial_units(8192), (std::vector<std::int64_t>{512, 2048, 8192}));
  EXPECT_EQ(team_trial_units(8), (std::vector<std::int64_t>{1, 2, 8}));
  EXPECT_EQ(team_trial_units(1), (std::vector<std::int64_t>{1}));
}

TEST(TeamSize, TimesTheCurrentTeamThenAllSevenEighthsThreeQuartersAndHalfOfIt) {
  const Tunable threads{"threads", {7, 15, 31, 47, 55, 63}, 63};
  EXPECT_EQ(team_trials(threads, 63), (std::vector<int>{63, 55, 47, 31}));
  // A tuned team first: what the others must beat.
  EXPECT_EQ(team_trials(threads, 15), (std::vector<int>{15, 63, 55, 47, 31}));
  EXPECT_EQ(team_trials(threads, 47), (std::vector<int>{47, 63, 55, 31}));
  // Only values the device takes, each once: a team of 2 tries 1.
  EXPECT_EQ(team_trials(Tunable{"threads", {1, 2}, 2}, 2), (std::vector<int>{2, 1}));
  EXPECT_EQ(team_trials(Tunable{"threads", {1}, 1}, 1), (std::vector<int>{1}));
}

TEST(TeamSize, KeepsTheFastestTeamThatBeatsTheCurrentOneBeyondTheNoise) {
  const std::vector<TeamTrial> quiet = {trial(63, 1.10, 0.02, 0.0), trial(55, 1.02, 0.02, 0.0),
                                        trial(47, 0.90, 0.02, 0.0), trial(31, 0.95, 0.02, 0.0)};
  EXPECT_EQ(fastest_team(quiet), 2u);
  // Faster by less than twice both errors: the current team stays.
  const std::vector<TeamTrial> close = {trial(16, 1.00, 0.05, 0.1), trial(14, 0.85, 0.03, 0.0)};
  EXPECT_EQ(fastest_team(close), 0u);
  const std::vector<TeamTrial> slower = {trial(16, 1.00, 0.01, 0.1), trial(14, 1.10, 0.01, 0.0)};
  EXPECT_EQ(fastest_team(slower), 0u);
  EXPECT_EQ(fastest_team({}), 0u);
}

TEST(TeamSize, PrefersAFasterTeamTheHypervisorLeftAlone) {
  // The steal a 4-H200 guest's trials saw: 47 workers the fastest, but robbed
  // of 0.7 cores' worth, as they were again in the sweeps after.
  const std::vector<TeamTrial> h200 = {trial(63, 1.06, 0.01, 6.2), trial(55, 1.03, 0.01, 2.1),
                                       trial(47, 0.92, 0.01, 0.7), trial(31, 0.98, 0.01, 0.0)};
  EXPECT_EQ(fastest_team(h200), 3u);
  // Left alone but slower than the current team: not kept.
  const std::vector<TeamTrial> slower = {trial(63, 1.06, 0.01, 6.2), trial(31, 1.30, 0.01, 0.0)};
  EXPECT_EQ(fastest_team(slower), 0u);
  // Every faster team robbed: the fastest of them.
  const std::vector<TeamTrial> robbed = {trial(63, 1.06, 0.01, 6.2), trial(55, 0.90, 0.01, 2.1),
                                         trial(47, 0.95, 0.01, 1.0)};
  EXPECT_EQ(fastest_team(robbed), 1u);
  EXPECT_EQ(fastest_team({trial(63, 1.06, 0.01, 6.2)}), 0u);
}

TEST(TeamSize, SaysEachTeamsTimeAndStealAndTheOneKept) {
  const std::vector<TeamTrial> trials = {trial(63, 8.77, 0.4, 9.2), trial(55, 1.12, 0.02, 0.9),
                                         trial(47, 1.04, 0.02, -1.0)};
  EXPECT_EQ(team_choice_text("cpu0", "128, 512 and 2048 rows of 16384", trials, 2),
            "cpu0: 63 workers swept 128, 512 and 2048 rows of 16384 in 8.77 us a row (the hypervisor took 9.2 cores' "
            "worth), 55 in 1.12 (0.9), 47 in 1.04 (?): it sweeps with 47");
}

TEST(TeamSize, TimesADeviceWithItsTunedTeamFirst) {
  MachineDevices m = make_devices(load_topology(TopologySource{"", "pack:1 numa:1 core:2 pu:1"}),
                                  DeviceMapOptions{1, 2, "", false, {}});
  Device& device = *m.devices.front();
  StencilJob job;
  job.precision = Precision::Double;
  job.nx = 64;
  job.ny = 32;
  const Grid<double> grid = timing_grid<double>(job.ny, job.nx);
  job.initial = grid.data();
  job.tuning = {{"streaming", 0}, {"threads", 1}};
  const std::vector<TeamTrial> trials = time_teams(device, job, 32);
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].workers, 1);
  EXPECT_EQ(trials[1].workers, 2);
  for (const TeamTrial& t : trials) {
    EXPECT_GT(t.row_s, 0.0);
    EXPECT_GE(t.error_s, 0.0);
  }
}

}  // namespace
}  // namespace hetstencil
