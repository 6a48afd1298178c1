// Whether the slabs of a job fit in their devices' memory, checked before
// anything is allocated.
#pragma once

#include <cstdint>
#include <vector>

#include "devices/device.hpp"

namespace hetstencil {

/// A device and the rows it is to hold.
struct Slab {
  const Device* device = nullptr;
  RowRange rows;
};
/// Before anything is allocated: throws InvalidArgument where `host_bytes` of
/// host grids and the slabs of `job` cannot fit in the memory they come from,
/// naming the bytes needed and the bytes there are; warns where they may not
/// (see check_memory). `job` needs its sizes, variant, stop rule and source
/// kind, not its grids.
void check_memory_for(const StencilJob& job, std::uint64_t host_bytes, const std::vector<Slab>& slabs);
/// check_memory_for the host grids alone, before the slabs are known.
void check_host_memory_for(std::uint64_t host_bytes);

}  // namespace hetstencil
