#include "devices/device_map.hpp"

#include <algorithm>
#include <functional>
#include <set>
#include <sstream>

#include "hetstencil/error.hpp"
#include "core/even_split.hpp"

namespace hetstencil {
namespace {

std::vector<int> bind_set(const Topology& t, int core) {
  return t.this_machine ? t.cores[static_cast<std::size_t>(core)].pus : std::vector<int>{};
}

int first_numa_with_cores(const Topology& t) {
  for (std::size_t n = 0; n < t.numa_nodes.size(); ++n) {
    if (!t.numa_nodes[n].cores.empty()) return static_cast<int>(n);
  }
  return 0;
}

std::string gpu_name(std::size_t g) { return "gpu" + std::to_string(g); }

// Reserves a host core for each chosen GPU and returns the GPU devices; `taken`
// collects the cores that leave the CPU devices.
template <class Chosen>
std::vector<DeviceSpec> gpu_devices(const Topology& t, const Chosen& chosen, std::set<int>& taken) {
  std::vector<DeviceSpec> specs;
  for (std::size_t g = 0; g < t.gpus.size(); ++g) {
    if (!chosen(gpu_name(g))) continue;
    const GpuInfo& gpu = t.gpus[g];
    const bool known = gpu.numa >= 0 && !t.numa_nodes[static_cast<std::size_t>(gpu.numa)].cores.empty();
    const int numa = known ? gpu.numa : first_numa_with_cores(t);
    const std::vector<int>& cores = t.numa_nodes[static_cast<std::size_t>(numa)].cores;
    // The node's first free core, keeping at least one core for its CPU device;
    // with more GPUs than spare cores, host threads share the last spare one.
    int host = cores.front();
    std::size_t free_cores = 0;
    for (int c : cores) free_cores += taken.count(c) ? 0 : 1;
    for (int c : cores) {
      if (!taken.count(c)) {
        host = c;
        break;
      }
    }
    const bool own_core = free_cores > 1;
    if (own_core) taken.insert(host);
    DeviceSpec spec;
    spec.gpu = static_cast<int>(g);
    spec.info.name = gpu_name(g);
    spec.info.kind = DeviceKind::Gpu;
    spec.info.numa_node = t.numa_nodes[static_cast<std::size_t>(numa)].os_index;
    spec.info.cores = {t.cores[static_cast<std::size_t>(host)].os_index};
    spec.info.threads = 1;
    spec.info.key = gpu.uuid.empty() ? spec.info.name : gpu.uuid;
    spec.own_core = own_core;
    spec.worker_cpus = {bind_set(t, host)};
    spec.info.description = gpu.name + ", host thread on core " + std::to_string(spec.info.cores.front()) +
                            (own_core ? "" : " (shared)") + ", NUMA node " + std::to_string(spec.info.numa_node) +
                            (known ? "" : " (locality unknown)");
    specs.push_back(std::move(spec));
  }
  return specs;
}

std::vector<std::vector<int>> core_groups(const Topology& t, int count, const std::set<int>& taken) {
  std::vector<std::vector<int>> groups;
  if (count == 0) {
    for (const auto& node : t.numa_nodes) {
      std::vector<int> group;
      for (int c : node.cores) {
        if (!taken.count(c)) group.push_back(c);
      }
      if (!group.empty()) groups.push_back(group);
    }
    return groups;
  }
  std::vector<int> free;
  for (int c = 0; c < static_cast<int>(t.cores.size()); ++c) {
    if (!taken.count(c)) free.push_back(c);
  }
  const auto n = static_cast<std::int64_t>(free.size());
  for (int g = 0; g < count; ++g) {
    std::vector<int> group;
    if (count <= n) {
      const Block b = even_block(n, count, g);
      for (std::int64_t k = b.begin; k < b.end; ++k) group.push_back(free[static_cast<std::size_t>(k)]);
    } else {
      group.push_back(free[static_cast<std::size_t>(g % n)]);
    }
    groups.push_back(group);
  }
  return groups;
}

std::vector<DeviceSpec> cpu_devices(const Topology& t, int count, int threads, const std::set<int>& taken) {
  std::vector<DeviceSpec> specs;
  for (const auto& group : core_groups(t, count, taken)) {
    DeviceSpec spec;
    const CoreInfo& first = t.cores[static_cast<std::size_t>(group.front())];
    spec.info.name = "cpu" + std::to_string(specs.size());
    spec.info.kind = DeviceKind::Cpu;
    spec.info.numa_node = t.numa_nodes[static_cast<std::size_t>(first.numa)].os_index;
    for (int c : group) spec.info.cores.push_back(t.cores[static_cast<std::size_t>(c)].os_index);
    const int workers = threads > 0 ? threads : static_cast<int>(group.size());
    for (int w = 0; w < workers; ++w) spec.worker_cpus.push_back(bind_set(t, group[static_cast<std::size_t>(w) % group.size()]));
    spec.info.threads = workers;
    spec.info.key = "cpu:node" + std::to_string(spec.info.numa_node) + ":cores" + index_list(spec.info.cores) +
                    ":threads" + std::to_string(workers);
    spec.cache_bytes = t.packages[static_cast<std::size_t>(first.package)].cache_bytes;
    spec.info.description = "package " + std::to_string(t.packages[static_cast<std::size_t>(first.package)].os_index) +
                            ", NUMA node " + std::to_string(spec.info.numa_node) + ", cores " +
                            index_list(spec.info.cores) + ", " + std::to_string(workers) + " threads";
    specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace

std::function<bool(const std::string&)> device_selection(const std::string& selection,
                                                        const std::vector<std::string>& all) {
  if (selection.empty() || selection == "all") return [](const std::string&) { return true; };
  std::vector<std::string> names;
  std::stringstream in(selection);
  for (std::string name; std::getline(in, name, ',');) {
    if (!name.empty()) names.push_back(name);
  }
  const bool exclude = !names.empty() && names.front()[0] == '-';
  std::string known;
  for (const auto& name : all) known += (known.empty() ? "" : ", ") + name;
  std::set<std::string> chosen;
  for (const auto& raw : names) {
    if ((raw[0] == '-') != exclude) {
      HETSTENCIL_THROW(InvalidArgument, "--devices '" + selection + "': name devices to use or, each with '-', "
                                        "devices to leave out, not both");
    }
    const std::string name = exclude ? raw.substr(1) : raw;
    // "cpu" and "gpu" stand for every device of that kind.
    if (name == "cpu" || name == "gpu") {
      for (const auto& known_name : all) {
        if (known_name.rfind(name, 0) == 0) chosen.insert(known_name);
      }
      continue;
    }
    if (std::find(all.begin(), all.end(), name) == all.end()) {
      HETSTENCIL_THROW(InvalidArgument, "no device '" + name + "' on this machine (devices: " + known + ")");
    }
    chosen.insert(name);
  }
  return [chosen, exclude](const std::string& name) { return (chosen.count(name) > 0) != exclude; };
}

std::string index_list(const std::vector<int>& indices) {
  std::string out;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(indices[i]);
    if (j > i) out += "-" + std::to_string(indices[j]);
    i = j + 1;
  }
  return out;
}

std::vector<DeviceSpec> map_devices(const Topology& topology, const DeviceMapOptions& options) {
  if (options.cpu_devices < 0 || options.cpu_devices > kMaxCpuDevices) {
    HETSTENCIL_THROW(InvalidArgument, "the number of CPU devices must be 0.." + std::to_string(kMaxCpuDevices) +
                                          " (0: one per socket), got " + std::to_string(options.cpu_devices));
  }
  if (options.threads < 0 || options.threads > kMaxThreadsPerDevice) {
    HETSTENCIL_THROW(InvalidArgument, "threads per CPU device must be 0.." + std::to_string(kMaxThreadsPerDevice) +
                                          " (0: one per core), got " + std::to_string(options.threads));
  }
  // Names do not depend on which cores GPUs take, so they are known up front.
  std::vector<std::string> names;
  for (const auto& d : cpu_devices(topology, options.cpu_devices, 1, {})) names.push_back(d.info.name);
  if (options.gpus) {
    for (std::size_t g = 0; g < topology.gpus.size(); ++g) names.push_back(gpu_name(g));
  }
  const auto chosen = device_selection(options.selection, names);

  std::set<int> taken;
  std::vector<DeviceSpec> gpus = options.gpus ? gpu_devices(topology, chosen, taken) : std::vector<DeviceSpec>{};
  std::vector<DeviceSpec> devices;
  for (auto& d : cpu_devices(topology, options.cpu_devices, options.threads, taken)) {
    if (chosen(d.info.name)) devices.push_back(std::move(d));
  }
  devices.insert(devices.end(), std::make_move_iterator(gpus.begin()), std::make_move_iterator(gpus.end()));
  if (!options.only.empty()) {
    const auto mine = std::find_if(devices.begin(), devices.end(), [&](const DeviceSpec& d) { return d.info.name == options.only; });
    if (mine == devices.end()) {
      HETSTENCIL_THROW(InvalidArgument, "--devices '" + options.selection + "' does not offer '" + options.only + "'");
    }
    return {std::move(*mine)};
  }
  if (devices.empty()) HETSTENCIL_THROW(InvalidArgument, "--devices '" + options.selection + "' leaves no device");
  return devices;
}

}  // namespace hetstencil
