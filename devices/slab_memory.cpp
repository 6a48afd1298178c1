#include "devices/slab_memory.hpp"

#include "devices/memory.hpp"

namespace hetstencil {

namespace {

MemoryDemand host_grids(std::uint64_t bytes, const MemoryFigure& host) {
  return {"the host's copy of the grids", bytes, host};
}

}  // namespace

void check_host_memory_for(std::uint64_t host_bytes) { check_memory({host_grids(host_bytes, host_memory())}); }

void check_memory_for(const StencilJob& job, std::uint64_t host_bytes, const std::vector<Slab>& slabs) {
  const MemoryFigure host = host_memory();
  std::vector<MemoryDemand> demands{host_grids(host_bytes, host)};
  for (const Slab& slab : slabs) {
    const Device& d = *slab.device;
    const std::uint64_t bytes = d.slab_bytes(job, slab.rows);
    const MemoryFigure memory = d.memory();
    demands.push_back({d.info().name, bytes, memory});
    // A CPU device's node is part of the host's memory, which the grids share.
    if (d.info().kind == DeviceKind::Cpu && memory.where != host.where) demands.push_back({d.info().name, bytes, host});
  }
  check_memory(demands);
}

}  // namespace hetstencil
