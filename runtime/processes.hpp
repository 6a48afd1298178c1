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
#include "model/process_links.hpp"
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
/// gather_devices gives them. Messages between processes have no figures
/// until add_process_links adds them. Collective.
Profile gather_profiles(Processes& processes, const std::optional<Profile>& mine);

/// Rounds of every process with its neighbours, all at once, as a solve
/// exchanges: each sends host messages of 1/2, 1, 2 and 4 times `ghost_bytes`
/// (a round's ghost rows) to each neighbour while as many come from each, and
/// copies them into ghost rows, `rounds` times a size; a link into a process
/// costs its share of that process's mean round (what a solve pays a round,
/// delays and the other links' traffic included), fitted over the sizes.
/// Element r is the link between ranks r and r + 1, on every process. Collective.
std::vector<ProcessLink> measure_process_links(Processes& processes, std::size_t ghost_bytes, int rounds = 1000);

/// Writes `links` (measured by measure_process_links around `ghost_bytes`)
/// beside the profile at `profile_path` (process_links_path), for people and
/// for a cluster profile's network figures; a file that cannot be written is
/// a warning, never a failure of the solve. Rank 0's.
void keep_process_links(const std::string& profile_path, const std::vector<ProcessLink>& links,
                        std::size_t ghost_bytes);

/// Adds to `spread` (a gather_profiles profile) the link between every device
/// of a process and every device of the next (`devices`, `owner` as
/// gather_devices gives them), from `links`: what a device at a process
/// boundary pays for its ghost rows. Devices of processes that are no
/// neighbours are priced as never meeting (an hour a trip).
void add_process_links(Profile& spread, const std::vector<ProcessLink>& links, const std::vector<DeviceInfo>& devices,
                       const std::vector<int>& owner);

/// Rank 0's plan (its parts and variant) on every process; the others keep
/// their own origin and prediction. Collective.
Plan rank0_plan(Processes& processes, const Plan& plan);

/// `options.devices` narrowed to the one device of this machine that a
/// process of local rank `local_rank` takes (RankDevices::Local).
std::string local_device(const Topology& topology, const RuntimeOptions& options, int local_rank);

}  // namespace hetstencil
