#include "devices/topology.hpp"

#include <hwloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include <spdlog/spdlog.h>

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
  } catch (const InvalidArgument&) {
    if (!source.is_this_machine()) throw;
    spdlog::warn("hwloc cannot read this machine; using one socket with every online processor");
    t = fallback_topology();
  }
  if (t.cores.empty()) {
    if (!source.is_this_machine()) HETSTENCIL_THROW(InvalidArgument, "the topology has no cores");
    t = fallback_topology();
  }
  t.this_machine = source.is_this_machine();
  t.source = source.is_this_machine() ? "this machine" : (source.xml_file.empty() ? source.synthetic : source.xml_file);
  return t;
}

}  // namespace hetstencil
