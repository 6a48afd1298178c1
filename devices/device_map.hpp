// From topology to devices: which cores make up each CPU device, which core
// each GPU's host thread runs on, and which devices the user chose.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hetstencil/device_info.hpp"
#include "hetstencil/topology.hpp"

namespace hetstencil {

struct DeviceSpec {
  DeviceInfo info;                            ///< name, kind, NUMA node, cores, description
  std::vector<std::vector<int>> worker_cpus;  ///< per worker (CPU) or host thread (GPU): OS processors to bind to
  int gpu = -1;                               ///< index into Topology::gpus for a GPU device
  std::uint64_t cache_bytes = 0;              ///< last-level cache of its package (0: unknown)
  bool own_core = false;                      ///< a GPU's host thread has its core to itself
};

struct DeviceMapOptions {
  /// 0: one CPU device per NUMA node that has cores (one per socket on most
  /// machines). n > 0: the cores cut into n groups of consecutive cores (a core
  /// serves several devices when n exceeds them).
  int cpu_devices = 0;
  /// Workers per CPU device; 0: one per core. More workers than cores are placed
  /// round-robin.
  int threads = 0;
  /// "" or "all": every device. Otherwise a comma-separated list of names to use
  /// ("cpu0,gpu1"), or of names to leave out, each prefixed by '-' ("-cpu0");
  /// "cpu" and "gpu" name every device of that kind ("-gpu": CPU devices only).
  std::string selection;
  /// Whether GPUs become devices (their host threads then take a core each).
  bool gpus = true;
  /// Where set, the one device of those selected that this process runs,
  /// placed as if it ran them all: processes of one node that split its
  /// devices between them, one each, then put their GPUs' host threads and
  /// their workers on cores apart, as one process would.
  std::string only;
};

/// One device per GPU, whose host thread is bound to a core of the GPU's nearest
/// NUMA node (the first NUMA node with cores where unknown); that core leaves
/// the CPU devices unless it is the node's last. Then the CPU devices over the
/// remaining cores, then the selection. Names are given before the selection, so
/// "cpu1" is the same device whatever is chosen. Binding is left out for
/// topologies that are not this machine's.
std::vector<DeviceSpec> map_devices(const Topology& topology, const DeviceMapOptions& options);

/// A DeviceMapOptions::selection as a predicate on device names; `all` are the
/// names there are (an unknown name or a mix of chosen and left-out names throws).
std::function<bool(const std::string&)> device_selection(const std::string& selection,
                                                         const std::vector<std::string>& all);

}  // namespace hetstencil
