// What a Runtime over several processes shares among them: the devices each
// offers, rank 0's plan, and the devices a process takes by its local rank.
#pragma once

#include <string>
#include <vector>

#include "devices/transport/processes.hpp"
#include "hetstencil/device_info.hpp"
#include "hetstencil/plan.hpp"
#include "hetstencil/runtime.hpp"

namespace hetstencil {

/// Every process's devices, in rank order (named "rR.NAME" when there are
/// several processes); `owner` receives each one's rank. Collective.
std::vector<DeviceInfo> gather_devices(Processes& processes, const std::vector<DeviceInfo>& mine,
                                       std::vector<int>& owner);

/// Rank 0's plan (its parts and variant) on every process; the others keep
/// their own origin and prediction. Collective.
Plan rank0_plan(Processes& processes, const Plan& plan);

/// `options.devices` narrowed to the one device of this machine that a
/// process of local rank `local_rank` takes (RankDevices::Local).
std::string local_device(const Topology& topology, const RuntimeOptions& options, int local_rank);

}  // namespace hetstencil
