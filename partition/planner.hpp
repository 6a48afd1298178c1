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

struct LeftOut {
  std::string name;
  std::string reason;  ///< in words, with the predicted times
};

struct SplitPlan {
  std::vector<PlannedDevice> devices;  ///< in row order, each with rows > 0
  Prediction prediction;               ///< by the curves as they are
  std::vector<LeftOut> left_out;
  double cpu_margin = 0.0;             ///< how much slower than their curves CPU devices were given rows for
};

/// Beside GPUs a CPU device swept 15-70% slower than its calibrated curve in 8
/// of 19 hybrid solves on the H100 and 2 x H200 hosts (its slab dropping out of
/// a last-level cache those virtual machines share, it seems) and as predicted
/// or faster in the others: its share is sized as if it were this much slower.
/// Its few percent of the rows are worth less than what the GPUs lose waiting
/// for it; a drop out of the cache costs more than this margin covers.
constexpr double kCpuMarginBesideGpus = 0.2;

/// The devices as the planner sees them; a GPU's rows are bounded by its
/// memory (two slabs and the residual's sums in 90% of it) where it is known.
std::vector<Candidate> candidates_of(const std::vector<DeviceInfo>& devices, const Topology& topology,
                                     Precision precision, std::int64_t nx);

/// For each order worth trying of each set of devices worth trying, bisects on
/// the time t of an iteration: each device takes the most rows (within its
/// memory) whose predicted iteration fits under t, until the rows cover ny;
/// the excess is taken back from the slowest, one row at a time, so devices
/// with equal curves differ by at most a row. The plan with the least predicted
/// total wins; devices not in it are left out, with the reason. Throws
/// InvalidArgument when the devices' memory cannot hold the grid, naming how
/// much is missing. With a variant, GPUs are priced running it (a blocked
/// split: every device at least K rows). When GPUs and CPU devices are
/// candidates, the split is sized with CPU devices kCpuMarginBesideGpus slower;
/// the prediction returned is by the curves as they are.
SplitPlan plan_split(const Profile& profile, const std::vector<Candidate>& candidates, Precision precision,
                     std::int64_t nx, std::int64_t ny, const StopRule& stop, const VariantChoice& variant = {});

}  // namespace hetstencil
