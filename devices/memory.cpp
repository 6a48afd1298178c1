#include "devices/memory.hpp"

#include <dirent.h>
#include <numa.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>

#include "core/log.hpp"

namespace hetstencil {
namespace {

// Page tables, thread stacks, the staging rows and the allocator's slack.
constexpr std::uint64_t kHostReserve = std::uint64_t(64) << 20;

std::vector<std::string> entries(const std::string& folder, const std::string& prefix) {
  std::vector<std::string> out;
  DIR* dir = opendir(folder.c_str());
  if (!dir) return out;
  while (const dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) == 0) out.push_back(name);
  }
  closedir(dir);
  return out;
}

// Memory plugged into `folder` (a node's folder, or the memory folder itself):
// its online memory blocks. 0 where sysfs does not say.
std::uint64_t plugged_bytes(const std::string& folder) {
  std::ifstream size_file("/sys/devices/system/memory/block_size_bytes");
  std::string hex;
  if (!(size_file >> hex)) return 0;
  std::uint64_t block = 0;
  try {
    block = std::stoull(hex, nullptr, 16);
  } catch (const std::exception&) {
    return 0;
  }
  std::uint64_t blocks = 0;
  for (const std::string& name : entries(folder, "memory")) {
    std::ifstream state(folder + "/" + name + "/state");
    std::string s;
    if (state >> s && s == "online") ++blocks;
  }
  return blocks * block;
}

// A virtio-mem device plugs memory in as the guest uses it.
bool memory_can_be_plugged() { return !entries("/sys/bus/virtio/drivers/virtio_mem", "virtio").empty(); }

MemoryFigure machine_figure() {
  MemoryFigure m;
  m.where = "this machine's memory";
  const long page = sysconf(_SC_PAGESIZE);
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long available = sysconf(_SC_AVPHYS_PAGES);
  if (page > 0 && pages > 0) m.reported = static_cast<std::uint64_t>(page) * static_cast<std::uint64_t>(pages);
  if (page > 0 && available > 0) m.free = static_cast<std::uint64_t>(page) * static_cast<std::uint64_t>(available);
  m.total = std::max(m.reported, plugged_bytes("/sys/devices/system/memory"));
  m.reserved = kHostReserve;
  m.grows = memory_can_be_plugged();
  return m;
}

std::string with_users(const std::vector<std::string>& who) {
  std::string out;
  for (std::size_t k = 0; k < who.size(); ++k) out += (k == 0 ? "" : k + 1 == who.size() ? " and " : ", ") + who[k];
  return out;
}

}  // namespace

MemoryFigure numa_node_memory(int node) {
  if (node < 0 || numa_available() == -1 || node > numa_max_node()) return machine_figure();
  long long free = 0;
  const long long size = numa_node_size64(node, &free);
  if (size <= 0) return machine_figure();
  MemoryFigure m;
  m.where = "NUMA node " + std::to_string(node);
  m.reported = static_cast<std::uint64_t>(size);
  m.free = static_cast<std::uint64_t>(std::max(free, 0LL));
  m.total = std::max(m.reported, plugged_bytes("/sys/devices/system/node/node" + std::to_string(node)));
  m.reserved = kHostReserve;
  m.grows = memory_can_be_plugged();
  return m;
}

MemoryFigure host_memory() {
  MemoryFigure m = machine_figure();
  if (numa_available() == -1) return m;
  // The nodes' figures, where a balloon shows: the machine's may hide it.
  std::uint64_t reported = 0, free = 0, total = 0;
  for (int node = 0; node <= numa_max_node(); ++node) {
    if (numa_bitmask_isbitset(numa_all_nodes_ptr, static_cast<unsigned>(node)) == 0) continue;
    const MemoryFigure n = numa_node_memory(node);
    reported += n.reported;
    free += n.free;
    total += n.total;
  }
  if (reported > 0) {
    m.reported = std::min(m.reported, reported);
    m.free = std::min(m.free, free);
    m.total = std::max(m.total, total);
  }
  return m;
}

void check_memory(const std::vector<MemoryDemand>& demands) {
  struct Use {
    MemoryFigure memory;
    std::vector<std::string> who;
    std::uint64_t bytes = 0;
  };
  std::map<std::string, Use> uses;
  for (const MemoryDemand& d : demands) {
    Use& u = uses[d.memory.where];
    u.memory = d.memory;
    u.who.push_back(d.who);
    u.bytes += d.bytes;  // each demand is at most a few grids of kMaxGridBytes: no overflow
  }
  for (const auto& [where, u] : uses) {
    const MemoryFigure& m = u.memory;
    const std::string need = with_users(u.who) + (u.who.size() == 1 ? " needs " : " need ") + bytes_text(u.bytes) +
                             " of " + where;
    if (!m.grows && m.total > 0 && u.bytes > m.total - std::min(m.total, m.reserved)) {
      HETSTENCIL_THROW(InvalidArgument, need + ", which has " + bytes_text(m.total) + " in all (" +
                                            bytes_text(m.reserved) + " of it kept for the runtime); " +
                                            "choose a smaller grid or more devices");
    }
    if (m.grows && m.total > 0 && u.bytes > m.total) {
      log::warn("{}, which has {} now; memory is plugged into this machine as it is used: trying", need,
                   bytes_text(m.total));
    } else if (u.bytes > m.reported) {
      log::warn("{}, which reports {} (up to {} as a balloon gives memory back): trying", need,
                   bytes_text(m.reported), bytes_text(m.total));
    } else if (u.bytes > m.free) {
      log::warn("{}, which has {} free of {}: the solve may swap or fail", need, bytes_text(m.free),
                   bytes_text(m.reported));
    }
  }
}

}  // namespace hetstencil
