#include "hetstencil/topology.hpp"

#include <hwloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include <spdlog/spdlog.h>

#include "devices/cuda/cuda_info.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using TopologyHandle = std::unique_ptr<hwloc_topology, TopologyDeleter>;

TopologyHandle open_topology(const TopologySource& source) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    HETSTENCIL_THROW(SystemError, std::string("hwloc_topology_init failed: ") + std::strerror(errno));
  }
  TopologyHandle topology(raw);
  // Keep GPUs (and the PCI devices they hang from) to learn their locality.
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (!source.xml_file.empty()) {
    std::ifstream probe(source.xml_file);
    if (!probe) {
      HETSTENCIL_THROW(InvalidArgument,
                       "cannot read topology file '" + source.xml_file + "': " + std::strerror(errno));
    }
    if (hwloc_topology_set_xml(raw, source.xml_file.c_str()) != 0) {
      HETSTENCIL_THROW(InvalidArgument, "'" + source.xml_file + "' is not an hwloc XML topology");
    }
  } else if (!source.synthetic.empty()) {
    if (hwloc_topology_set_synthetic(raw, source.synthetic.c_str()) != 0) {
      HETSTENCIL_THROW(InvalidArgument, "'" + source.synthetic +
                                            "' is not an hwloc synthetic topology (e.g. \"pack:2 numa:1 core:8 pu:1\")");
    }
  }
  if (hwloc_topology_load(raw) != 0) {
    const std::string what = source.is_this_machine() ? std::string("this machine")
                                                      : "'" + (source.xml_file.empty() ? source.synthetic : source.xml_file) + "'";
    HETSTENCIL_THROW(InvalidArgument, "hwloc cannot load the topology of " + what + ": " + std::strerror(errno));
  }
  return topology;
}

std::vector<int> os_indices(hwloc_topology_t topology, hwloc_const_cpuset_t set, hwloc_obj_type_t type) {
  std::vector<int> out;
  for (hwloc_obj_t o = hwloc_get_next_obj_inside_cpuset_by_type(topology, set, type, nullptr); o;
       o = hwloc_get_next_obj_inside_cpuset_by_type(topology, set, type, o)) {
    out.push_back(static_cast<int>(o->os_index));
  }
  return out;
}

// The caches of the deepest level present inside `set`, added up (AMD parts
// have several L3s per package).
std::uint64_t last_level_cache_bytes(hwloc_topology_t topology, hwloc_const_cpuset_t set) {
  for (hwloc_obj_type_t level : {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE}) {
    std::uint64_t total = 0;
    for (hwloc_obj_t c = hwloc_get_next_obj_inside_cpuset_by_type(topology, set, level, nullptr); c;
         c = hwloc_get_next_obj_inside_cpuset_by_type(topology, set, level, c)) {
      total += c->attr->cache.size;
    }
    if (total > 0) return total;
  }
  return 0;
}

// One package for the whole machine when hwloc reports none (some VMs), and a
// core per PU when it reports no cores.
Topology read(hwloc_topology_t topology) {
  Topology t;
  hwloc_obj_t root = hwloc_get_root_obj(topology);

  const int npackages = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PACKAGE);
  std::vector<hwloc_obj_t> packages;
  for (int p = 0; p < npackages; ++p) packages.push_back(hwloc_get_obj_by_type(topology, HWLOC_OBJ_PACKAGE, p));
  if (packages.empty()) packages.push_back(root);
  for (hwloc_obj_t p : packages) {
    PackageInfo info;
    info.os_index = p == root ? 0 : static_cast<int>(p->os_index);
    if (const char* model = hwloc_obj_get_info_by_name(p, "CPUModel")) info.cpu_model = model;
    info.cache_bytes = last_level_cache_bytes(topology, p->cpuset);
    t.packages.push_back(info);
  }
  auto package_of = [&](hwloc_const_cpuset_t set) {
    for (std::size_t p = 0; p < packages.size(); ++p) {
      if (hwloc_bitmap_intersects(set, packages[p]->cpuset)) return static_cast<int>(p);
    }
    return 0;
  };

  const int nnodes = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
  std::vector<hwloc_obj_t> nodes;
  for (int n = 0; n < nnodes; ++n) nodes.push_back(hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, n));
  for (hwloc_obj_t n : nodes) {
    NumaNodeInfo info;
    info.os_index = static_cast<int>(n->os_index);
    info.memory_bytes = n->attr ? n->attr->numanode.local_memory : 0;
    info.package = package_of(n->cpuset);
    t.packages[static_cast<std::size_t>(info.package)].numa_nodes.push_back(static_cast<int>(t.numa_nodes.size()));
    t.numa_nodes.push_back(info);
  }
  if (t.numa_nodes.empty()) {
    t.numa_nodes.push_back(NumaNodeInfo{});
    t.packages[0].numa_nodes.push_back(0);
  }
  auto numa_of = [&](hwloc_const_cpuset_t set) {
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      if (hwloc_bitmap_isincluded(set, nodes[n]->cpuset)) return static_cast<int>(n);
    }
    return 0;
  };

  const hwloc_obj_type_t core_type =
      hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  const int ncores = hwloc_get_nbobjs_by_type(topology, core_type);
  for (int c = 0; c < ncores; ++c) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topology, core_type, c);
    CoreInfo info;
    info.os_index = static_cast<int>(core->os_index);
    info.pus = os_indices(topology, core->cpuset, HWLOC_OBJ_PU);
    if (info.pus.empty()) continue;  // offline or disallowed
    info.package = package_of(core->cpuset);
    info.numa = numa_of(core->cpuset);
    const int index = static_cast<int>(t.cores.size());
    t.packages[static_cast<std::size_t>(info.package)].cores.push_back(index);
    t.numa_nodes[static_cast<std::size_t>(info.numa)].cores.push_back(index);
    t.cores.push_back(std::move(info));
  }
  return t;
}

// The package and nearest NUMA node of an I/O object: those of its first
// non-I/O ancestor, unknown (-1) when that is the whole multi-package machine.
void place_gpu(hwloc_topology_t topology, hwloc_obj_t io, const Topology& t, GpuInfo& gpu) {
  hwloc_obj_t anchor = hwloc_get_non_io_ancestor_obj(topology, io);
  if (!anchor || !anchor->cpuset || (anchor == hwloc_get_root_obj(topology) && t.packages.size() > 1)) return;
  for (std::size_t p = 0; p < t.packages.size(); ++p) {
    const PackageInfo& package = t.packages[p];
    if (package.cores.empty()) continue;
    const CoreInfo& core = t.cores[static_cast<std::size_t>(package.cores.front())];
    if (hwloc_bitmap_isset(anchor->cpuset, static_cast<unsigned>(core.pus.front()))) {
      gpu.package = static_cast<int>(p);
      break;
    }
  }
  for (std::size_t n = 0; n < t.numa_nodes.size(); ++n) {
    if (anchor->nodeset && hwloc_bitmap_isset(anchor->nodeset, static_cast<unsigned>(t.numa_nodes[n].os_index))) {
      gpu.numa = static_cast<int>(n);
      if (gpu.package < 0) gpu.package = t.numa_nodes[n].package;
      break;
    }
  }
}

std::string bus_id_of(hwloc_obj_t pci) {
  char text[32];
  std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
                pci->attr->pcidev.dev, pci->attr->pcidev.func);
  return text;
}

const char* info_of(hwloc_obj_t o, const char* name) {
  const char* v = hwloc_obj_get_info_by_name(o, name);
  return v ? v : "";
}

// In file mode the GPUs are the file's CUDA co-processor OS devices ("cuda0"),
// completed by an NVML OS device on the same PCI device where there is one.
void read_file_gpus(hwloc_topology_t topology, Topology& t) {
  for (hwloc_obj_t o = hwloc_get_next_osdev(topology, nullptr); o; o = hwloc_get_next_osdev(topology, o)) {
    const bool cuda = o->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC && std::string(info_of(o, "Backend")) == "CUDA";
    if (!cuda) continue;
    GpuInfo g;
    g.index = static_cast<int>(t.gpus.size());
    g.name = info_of(o, "GPUModel");
    g.memory_bytes = std::strtoull(info_of(o, "CUDAGlobalMemorySize"), nullptr, 10) * 1024;
    g.sm_count = std::atoi(info_of(o, "CUDAMultiProcessors"));
    std::sscanf(info_of(o, "CUDACapability"), "%d.%d", &g.compute_major, &g.compute_minor);
    hwloc_obj_t pci = o->parent && o->parent->type == HWLOC_OBJ_PCI_DEVICE ? o->parent : nullptr;
    if (pci) {
      g.pci_bus_id = bus_id_of(pci);
      for (hwloc_obj_t s = pci->io_first_child; s; s = s->next_sibling) {
        if (s->type == HWLOC_OBJ_OS_DEVICE && *info_of(s, "NVIDIAUUID")) g.uuid = info_of(s, "NVIDIAUUID");
      }
    }
    place_gpu(topology, o, t, g);
    t.gpus.push_back(g);
  }
  // A file says nothing of peer access.
  t.links.assign(t.gpus.size(), std::vector<GpuLink>(t.gpus.size()));
}

// On this machine the CUDA runtime names the GPUs; hwloc (or sysfs) places them.
void read_cuda_gpus(hwloc_topology_t topology, Topology& t) {
  t.gpus = cuda_gpus();
  t.links = cuda_links();
  for (GpuInfo& g : t.gpus) {
    if (hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(topology, g.pci_bus_id.c_str())) {
      place_gpu(topology, pci, t, g);
    }
    if (g.numa >= 0) continue;
    std::ifstream sysfs("/sys/bus/pci/devices/" + g.pci_bus_id + "/numa_node");
    int os_node = -1;
    if (sysfs >> os_node && os_node >= 0) {
      for (std::size_t n = 0; n < t.numa_nodes.size(); ++n) {
        if (t.numa_nodes[n].os_index == os_node) {
          g.numa = static_cast<int>(n);
          g.package = t.numa_nodes[n].package;
        }
      }
    }
  }
}

// Without hwloc's view of this machine, still run: one package, one node, the
// online processors as cores.
Topology fallback_topology() {
  Topology t;
  t.packages.push_back(PackageInfo{});
  t.numa_nodes.push_back(NumaNodeInfo{});
  t.packages[0].numa_nodes.push_back(0);
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  for (int c = 0; c < (n > 0 ? n : 1); ++c) {
    t.cores.push_back(CoreInfo{c, {c}, 0, 0});
    t.packages[0].cores.push_back(c);
    t.numa_nodes[0].cores.push_back(c);
  }
  return t;
}

}  // namespace

int Topology::hardware_threads() const {
  int n = 0;
  for (const auto& c : cores) n += static_cast<int>(c.pus.size());
  return n;
}

Topology load_topology(const TopologySource& source) {
  Topology t;
  try {
    TopologyHandle handle = open_topology(source);
    t = read(handle.get());
    if (source.is_this_machine()) {
      read_cuda_gpus(handle.get(), t);
    } else {
      read_file_gpus(handle.get(), t);
    }
  } catch (const InvalidArgument&) {
    if (!source.is_this_machine()) throw;
    spdlog::warn("hwloc cannot read this machine; using one socket with every online processor");
  }
  if (t.cores.empty()) {
    if (!source.is_this_machine()) HETSTENCIL_THROW(InvalidArgument, "the topology has no cores");
    t = fallback_topology();
    t.gpus = cuda_gpus();  // locality unknown
    t.links = cuda_links();
  }
  t.this_machine = source.is_this_machine();
  if (t.links.size() != t.gpus.size()) t.links.assign(t.gpus.size(), std::vector<GpuLink>(t.gpus.size()));
  t.source = source.is_this_machine() ? "this machine" : (source.xml_file.empty() ? source.synthetic : source.xml_file);
  return t;
}

std::string to_json(const Topology& t, int indent) {
  using nlohmann::json;
  json sockets = json::array();
  for (const auto& p : t.packages) {
    json nodes = json::array();
    for (int n : p.numa_nodes) {
      const NumaNodeInfo& node = t.numa_nodes[static_cast<std::size_t>(n)];
      json cores = json::array();
      for (int c : node.cores) cores.push_back(t.cores[static_cast<std::size_t>(c)].os_index);
      nodes.push_back({{"os_index", node.os_index}, {"memory_bytes", node.memory_bytes}, {"cores", cores}});
    }
    json cores = json::array();
    for (int c : p.cores) {
      const CoreInfo& core = t.cores[static_cast<std::size_t>(c)];
      cores.push_back({{"os_index", core.os_index}, {"pus", core.pus}});
    }
    sockets.push_back({{"os_index", p.os_index}, {"cpu_model", p.cpu_model}, {"numa_nodes", nodes}, {"cores", cores}});
  }
  json gpus = json::array();
  for (const auto& g : t.gpus) {
    gpus.push_back({{"index", g.index},
                    {"name", g.name},
                    {"uuid", g.uuid},
                    {"pci_bus_id", g.pci_bus_id},
                    {"compute_capability", std::to_string(g.compute_major) + "." + std::to_string(g.compute_minor)},
                    {"sm_count", g.sm_count},
                    {"memory_bytes", g.memory_bytes},
                    {"numa_node", g.numa >= 0 ? json(t.numa_nodes[static_cast<std::size_t>(g.numa)].os_index) : json()},
                    {"socket", g.package >= 0 ? json(t.packages[static_cast<std::size_t>(g.package)].os_index) : json()}});
  }
  json links = json::array();
  for (std::size_t a = 0; a < t.links.size(); ++a) {
    for (std::size_t b = 0; b < t.links[a].size(); ++b) {
      if (a == b) continue;
      const GpuLink& l = t.links[a][b];
      links.push_back({{"from", a}, {"to", b}, {"peer", l.peer}, {"kind", l.kind}, {"performance_rank", l.performance_rank}});
    }
  }
  return json{{"source", t.source}, {"sockets", sockets}, {"gpus", gpus}, {"links", links}}.dump(indent);
}

}  // namespace hetstencil
