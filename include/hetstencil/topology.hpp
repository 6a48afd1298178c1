/// \file
/// The machine as hetstencil sees it: packages (sockets), NUMA nodes, cores and
/// CUDA GPUs with their locality and links — probed from this machine (hwloc and
/// the CUDA runtime) or read from an hwloc XML file or synthetic description, so
/// that machines we do not have can be planned for and tested.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hetstencil/export.hpp"

namespace hetstencil {

// Thread safety: every type here is a value, safe to copy across threads and to
// read from any number of them; load_topology() may run on several threads at once.

/// One core of the machine.
struct CoreInfo {
  int os_index = -1;     ///< the core's OS index
  std::vector<int> pus;  ///< OS indices of its hardware threads
  int package = 0;       ///< index into Topology::packages
  int numa = 0;          ///< index into Topology::numa_nodes
};

/// One NUMA node (a memory of its own) of the machine.
struct NumaNodeInfo {
  int os_index = 0;                ///< the node's OS index (numactl's)
  std::uint64_t memory_bytes = 0;  ///< its memory (0: unknown)
  int package = 0;         ///< index into Topology::packages
  std::vector<int> cores;  ///< indices into Topology::cores
};

/// One package (socket) of the machine.
struct PackageInfo {
  int os_index = 0;       ///< the package's OS index
  std::string cpu_model;  ///< its CPU's model name, where known
  std::uint64_t cache_bytes = 0;  ///< its last-level caches together (0: unknown)
  std::vector<int> numa_nodes;  ///< indices into Topology::numa_nodes
  std::vector<int> cores;       ///< indices into Topology::cores
};

/// One CUDA GPU of the machine.
struct GpuInfo {
  int index = 0;  ///< CUDA device index (this machine) or order in the file
  std::string name;        ///< its model name
  std::string uuid;        ///< "GPU-..." where known
  std::string pci_bus_id;  ///< "0000:3b:00.0" where known
  int compute_major = 0;   ///< compute capability, 0 where unknown
  int compute_minor = 0;           ///< compute capability's minor number
  int sm_count = 0;                ///< streaming multiprocessors (0: unknown)
  std::uint64_t memory_bytes = 0;  ///< its memory
  int numa = -1;     ///< nearest NUMA node (index into numa_nodes), -1 when unknown
  int package = -1;  ///< its package (index into packages), -1 when unknown
};

/// What connects GPU a to GPU b.
struct GpuLink {
  bool peer = false;          ///< a can read and write b's memory directly
  int performance_rank = -1;  ///< CUDA's relative rank (0 is best), -1 when unknown
  std::string kind = "unknown";  ///< "NVLink", "PCIe" or "unknown"
};

/// Where the topology comes from: this machine (both empty), an hwloc XML file
/// (as `lstopo file.xml` writes), or an hwloc synthetic description such as
/// "pack:2 numa:1 core:8 pu:1".
struct TopologySource {
  std::string xml_file;   ///< an hwloc XML file ("": none)
  std::string synthetic;  ///< an hwloc synthetic description ("": none)
  /// Whether it is this machine (neither a file nor a description).
  bool is_this_machine() const { return xml_file.empty() && synthetic.empty(); }
};

/// The machine: packages, NUMA nodes, cores, GPUs and the GPUs' links.
struct HETSTENCIL_API Topology {
  std::vector<PackageInfo> packages;     ///< sockets
  std::vector<NumaNodeInfo> numa_nodes;  ///< memories
  std::vector<CoreInfo> cores;           ///< cores, hardware threads grouped
  std::vector<GpuInfo> gpus;             ///< CUDA GPUs
  std::vector<std::vector<GpuLink>> links;  ///< links[a][b], gpus.size() squared
  std::string source;  ///< "this machine", the file, or the synthetic description
  bool this_machine = true;  ///< probed here (else described: its GPUs are planned for, not run)
  /// Cores of this machine that the process's binding (taskset, an MPI
  /// launcher's) leaves out: not in `cores`, but part of the machine.
  int unbound_cores = 0;

  /// Hardware threads (PUs) of all cores.
  int hardware_threads() const;
};

/// Loads the topology; throws InvalidArgument for a missing, unreadable or
/// malformed file or description. On this machine, GPUs come from the CUDA
/// runtime; from a file, from its CUDA/NVML OS devices.
HETSTENCIL_API Topology load_topology(const TopologySource& source = {});

/// The topology as one JSON object (schema "hetstencil-topology"): sockets with
/// numa_nodes and cores, gpus, links.
HETSTENCIL_API std::string to_json(const Topology& topology, int indent = 2);

}  // namespace hetstencil
