// What a Runtime over several processes shares among them: the devices each
// offers, rank 0's plan, and the devices a process takes by its local rank.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "devices/transport/processes.hpp"
#include "hetstencil/device_info.hpp"
#include "hetstencil/plan.hpp"
#include "hetstencil/runtime.hpp"
#include "model/profile.hpp"

namespace hetstencil {

/// Runs `step`, this process's part of a collective call (no collective in
/// it), then tells every process whether each one's failed: where one did,
/// every process throws its error (the first failing rank's, naming it;
/// InvalidArgument where that was one, else Error), so that no process is
/// left waiting for one that will not come. Collective.
void agree(Processes& processes, const std::function<void()>& step);

/// Every process's devices, in rank order (named "rR.NAME" when there are
/// several processes); `owner` receives each one's rank. Collective.
std::vector<DeviceInfo> gather_devices(Processes& processes, const std::vector<DeviceInfo>& mine,
                                       std::vector<int>& owner);

/// One profile of every process's devices: each process's `mine` (keyed by
/// its devices' names; nothing where it has none) under the names
/// gather_devices gives them. Messages between processes have no figures (the
/// model takes them as free). Collective.
Profile gather_profiles(Processes& processes, const std::optional<Profile>& mine);

/// Rank 0's plan (its parts and variant) on every process; the others keep
/// their own origin and prediction. Collective.
Plan rank0_plan(Processes& processes, const Plan& plan);

/// `options.devices` narrowed to the one device of this machine that a
/// process of local rank `local_rank` takes (RankDevices::Local).
std::string local_device(const Topology& topology, const RuntimeOptions& options, int local_rank);

}  // namespace hetstencil
