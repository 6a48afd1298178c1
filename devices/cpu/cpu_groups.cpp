#include "devices/cpu/cpu_groups.hpp"

#include <string>

#include "hetstencil/error.hpp"
#include "partition/even_split.hpp"

namespace hetstencil {
namespace {

// "0-3,8,10-11" from OS core indices.
std::string core_list(const std::vector<int>& cores) {
  std::string out;
  for (std::size_t i = 0; i < cores.size();) {
    std::size_t j = i;
    while (j + 1 < cores.size() && cores[j + 1] == cores[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(cores[i]);
    if (j > i) out += "-" + std::to_string(cores[j]);
    i = j + 1;
  }
  return out;
}

std::vector<std::vector<int>> core_groups(const Topology& topology, int count) {
  std::vector<std::vector<int>> groups;
  if (count == 0) {
    for (const auto& node : topology.numa_nodes) {
      if (!node.cores.empty()) groups.push_back(node.cores);
    }
    return groups;
  }
  const auto ncores = static_cast<std::int64_t>(topology.cores.size());
  for (int g = 0; g < count; ++g) {
    std::vector<int> group;
    if (count <= ncores) {
      const Block b = even_block(ncores, count, g);
      for (std::int64_t c = b.begin; c < b.end; ++c) group.push_back(static_cast<int>(c));
    } else {
      group.push_back(static_cast<int>(g % ncores));
    }
    groups.push_back(group);
  }
  return groups;
}

}  // namespace

std::vector<CpuDeviceSpec> cpu_device_specs(const Topology& topology, int count, int threads) {
  if (count < 0) HETSTENCIL_THROW(InvalidArgument, "the number of CPU devices must be >= 0 (0: one per socket)");
  if (threads < 0) HETSTENCIL_THROW(InvalidArgument, "threads per CPU device must be >= 0 (0: one per core)");
  std::vector<CpuDeviceSpec> specs;
  for (const auto& group : core_groups(topology, count)) {
    CpuDeviceSpec spec;
    const CoreInfo& first = topology.cores[static_cast<std::size_t>(group.front())];
    spec.info.name = "cpu" + std::to_string(specs.size());
    spec.info.kind = DeviceKind::Cpu;
    spec.info.numa_node = topology.numa_nodes[static_cast<std::size_t>(first.numa)].os_index;
    for (int c : group) spec.info.cores.push_back(topology.cores[static_cast<std::size_t>(c)].os_index);
    const int workers = threads > 0 ? threads : static_cast<int>(group.size());
    for (int w = 0; w < workers; ++w) {
      const CoreInfo& core = topology.cores[static_cast<std::size_t>(group[static_cast<std::size_t>(w) % group.size()])];
      spec.worker_cpus.push_back(topology.this_machine ? core.pus : std::vector<int>{});
    }
    spec.info.threads = workers;
    spec.info.description = "package " +
                            std::to_string(topology.packages[static_cast<std::size_t>(first.package)].os_index) +
                            ", NUMA node " + std::to_string(spec.info.numa_node) + ", cores " +
                            core_list(spec.info.cores) + ", " + std::to_string(workers) + " threads";
    specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace hetstencil
