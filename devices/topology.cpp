#include "hetstencil/topology.hpp"

#include <hwloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "core/log.hpp"
#include "core/schema.hpp"
#include "devices/backend.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using TopologyHandle = std::unique_ptr<hwloc_topology, TopologyDeleter>;

struct BitmapDeleter {
  void operator()(hwloc_bitmap_s* b) const { hwloc_bitmap_free(b); }
};
using BitmapHandle = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

// An hwloc XML topology, as `lstopo machine.xml` writes.
const char* const kXmlHint = "give an hwloc XML topology, as `lstopo machine.xml` writes";

// A description as it appears in a message: a huge one is cut.
std::string quoted(const std::string& text) {
  constexpr std::size_t kMost = 200;
  return "'" + (text.size() <= kMost ? text : text.substr(0, kMost) + "...") + "'";
}

// What hwloc reports for a bad file depends on how it was built (with or
// without its libxml2 plugin), so the file is checked here before hwloc sees it.
void check_topology_file(const std::string& path) {
  const std::string file = "topology file " + quoted(path);
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) HETSTENCIL_THROW(InvalidArgument, file + " does not exist");
    HETSTENCIL_THROW(InvalidArgument, "cannot read " + file + ": " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) HETSTENCIL_THROW(InvalidArgument, file + " is a directory; " + kXmlHint);
  if (!S_ISREG(st.st_mode)) HETSTENCIL_THROW(InvalidArgument, file + " is not a regular file; " + kXmlHint);
  if (access(path.c_str(), R_OK) != 0) {
    HETSTENCIL_THROW(InvalidArgument, "cannot read " + file + ": " + std::strerror(errno));
  }
  if (st.st_size == 0) HETSTENCIL_THROW(InvalidArgument, file + " is empty; " + kXmlHint);
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(&head[0], static_cast<std::streamsize>(head.size()));
  if (in.bad()) HETSTENCIL_THROW(InvalidArgument, "cannot read " + file);
  head.resize(static_cast<std::size_t>(in.gcount()));
  // The XML declaration (after a byte order mark or blanks) or the element itself
  // comes first, and the <topology> element follows the declarations.
  const std::size_t start = head.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
  const bool xml = start != std::string::npos &&
                   (head.compare(start, 5, "<?xml") == 0 || head.compare(start, 9, "<topology") == 0);
  if (!xml || head.find("<topology") == std::string::npos) {
    HETSTENCIL_THROW(InvalidArgument, file + " is not an hwloc XML topology (no <topology> element); " + kXmlHint);
  }
  // hwloc never writes entities; expanding them crashed hwloc 2.10's libxml2 reader.
  if (head.find("<!ENTITY") != std::string::npos) {
    HETSTENCIL_THROW(InvalidArgument, file + " declares XML entities, which no hwloc topology has; " + kXmlHint);
  }
}

[[noreturn]] void throw_unreadable(const TopologySource& source) {
  if (!source.xml_file.empty()) {
    HETSTENCIL_THROW(InvalidArgument, "topology file " + quoted(source.xml_file) +
                                          " is not a valid hwloc XML topology (hwloc cannot read it); " + kXmlHint);
  }
  HETSTENCIL_THROW(InvalidArgument, quoted(source.synthetic) +
                                        " is not an hwloc synthetic topology (e.g. \"pack:2 numa:1 core:8 pu:1\")");
}

TopologyHandle open_topology(const TopologySource& source) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    HETSTENCIL_THROW(SystemError, std::string("hwloc_topology_init failed: ") + std::strerror(errno));
  }
  TopologyHandle topology(raw);
  // Keep GPUs (and the PCI devices they hang from) to learn their locality.
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (source.is_this_machine()) {
    // The GPUs are read through the backends' probes (the CUDA runtime); hwloc's GPU plugins would
    // only start the drivers again (and leak what they allocate there).
    for (const char* component : {"cuda", "nvml", "opencl", "rsmi", "levelzero", "gl"}) {
      if (hwloc_topology_set_components(raw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, component) != 0) {
        log::debug("hwloc: cannot leave out its {} component: {}", component, std::strerror(errno));
      }
    }
  } else if (!source.xml_file.empty()) {
    check_topology_file(source.xml_file);
    if (hwloc_topology_set_xml(raw, source.xml_file.c_str()) != 0) throw_unreadable(source);
  } else if (!source.synthetic.empty()) {
    if (hwloc_topology_set_synthetic(raw, source.synthetic.c_str()) != 0) throw_unreadable(source);
  }
  if (hwloc_topology_load(raw) != 0) {
    if (!source.is_this_machine()) throw_unreadable(source);
    HETSTENCIL_THROW(InvalidArgument, std::string("hwloc cannot load the topology of this machine: ") +
                                          std::strerror(errno));
  }
  return topology;
}

// Reading walks each level once and finds where an object lies from its
// ancestors: hwloc's lookups inside a cpuset scan a whole level per call, which
// would make reading a machine of thousands of cores take minutes.

// The objects of one type, in logical order.
std::vector<hwloc_obj_t> objects_of(hwloc_topology_t topology, hwloc_obj_type_t type) {
  std::vector<hwloc_obj_t> out;
  for (hwloc_obj_t o = hwloc_get_next_obj_by_type(topology, type, nullptr); o;
       o = hwloc_get_next_obj_by_type(topology, type, o)) {
    out.push_back(o);
  }
  return out;
}

// The index into `packages` of the package holding `o`, -1 when none does.
// Without packages (`packages` is then the root alone) everything is in 0.
int package_holding(hwloc_topology_t topology, const std::vector<hwloc_obj_t>& packages, hwloc_obj_t o) {
  if (packages.front()->type != HWLOC_OBJ_PACKAGE) return 0;
  const hwloc_obj_t package = hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_PACKAGE, o);
  return package ? static_cast<int>(package->logical_index) : -1;
}

// Per package, its last-level caches added up: its L3s, or its L2s where it has
// no L3 (AMD parts have several L3s per package).
std::vector<std::uint64_t> last_level_cache_bytes(hwloc_topology_t topology, const std::vector<hwloc_obj_t>& packages) {
  std::vector<std::uint64_t> bytes(packages.size(), 0);
  for (hwloc_obj_type_t level : {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE}) {
    std::vector<std::uint64_t> level_bytes(packages.size(), 0);
    for (hwloc_obj_t c : objects_of(topology, level)) {
      const int p = package_holding(topology, packages, c);
      if (p >= 0 && !hwloc_bitmap_iszero(c->cpuset)) level_bytes[static_cast<std::size_t>(p)] += c->attr->cache.size;
    }
    for (std::size_t p = 0; p < bytes.size(); ++p) {
      if (bytes[p] == 0) bytes[p] = level_bytes[p];
    }
  }
  return bytes;
}

// A NUMA node's package: the one above it, or for a node of several packages,
// the first it shares processors with.
int package_of_node(hwloc_topology_t topology, const std::vector<hwloc_obj_t>& packages, hwloc_obj_t node) {
  const int p = package_holding(topology, packages, node);
  if (p >= 0) return p;
  for (std::size_t q = 0; q < packages.size(); ++q) {
    if (hwloc_bitmap_intersects(node->cpuset, packages[q]->cpuset)) return static_cast<int>(q);
  }
  return 0;
}

// A core's NUMA node: of the nodes whose processors include it (its nodeset),
// the first in logical order; `logical_of` maps a node's OS index to its index.
int numa_of_core(hwloc_obj_t core, const std::vector<hwloc_obj_t>& nodes, const std::map<unsigned, int>& logical_of) {
  int best = -1;
  unsigned os = 0;
  hwloc_bitmap_foreach_begin(os, core->nodeset) {
    const auto it = logical_of.find(os);
    if (it != logical_of.end() && (best < 0 || it->second < best) &&
        hwloc_bitmap_isincluded(core->cpuset, nodes[static_cast<std::size_t>(it->second)]->cpuset)) {
      best = it->second;
    }
  }
  hwloc_bitmap_foreach_end();
  return best < 0 ? 0 : best;
}

// The PUs this process may run on, where its binding (taskset, or an MPI
// launcher's --bind-to) leaves out some of the machine's; null when it may
// run on all of them. Processes that a launcher bound to their own cores then
// keep their workers there instead of all binding them to the machine's first
// cores.
BitmapHandle process_binding(hwloc_topology_t topology) {
  BitmapHandle bound(hwloc_bitmap_alloc());
  if (!bound) HETSTENCIL_THROW(SystemError, "hwloc_bitmap_alloc failed: out of memory");
  if (hwloc_get_cpubind(topology, bound.get(), HWLOC_CPUBIND_PROCESS) != 0) {
    log::debug("hwloc cannot read this process's binding ({}): every core is used", std::strerror(errno));
    return BitmapHandle();
  }
  const hwloc_const_cpuset_t all = hwloc_topology_get_allowed_cpuset(topology);
  if (hwloc_bitmap_iszero(bound.get()) || hwloc_bitmap_isincluded(all, bound.get())) return BitmapHandle();
  return bound;
}

// One package for the whole machine when hwloc reports none (some VMs), and a
// core per PU when it reports no cores. `bound`: the PUs to keep (null: all).
Topology read(hwloc_topology_t topology, hwloc_const_bitmap_t bound) {
  Topology t;
  std::vector<hwloc_obj_t> packages = objects_of(topology, HWLOC_OBJ_PACKAGE);
  if (packages.empty()) packages.push_back(hwloc_get_root_obj(topology));
  const std::vector<std::uint64_t> cache_bytes = last_level_cache_bytes(topology, packages);
  for (std::size_t p = 0; p < packages.size(); ++p) {
    PackageInfo info;
    info.os_index = packages[p]->type == HWLOC_OBJ_PACKAGE ? static_cast<int>(packages[p]->os_index) : 0;
    if (const char* model = hwloc_obj_get_info_by_name(packages[p], "CPUModel")) info.cpu_model = model;
    info.cache_bytes = cache_bytes[p];
    t.packages.push_back(info);
  }

  const std::vector<hwloc_obj_t> nodes = objects_of(topology, HWLOC_OBJ_NUMANODE);
  std::map<unsigned, int> node_logical_of;
  for (hwloc_obj_t n : nodes) {
    NumaNodeInfo info;
    info.os_index = static_cast<int>(n->os_index);
    info.memory_bytes = n->attr ? n->attr->numanode.local_memory : 0;
    info.package = package_of_node(topology, packages, n);
    node_logical_of.emplace(n->os_index, static_cast<int>(t.numa_nodes.size()));
    t.packages[static_cast<std::size_t>(info.package)].numa_nodes.push_back(static_cast<int>(t.numa_nodes.size()));
    t.numa_nodes.push_back(info);
  }
  if (t.numa_nodes.empty()) {
    t.numa_nodes.push_back(NumaNodeInfo{});
    t.packages[0].numa_nodes.push_back(0);
  }

  const hwloc_obj_type_t core_type =
      hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  const std::vector<hwloc_obj_t> cores = objects_of(topology, core_type);
  // Each core's PUs (OS indices, in logical order); an offline or disallowed core has none.
  std::vector<std::vector<int>> pus(cores.size());
  std::vector<bool> online(cores.size(), false);
  for (hwloc_obj_t pu : objects_of(topology, HWLOC_OBJ_PU)) {
    const hwloc_obj_t core = core_type == HWLOC_OBJ_PU ? pu : hwloc_get_ancestor_obj_by_type(topology, core_type, pu);
    if (!core) continue;
    online[core->logical_index] = true;
    if (!bound || hwloc_bitmap_isset(bound, pu->os_index)) pus[core->logical_index].push_back(static_cast<int>(pu->os_index));
  }
  for (std::size_t c = 0; c < cores.size(); ++c) {
    if (pus[c].empty()) {
      if (online[c]) ++t.unbound_cores;
      continue;
    }
    CoreInfo info;
    info.os_index = static_cast<int>(cores[c]->os_index);
    info.pus = std::move(pus[c]);
    info.package = std::max(0, package_holding(topology, packages, cores[c]));
    info.numa = numa_of_core(cores[c], nodes, node_logical_of);
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

// On this machine the backends name the GPUs (the CUDA runtime); hwloc (or sysfs) places them.
void read_backend_gpus(hwloc_topology_t topology, Topology& t) {
  probe_backends(t);
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
    const BitmapHandle bound = source.is_this_machine() ? process_binding(handle.get()) : BitmapHandle();
    t = read(handle.get(), bound.get());
    if (source.is_this_machine()) {
      read_backend_gpus(handle.get(), t);
    } else {
      read_file_gpus(handle.get(), t);
    }
  } catch (const InvalidArgument&) {
    if (!source.is_this_machine()) throw;
    log::warn("hwloc cannot read this machine; using one socket with every online processor");
  }
  if (t.cores.empty()) {
    if (!source.is_this_machine()) HETSTENCIL_THROW(InvalidArgument, "the topology has no cores");
    t = fallback_topology();
    probe_backends(t);  // GPUs' locality unknown
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
  json out{{"source", t.source}, {"sockets", sockets}, {"gpus", gpus}, {"links", links}};
  stamp_schema(out, kTopologySchema);
  return out.dump(indent);
}

}  // namespace hetstencil
