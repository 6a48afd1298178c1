// The CPU devices' curves of a calibration: every CPU device sweeping at once,
// point by point, beside the GPUs sweeping, as in a solve; where the
// hypervisor took cores from their workers meanwhile, their teams sized
// (team_size.hpp) and the curves measured again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/calibration_steps.hpp"

namespace hetstencil {

/// The CPU curves of `precision` into `profile` (rates, checks, and rest
/// curves where the devices share one memory node), up to `most` rows; teams
/// sized and kept in o.tuned and the profile where the hypervisor took cores
/// and the budget has room. What does not fit the budget goes to `skipped`.
void sized_cpu_curves(const Topology& topology, const std::vector<const DeviceSpec*>& cpus,
                      const std::vector<const DeviceSpec*>& gpus, Precision precision, CalibrationOptions& o,
                      std::int64_t most, const Budget& budget, Profile& profile, std::vector<std::string>& skipped);

/// The most rows worth measuring a CPU device with. Beyond a few times the
/// rows its cache holds a CPU device streams its slabs from memory and its
/// time grows in proportion to its rows: the curve's last segment carries on.
/// Measuring further (a 16384^2 float grid: 2 GiB of slabs to set up, 25 ms
/// sweeps) would take most of a calibration's budget.
std::int64_t cpu_rows_worth_measuring(const std::vector<const DeviceSpec*>& cpus, const StencilJob& job,
                                      std::int64_t most);

}  // namespace hetstencil
