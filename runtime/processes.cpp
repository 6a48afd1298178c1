#include "runtime/processes.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/log.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/processes.hpp"

namespace hetstencil {

namespace {

// A device's name as gather_devices gives it.
std::string spread_name(const Processes& processes, std::size_t rank, const std::string& name) {
  return processes.size() > 1 ? "r" + std::to_string(rank) + "." + name : name;
}

// Beside the solve's tags (the transport's 1 and 2): a measurement's messages
// never meet a solve's.
constexpr int kLinkTag = 101;

// The mean seconds of `rounds` rounds of `bytes` sent to each neighbour
// while as many come from each, as a solve's exchange goes (a process sends to
// both sides, waits for both neighbours' rows, and copies them from the
// buffers they arrived in into its ghost rows), every process at once, as in
// a solve: the links share the host's network stack (on one host, its cores
// and memory). The mean, not the median: a solve pays every round, and on a
// shared host the rare round that the scheduler delays costs more than all the
// others (docs/model.md: TCP loopback beside two compilers, 2 KB, median
// 5.5 us, mean 22-48 us).
double round_s(Processes& processes, const std::vector<int>& neighbours, std::size_t bytes, int rounds) {
  const std::size_t n = neighbours.size();
  std::vector<char> out(bytes), in(n * bytes), ghost(n * bytes);
  const std::atomic<bool> never{false};
  std::vector<std::string> what;
  for (int other : neighbours) what.push_back("a link measurement's message from rank " + std::to_string(other));
  double total = 0.0;
  for (int k = 0; k < rounds + 1; ++k) {  // the first round warms the path
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::unique_ptr<Message>> arriving, sent;
    for (std::size_t i = 0; i < n; ++i) arriving.push_back(processes.receive(neighbours[i], kLinkTag, &in[i * bytes], bytes));
    for (std::size_t i = 0; i < n; ++i) sent.push_back(processes.send(neighbours[i], kLinkTag, out.data(), bytes));
    for (std::size_t i = 0; i < n; ++i) wait_for(*sent[i], never, what[i]);
    for (std::size_t i = 0; i < n; ++i) {
      wait_for(*arriving[i], never, what[i]);
      std::memcpy(&ghost[i * bytes], &in[i * bytes], bytes);
    }
    if (k > 0) total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return total / rounds;
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

namespace {

// Processes of one node that a launcher left to share cores (OpenMPI binds 3
// or more ranks to a socket each) or GPUs would take turns on them: every
// process binds its workers and its GPUs' host threads to the first cores it
// may use (but --rank-devices local places each as one process would). Said
// once, by rank 0.
void warn_shared(const std::vector<DeviceInfo>& all, const std::vector<int>& owner,
                 const std::vector<std::string>& nodes) {
  for (std::size_t a = 0; a < all.size(); ++a) {
    for (std::size_t b = a + 1; b < all.size(); ++b) {
      const auto ra = static_cast<std::size_t>(owner[a]);
      const auto rb = static_cast<std::size_t>(owner[b]);
      if (ra == rb || nodes[ra] != nodes[rb]) continue;
      const bool gpus = all[a].kind == DeviceKind::Gpu && all[b].kind == DeviceKind::Gpu;
      const bool same_gpu = gpus && all[a].key == all[b].key;
      const bool cores_met = std::any_of(all[a].cores.begin(), all[a].cores.end(), [&](int c) {
        return std::find(all[b].cores.begin(), all[b].cores.end(), c) != all[b].cores.end();
      });
      if (!same_gpu && !cores_met) continue;
      log::warn("{} and {} (ranks {} and {} of node {}) share {}: they take turns on it and every process waits "
                "for them; bind each rank to cores of its own (mpirun --bind-to core) or give each rank one "
                "device (--rank-devices local)",
                all[a].name, all[b].name, ra, rb, nodes[ra], same_gpu ? "a GPU" : "cores");
      return;
    }
  }
}

}  // namespace

std::vector<DeviceInfo> gather_devices(Processes& processes, const std::vector<DeviceInfo>& mine,
                                       std::vector<int>& owner) {
  nlohmann::json list = nlohmann::json::array();
  for (const DeviceInfo& d : mine) {
    list.push_back({d.name, d.kind == DeviceKind::Gpu ? "gpu" : "cpu", d.numa_node, d.cores, d.threads,
                    d.description, d.key});
  }
  std::vector<DeviceInfo> all;
  std::vector<std::string> nodes;
  owner.clear();
  const nlohmann::json sent = {{"node", node_name()}, {"devices", list}};
  const std::vector<std::string> gathered = processes.all_gather(sent.dump());
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    const nlohmann::json theirs = nlohmann::json::parse(gathered[r]);
    nodes.push_back(theirs.at("node").get<std::string>());
    for (const auto& d : theirs.at("devices")) {
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
  if (processes.rank() == 0) warn_shared(all, owner, nodes);
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

std::vector<ProcessLink> measure_process_links(Processes& processes, std::size_t ghost_bytes, int rounds) {
  const int me = processes.rank();
  const std::size_t ghost = std::max<std::size_t>(ghost_bytes, 2);
  const std::vector<std::size_t> sizes{ghost / 2, ghost, 2 * ghost, 4 * ghost};
  std::vector<int> neighbours;
  if (me > 0) neighbours.push_back(me - 1);
  if (me + 1 < processes.size()) neighbours.push_back(me + 1);
  // Each link into this process costs its share of this process's round.
  std::vector<std::pair<double, double>> timed;
  processes.broadcast(std::string());  // every process starts together
  for (std::size_t bytes : sizes) {
    const double round = neighbours.empty() ? 0.0 : round_s(processes, neighbours, bytes, rounds);
    timed.emplace_back(static_cast<double>(bytes), round / static_cast<double>(std::max<std::size_t>(neighbours.size(), 1)));
  }
  const TransferCurve fitted = TransferCurve::fit(timed);
  const nlohmann::json mine = {fitted.latency_s, fitted.bytes_per_s};
  std::vector<ProcessLink> out;
  const std::vector<std::string> all = processes.all_gather(mine.dump());
  const auto curve = [&](std::size_t rank) {
    const nlohmann::json c = nlohmann::json::parse(all[rank]);
    return TransferCurve{c.at(0).get<double>(), c.at(1).get<double>()};
  };
  for (std::size_t r = 0; r + 1 < all.size(); ++r) out.push_back(ProcessLink{curve(r + 1), curve(r)});
  return out;
}

void keep_process_links(const std::string& profile_path, const std::vector<ProcessLink>& links,
                        std::size_t ghost_bytes) {
  const std::string path = process_links_path(profile_path);
  try {
    const std::string text = process_links_json(
        links, ghost_bytes,
        "every process at once, 1000 rounds a size (each process sends host messages of 1/2, 1, 2 and 4 times "
        "ghost_bytes to each neighbour while as many come from each, and copies them into its ghost rows), "
        "fitted to each size's mean round; a link into a process is its share of that process's round");
    make_cache_folder_for(path);
    AtomicFile file(path);
    file.write(text.data(), text.size());
    file.commit();
  } catch (const std::exception& e) {
    log::warn("the links between the processes were not kept in {}: {}", path, e.what());
  }
}

void add_process_links(Profile& spread, const std::vector<ProcessLink>& links, const std::vector<DeviceInfo>& devices,
                       const std::vector<int>& owner) {
  // Processes that are no neighbours never exchange (the executor gives them
  // consecutive rows in rank order): an hour a trip keeps the planner from an
  // order that would have them meet.
  const TransferCurve never{3600.0, 1.0};
  for (std::size_t a = 0; a < devices.size(); ++a) {
    for (std::size_t b = 0; b < devices.size(); ++b) {
      if (owner[b] == owner[a]) continue;
      const std::string key = link_key(devices[a].name, devices[b].name);
      if (owner[b] == owner[a] + 1) {
        spread.links[key] = links[static_cast<std::size_t>(owner[a])].down;
      } else if (owner[b] + 1 == owner[a]) {
        spread.links[key] = links[static_cast<std::size_t>(owner[b])].up;
      } else {
        spread.links[key] = never;
      }
    }
  }
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
