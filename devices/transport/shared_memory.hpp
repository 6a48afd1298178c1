// The transport among devices of one process: each device posts the iterate
// its edge rows are at on a Counter of its own, and a neighbour that wants them
// waits on that counter (spinning, then sleeping) and copies them itself, from
// the device's memory where its mover reaches it (GPU peers), else from the
// host copy the sender made.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "devices/sync.hpp"
#include "devices/transport/halo_rows.hpp"
#include "devices/transport/residual_check.hpp"
#include "devices/transport/transport.hpp"

namespace hetstencil {

class SharedMemoryTransport final : public Transport {
 public:
  /// `halos`: each device's rows, in row order; they outlive the transport.
  /// `combine`: where the solve spans processes, how a residual check reaches
  /// the others' rows (see ResidualCheck).
  SharedMemoryTransport(std::vector<HaloRows*> halos, std::vector<RowRange> rows, const StencilJob& job, double h,
                        int spins, ResidualCheck::Combine combine = {});
  ~SharedMemoryTransport() override;

  void connect(std::size_t k) override;
  Endpoint& endpoint(std::size_t k) override;
  void abort() override { aborted_.store(true); }
  Progress progress() override;
  ExchangeOutcome outcome() override { return check_.outcome(); }

 private:
  class End;

  std::vector<HaloRows*> halos_;
  const StencilJob& job_;
  std::vector<std::unique_ptr<End>> ends_;
  std::vector<std::unique_ptr<Counter>> posted_;
  // By device and side: whether it copies the neighbour's rows from the
  // neighbour's memory (set by connect, read once all have connected).
  std::vector<std::array<bool, 2>> direct_;
  std::atomic<bool> aborted_{false};
  ResidualCheck check_;
};

}  // namespace hetstencil
