// The machine as hwloc sees it: packages (sockets), NUMA nodes and cores —
// probed from this machine or loaded from an hwloc XML file or a synthetic
// description (so multi-socket machines can be planned and tested anywhere).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hetstencil {

struct CoreInfo {
  int os_index = -1;     ///< the core's OS index
  std::vector<int> pus;  ///< OS indices of its hardware threads
  int package = 0;       ///< index into Topology::packages
  int numa = 0;          ///< index into Topology::numa_nodes
};

struct NumaNodeInfo {
  int os_index = 0;
  std::uint64_t memory_bytes = 0;
  int package = 0;         ///< index into Topology::packages
  std::vector<int> cores;  ///< indices into Topology::cores
};

struct PackageInfo {
  int os_index = 0;
  std::vector<int> numa_nodes;  ///< indices into Topology::numa_nodes
  std::vector<int> cores;       ///< indices into Topology::cores
};

/// Where the topology comes from: this machine (both empty), an hwloc XML file,
/// or an hwloc synthetic description such as "pack:2 numa:1 core:8 pu:1".
struct TopologySource {
  std::string xml_file;
  std::string synthetic;
  bool is_this_machine() const { return xml_file.empty() && synthetic.empty(); }
};

struct Topology {
  std::vector<PackageInfo> packages;
  std::vector<NumaNodeInfo> numa_nodes;
  std::vector<CoreInfo> cores;
  std::string source;  ///< "this machine", the file, or the synthetic description
  bool this_machine = true;

  int hardware_threads() const;
};

/// Loads the topology; throws InvalidArgument for a missing, unreadable or
/// malformed file or description.
Topology load_topology(const TopologySource& source = {});

}  // namespace hetstencil
