#include "devices/slab_memory.hpp"

#include "devices/memory.hpp"

namespace hetstencil {

void check_memory_for(const StencilJob& job, std::uint64_t host_bytes, const std::vector<Slab>& slabs) {
  const MemoryFigure host = host_memory();
  std::vector<MemoryDemand> demands{{"the host grids", host_bytes, host}};
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
