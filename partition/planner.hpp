// The split that finishes first: which devices, in which order, how many rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hetstencil/topology.hpp"
#include "model/predict.hpp"

namespace hetstencil {

struct Candidate {
  std::string name;
  DeviceKind kind = DeviceKind::Cpu;
  std::int64_t max_rows = 0;  ///< most rows its memory holds (0: no limit)
};

/// A device joins a plan only where it is predicted to save this much of the
/// run: a smaller saving is within how far the rounds of one split spread
/// (0.1-4.1% in the throttled sweeps of docs/model.md, "Rules of thumb"), while
/// every device adds a thread, an exchange and its own ways to run slow.
constexpr double kLeastGainOfADevice = 0.01;

/// The devices as the planner sees them; a GPU's rows are bounded by its
/// memory (two slabs and the residual's sums in 90% of it) where it is known.
std::vector<Candidate> candidates_of(const std::vector<DeviceInfo>& devices, const Topology& topology,
                                     Precision precision, std::int64_t nx);

/// For each order worth trying of each set of devices worth trying, bisects on
/// the time t of an iteration: each device takes the most rows (within its
/// memory) whose predicted iteration fits under t, until the rows cover ny;
/// the excess is taken back from the slowest, one row at a time, so devices
/// with equal curves differ by at most a row. Of the plans predicted within
/// kLeastGainOfADevice of the fastest, the one with the fewest devices wins
/// (then the fastest of those); devices not in it are left out, with the reason. Throws
/// InvalidArgument when the devices' memory cannot hold the grid, naming how
/// much is missing. With a variant, GPUs are priced running it (a blocked
/// split: every device at least K rows). When GPUs and CPU devices are
/// candidates, a CPU device that swept slower than its curve in solves beside
/// GPUs (its slowdown_beside_gpus) has its share sized as if it sweeps that
/// much slower; the prediction returned is by the curves as they are, each
/// device's with what it was sized for. The plan's parts index `candidates`, in row order.
Plan plan_split(const Profile& profile, const std::vector<Candidate>& candidates, Precision precision,
                std::int64_t nx, std::int64_t ny, const StopRule& stop, const VariantChoice& variant = {});

}  // namespace hetstencil
