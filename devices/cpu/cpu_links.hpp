// A row's trip between two CPU devices as the halo exchange makes it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace hetstencil {

/// Where one end of a CPU link runs: the device's NUMA node and the processors
/// of its first worker (empty: unbound).
struct CpuEnd {
  std::string name;
  int numa_node = -1;
  std::vector<int> cpus;
};

/// (bytes, seconds) for each of `sizes`: `to` waits for `from` to publish, then
/// pulls the row from `from`'s NUMA node; `from` waits for `to` in turn. Half a
/// round trip is one hand-over and one copy.
std::vector<std::pair<double, double>> cpu_link_samples(const CpuEnd& from, const CpuEnd& to,
                                                        const std::vector<double>& sizes, int repetitions);

}  // namespace hetstencil
