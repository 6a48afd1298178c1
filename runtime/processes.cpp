#include "runtime/processes.hpp"

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "hetstencil/error.hpp"
#include "hetstencil/processes.hpp"

namespace hetstencil {

namespace {

// A device's name as gather_devices gives it.
std::string spread_name(const Processes& processes, std::size_t rank, const std::string& name) {
  return processes.size() > 1 ? "r" + std::to_string(rank) + "." + name : name;
}

}  // namespace

bool has_mpi() { return mpi_built(); }

bool launched_by_mpi() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(variable)) return true;
  }
  return false;
}

MpiSession::MpiSession() {
  const World w = init_mpi();
  world_ = w.communicator;
  rank_ = w.rank;
  size_ = w.size;
}

MpiSession::~MpiSession() { finalize_mpi(); }

void MpiSession::abort(int code) const { abort_mpi(world_, code); }

void agree(Processes& processes, const std::function<void()>& step) {
  std::string failure;  // "": none; else 'I' (InvalidArgument) or 'E', then the message
  try {
    step();
  } catch (const InvalidArgument& e) {
    failure = std::string("I") + e.what();
  } catch (const std::exception& e) {
    failure = std::string("E") + e.what();
  }
  const std::vector<std::string> all = processes.all_gather(failure);
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].empty()) continue;
    const std::string message = "rank " + std::to_string(r) + ": " + all[r].substr(1);
    if (all[r][0] == 'I') HETSTENCIL_THROW(InvalidArgument, message);
    HETSTENCIL_THROW(Error, message);
  }
}

std::vector<DeviceInfo> gather_devices(Processes& processes, const std::vector<DeviceInfo>& mine,
                                       std::vector<int>& owner) {
  nlohmann::json list = nlohmann::json::array();
  for (const DeviceInfo& d : mine) {
    list.push_back({d.name, d.kind == DeviceKind::Gpu ? "gpu" : "cpu", d.numa_node, d.cores, d.threads,
                    d.description, d.key});
  }
  std::vector<DeviceInfo> all;
  owner.clear();
  const std::vector<std::string> gathered = processes.all_gather(list.dump());
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    for (const auto& d : nlohmann::json::parse(gathered[r])) {
      DeviceInfo info;
      info.name = d[0].get<std::string>();
      info.name = spread_name(processes, r, info.name);
      info.kind = d[1].get<std::string>() == "gpu" ? DeviceKind::Gpu : DeviceKind::Cpu;
      info.numa_node = d[2].get<int>();
      info.cores = d[3].get<std::vector<int>>();
      info.threads = d[4].get<int>();
      info.description = "rank " + std::to_string(r) + ", " + d[5].get<std::string>();
      info.key = d[6].get<std::string>();
      all.push_back(info);
      owner.push_back(static_cast<int>(r));
    }
  }
  return all;
}

Profile gather_profiles(Processes& processes, const std::optional<Profile>& mine) {
  const std::vector<std::string> gathered = processes.all_gather(mine ? to_json(*mine, -1) : std::string());
  Profile all;
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    if (gathered[r].empty()) continue;
    const Profile theirs = profile_from_json(gathered[r], "rank " + std::to_string(r) + "'s profile");
    for (const auto& [name, device] : theirs.devices) {
      DeviceProfile renamed = device;
      renamed.name = spread_name(processes, r, name);
      all.devices[renamed.name] = renamed;
    }
    for (const auto& [key, link] : theirs.links) {
      const std::size_t arrow = key.find("->");
      if (arrow == std::string::npos) continue;
      all.links[link_key(spread_name(processes, r, key.substr(0, arrow)),
                         spread_name(processes, r, key.substr(arrow + 2)))] = link;
    }
  }
  return all;
}

Plan rank0_plan(Processes& processes, const Plan& plan) {
  nlohmann::json parts = nlohmann::json::array();
  for (const Assignment& a : plan.parts) parts.push_back({a.device, a.first_row, a.rows});
  const nlohmann::json sent = {{"variant", static_cast<int>(plan.variant.variant)},
                               {"param", plan.variant.param},
                               {"parts", parts}};
  const nlohmann::json got = nlohmann::json::parse(processes.broadcast(sent.dump()));
  Plan out = plan;
  out.parts.clear();
  for (const auto& a : got.at("parts")) {
    out.parts.push_back(Assignment{a[0].get<std::size_t>(), a[1].get<std::int64_t>(), a[2].get<std::int64_t>()});
  }
  out.variant = VariantChoice{static_cast<Variant>(got.at("variant").get<int>()), got.at("param").get<int>()};
  return out;
}

std::string local_device(const Topology& topology, const RuntimeOptions& options, int local_rank) {
  const std::vector<DeviceInfo> offered = devices_of(topology, options);
  if (local_rank >= static_cast<int>(offered.size())) {
    std::string names;
    for (const DeviceInfo& d : offered) names += (names.empty() ? "" : ",") + d.name;
    HETSTENCIL_THROW(InvalidArgument, "this process is number " + std::to_string(local_rank) +
                                          " (from 0) of its node, which offers " + std::to_string(offered.size()) +
                                          " device(s) (" + names + "): one process a device at most");
  }
  return offered[static_cast<std::size_t>(local_rank)].name;
}

}  // namespace hetstencil
