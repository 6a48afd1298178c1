// A CPU device's team, sized where the hypervisor of a virtual machine takes
// cores from it. On a 64-vCPU guest a team on 63 vCPUs lost 4-9 cores' worth to
// the hypervisor, and since every barrier waits for the workers it stopped,
// 2048 rows took 6-9 ms an iteration against 1.0 ms for 48 workers, which lost
// 0.1 (docs/model.md, "A CPU team on every vCPU of a virtual machine").
// Calibration measures the CPU devices' curves; where the hypervisor took more
// than HostLoad::kCrowdingCores meanwhile, it times each device's team against
// all, 7/8, 3/4 and 1/2 of its cores' workers, keeps a faster one as the
// device's tuned "threads" (the others sleep: WorkerTeam::use) and measures
// the curves again.
// Each team sweeps a large slab, a quarter and a sixteenth of it, and is
// scored by its time a row averaged over them: on that guest 410 rows took 6.0
// ms an iteration with 56 workers against 0.3 with 32, where 2048 rows took
// 1.1 and 1.3; a CPU beside a fast GPU takes few rows, beside a slow one many.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "devices/device.hpp"

namespace hetstencil {

/// A team's sweeps of each slab, back to back for about kTeamTrialSeconds a slab.
struct TeamTrial {
  int workers = 0;
  /// Seconds a row: each slab's mean sweep (a solve pays the stopped
  /// workers' sweeps too) over its rows, averaged over the slabs.
  double row_s = 0.0;
  double error_s = 0.0;   ///< its standard error
  double stolen = -1.0;   ///< cores' worth the hypervisor took meanwhile (HostLoad; -1 unknown)
};

constexpr double kTeamTrialSeconds = 0.15;
/// What a device's trials take at most, about: five teams, each slab of
/// team_trial_units, an estimate's sweeps and kTeamTrialSeconds a slab.
constexpr double kTeamTrialsSeconds = 5 * 3 * 1.5 * kTeamTrialSeconds;

/// The device's "threads" kernel parameter for `job` (its default: all its
/// workers); none for a device without one (a GPU).
std::optional<Tunable> threads_of(const Device& device, const StencilJob& job);

/// The slabs each team sweeps: a sixteenth, a quarter and all of `units`.
std::vector<std::int64_t> team_trial_units(std::int64_t units);

/// The workers to time: `current` (the team the device sweeps with now: its
/// tuned threads, else all of it) first, then all, 7/8, 3/4 and 1/2 of the
/// team, those that `threads` (the device's Tunable) takes, each once.
std::vector<int> team_trials(const Tunable& threads, int current);

/// The trial to keep: of those faster than the first (the current team) by
/// more than twice both their standard errors, one the hypervisor left alone
/// (it took at most HostLoad::kCrowdingCores) before one it did not, the
/// fastest of those first; else the first. It takes cores in bursts: a team it
/// took from in a trial of a fraction of a second lost 0.5-5 cores' worth
/// again and again in the solves after it (docs/model.md).
std::size_t fastest_team(const std::vector<TeamTrial>& trials);

/// "cpu0: 63 workers swept 512, 2048 and 8192 rows of 8192 in 4.12 us a row
/// (the hypervisor took 9.2 cores' worth), 55 in 2.11 (4.3), 47 in 0.98 (1.1),
/// 31 in 0.61 (0.1): it sweeps with 31".
std::string team_choice_text(const std::string& device, const std::string& slab, const std::vector<TeamTrial>& trials,
                             std::size_t chosen);

/// Times `device` (detached) sweeping `job` (initial set, `units` units) with
/// each team of team_trials (from job.tuning's threads) at each slab of
/// team_trial_units, its other kernel parameters as job.tuning has them.
std::vector<TeamTrial> time_teams(Device& device, StencilJob job, std::int64_t units);

}  // namespace hetstencil
