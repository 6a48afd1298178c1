// How much memory a device has, and the check that a solve's grids fit in it
// before anything is allocated.
//
// A figure can be uncertain: in a virtual machine a balloon may hold part of a
// NUMA node (the node reports less than is plugged in, and gets it back as it
// is used), and hot-plugged memory (virtio-mem) can add to it. A grid beyond
// what is plugged in is refused; one beyond what is reported or free only
// warned about, so that a machine that can hold the grid is never refused.
#pragma once

#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "hetstencil/error.hpp"
#include "hetstencil/problem.hpp"

namespace hetstencil {

struct MemoryFigure {
  std::string where;            ///< "NUMA node 0", "the GPU memory of gpu0": devices with one `where` share it
  std::uint64_t total = 0;      ///< the most it can hold (0: unknown)
  std::uint64_t reported = 0;   ///< the total it reports now (less than total where a balloon holds the rest)
  std::uint64_t free = 0;       ///< free now
  std::uint64_t reserved = 0;   ///< what the runtime itself needs there beside the grids
  bool grows = false;           ///< memory can be plugged in as it is used: total is no bound
};

/// NUMA node `node` (libnuma), or the whole machine where there is no such node.
MemoryFigure numa_node_memory(int node);
/// All of this machine's memory: where the host's own grids live.
MemoryFigure host_memory();

/// What one user of a memory will allocate there.
struct MemoryDemand {
  std::string who;  ///< a device name, "the host's copy of the grids"
  std::uint64_t bytes = 0;
  MemoryFigure memory;
};

/// Adds up the demands on each memory. Throws InvalidArgument, naming the users,
/// the bytes needed and the bytes the memory has, where they exceed its total
/// less what the runtime needs; logs a warning where they exceed what it
/// reports or has free.
void check_memory(const std::vector<MemoryDemand>& demands);

/// Runs allocate(); a std::bad_alloc becomes a SystemError naming `who` and `bytes`.
template <class F>
auto allocating(const std::string& who, std::uint64_t bytes, F&& allocate) -> decltype(allocate()) {
  try {
    return allocate();
  } catch (const std::bad_alloc&) {
    HETSTENCIL_THROW(SystemError, who + ": cannot allocate " + bytes_text(bytes) + " of host memory");
  } catch (const std::length_error&) {
    HETSTENCIL_THROW(SystemError, who + ": cannot allocate " + bytes_text(bytes) + " of host memory");
  }
}

}  // namespace hetstencil
