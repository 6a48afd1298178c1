// hetstencil probe: what the runtime sees of this machine (or of a described one)
// and the devices it makes of it.
#include <memory>
#include <string>

#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

#include "hetstencil/device_info.hpp"
#include "hetstencil/runtime.hpp"
#include "hetstencil/topology.hpp"
#include "tools/hetstencil/commands.hpp"
#include "tools/hetstencil/machine_options.hpp"

namespace hetstencil::cli {
namespace {

struct ProbeOptions {
  RuntimeOptions machine;
  bool json = false;
};

double gib(std::uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0); }

std::string where(const Topology& t, const GpuInfo& g) {
  if (g.numa < 0) return "locality unknown";
  return fmt::format("NUMA node {} (socket {})", t.numa_nodes[static_cast<std::size_t>(g.numa)].os_index,
                     t.packages[static_cast<std::size_t>(g.package)].os_index);
}

void print_summary(const Topology& t, const std::vector<DeviceInfo>& devices) {
  fmt::print("machine: {}\n", t.source);
  for (const auto& p : t.packages) {
    fmt::print("socket {}{}\n", p.os_index, p.cpu_model.empty() ? "" : " (" + p.cpu_model + ")");
    for (int n : p.numa_nodes) {
      const NumaNodeInfo& node = t.numa_nodes[static_cast<std::size_t>(n)];
      std::vector<int> cores;
      int threads = 0;
      for (int c : node.cores) {
        cores.push_back(t.cores[static_cast<std::size_t>(c)].os_index);
        threads += static_cast<int>(t.cores[static_cast<std::size_t>(c)].pus.size());
      }
      fmt::print("  NUMA node {} ({:.1f} GiB): cores {} ({} hardware threads)\n", node.os_index,
                 gib(node.memory_bytes), cores.empty() ? "none" : index_list(cores), threads);
    }
  }
  fmt::print("GPUs: {}\n", t.gpus.empty() ? "none" : std::to_string(t.gpus.size()));
  for (const auto& g : t.gpus) {
    fmt::print("  gpu{}  {}  sm_{}{}  {} SMs  {:.1f} GiB  PCI {}  {}  {}\n", g.index, g.name, g.compute_major,
               g.compute_minor, g.sm_count, gib(g.memory_bytes), g.pci_bus_id.empty() ? "?" : g.pci_bus_id,
               g.uuid.empty() ? "uuid ?" : g.uuid, where(t, g));
  }
  if (t.gpus.size() > 1) {
    fmt::print("links (peer access; CUDA performance rank, 0 best):\n{:>8}", "");
    for (const auto& g : t.gpus) fmt::print("{:>14}", "gpu" + std::to_string(g.index));
    fmt::print("\n");
    for (std::size_t a = 0; a < t.gpus.size(); ++a) {
      fmt::print("{:>8}", "gpu" + std::to_string(a));
      for (std::size_t b = 0; b < t.gpus.size(); ++b) {
        const GpuLink& l = t.links[a][b];
        const std::string cell = a == b ? "-"
                                 : l.peer ? fmt::format("{} ({})", l.kind, l.performance_rank)
                                          : (t.this_machine ? "no peer" : "unknown");
        fmt::print("{:>14}", cell);
      }
      fmt::print("\n");
    }
  }
  fmt::print("devices:\n");
  for (const auto& d : devices) fmt::print("  {:<6} {}\n", d.name, d.description);
}

int run_probe(const ProbeOptions& o) {
  const Topology t = load_topology(o.machine.topology);
  const std::vector<DeviceInfo> devices = devices_of(t, o.machine);
  if (o.json) {
    // The topology's object (its hetstencil_version too) with the devices beside it: a format of its own.
    nlohmann::json j = nlohmann::json::parse(to_json(t));
    j["devices"] = nlohmann::json::parse(to_json(devices)).at("devices");
    j["schema"] = "hetstencil-probe";
    j["schema_version"] = 1;
    fmt::print("{}\n", j.dump(2));
  } else {
    print_summary(t, devices);
  }
  return 0;
}

}  // namespace

Command add_probe_command(CLI::App& app) {
  auto o = std::make_shared<ProbeOptions>();
  CLI::App* sub = app.add_subcommand("probe", "Show the sockets, NUMA nodes, cores, GPUs and links, and the devices");
  add_machine_options(sub, o->machine);
  sub->add_flag("--json", o->json, "print one JSON object (sockets, gpus, links, devices)");
  return [o] { return run_probe(*o); };
}

}  // namespace hetstencil::cli
