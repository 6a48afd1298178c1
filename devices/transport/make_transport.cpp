#include "devices/transport/shared_memory.hpp"
#include "devices/transport/transport.hpp"

namespace hetstencil {

// Every device of a solve lives in this process: its rows are reached through
// their movers, whatever memory they are in.
std::unique_ptr<Transport> make_transport(const std::vector<Device*>& devices, const std::vector<RowRange>& rows,
                                          const StencilJob& job, double h, int spins) {
  std::vector<HaloRows*> halos;
  for (Device* d : devices) halos.push_back(&d->halo());
  return std::make_unique<SharedMemoryTransport>(std::move(halos), rows, job, h, spins);
}

}  // namespace hetstencil
