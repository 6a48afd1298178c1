// How devices of one solve talk: ghost rows between neighbours, and the residual
// checks that all devices take part in.
//
// Protocol (pull): a device sweeps a round (one iteration, or K for a blocked
// solve; see StencilJob::round_end) and publishes the iterate t it reached;
// before its next round it waits until its two neighbours have published t and
// copies their facing edge rows into its ghost rows. A device therefore waits
// only for its neighbours, never for everyone, and a neighbour's edge rows of
// iterate t are read before that neighbour can overwrite them (it must first
// see the end of our next round). Only residual checks join all devices.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "devices/device.hpp"
#include "devices/sync.hpp"

namespace hetstencil {

class Exchange;

struct CheckOutcome {
  Residual residual;
  bool stop = false;
};

/// One device's end of the exchange.
class HaloPort {
 public:
  bool has_neighbour(Side side) const;
  /// The neighbouring device on `side` (nullptr at the grid's edge).
  const Device* neighbour(Side side) const;
  /// Returns once every neighbour has published iterate t.
  void wait_neighbours(std::int64_t t);
  /// The edge rows, facing us, of the neighbour on `side` for iterate t (host memory).
  EdgeRows neighbour_edge(Side side, std::int64_t t) const;
  /// Iterate t of this device's rows is complete.
  void publish(std::int64_t t);
  /// Collective over all devices at iterate t: this device's squared-residual row
  /// sums (one per owned row, in order) and its largest |rho|. Returns the
  /// residual of the whole grid and whether the solve stops here.
  CheckOutcome check(std::int64_t t, const double* row_sums, double max_abs);
  /// Set when any device of the solve failed; waits watch it.
  std::atomic<bool>& abort_flag();

 private:
  friend class Exchange;
  Exchange* exchange_ = nullptr;
  std::size_t index_ = 0;
};

/// The shared state of one solve over devices in row order.
class Exchange {
 public:
  Exchange(std::vector<Device*> devices, std::vector<RowRange> rows, const StencilJob& job, double h, int spins);
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  HaloPort& port(std::size_t k) { return ports_[k]; }
  /// Makes every waiting device leave its wait with Aborted.
  void abort() { aborted_.store(true); }
  Residual initial_residual() const { return initial_; }
  Residual final_residual() const { return last_; }
  std::int64_t final_iteration() const { return last_t_; }
  bool converged() const { return converged_; }
  /// Iterates every device has published, and the last check: safe to call
  /// from any thread while the devices run (elapsed_s is left to the caller).
  Progress progress();

 private:
  friend class HaloPort;
  CheckOutcome check(std::size_t k, std::int64_t t, const double* row_sums, double max_abs);

  std::vector<Device*> devices_;
  std::vector<RowRange> rows_;
  const StencilJob& job_;
  double h_;
  std::vector<HaloPort> ports_;
  std::vector<std::unique_ptr<Counter>> published_;
  std::atomic<bool> aborted_{false};

  // Residual checks: rows' sums gathered, the last device to arrive reduces.
  std::mutex check_mutex_;
  std::condition_variable check_done_;
  std::vector<double> row_sums_;
  double max_abs_ = 0.0;
  std::size_t arrived_ = 0;
  std::int64_t checks_completed_ = 0;
  CheckOutcome outcome_;
  Residual initial_;
  Residual last_;
  std::int64_t last_t_ = 0;
  bool converged_ = false;
};

}  // namespace hetstencil
