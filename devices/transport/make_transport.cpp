#include "devices/transport/process_transport.hpp"
#include "devices/transport/shared_memory.hpp"
#include "devices/transport/transport.hpp"

namespace hetstencil {

void Endpoint::exchange(std::int64_t t, std::int64_t rows) {
  for (Side side : {Side::Top, Side::Bottom}) {
    if (has_neighbour(side)) send(side, t, rows);
  }
  post(t);
  Completion fills[2];
  for (Side side : {Side::Top, Side::Bottom}) {
    if (has_neighbour(side)) fills[static_cast<int>(side)] = receive(side, t, rows);
  }
  for (Completion& fill : fills) fill.wait();
}

// The devices of this process reach each other's rows through their movers,
// whatever memory they are in; those of other processes, through messages.
std::unique_ptr<Transport> make_transport(const std::vector<Device*>& devices, const std::vector<RowRange>& rows,
                                          const StencilJob& job, double h, int spins, const ProcessLinks* links) {
  std::vector<HaloRows*> halos;
  for (Device* d : devices) halos.push_back(&d->halo());
  if (links) return std::make_unique<ProcessTransport>(std::move(halos), rows, job, h, spins, *links);
  return std::make_unique<SharedMemoryTransport>(std::move(halos), rows, job, h, spins);
}

}  // namespace hetstencil
