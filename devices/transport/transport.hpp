// How the devices of one solve talk: ghost rows between neighbours, the
// residual checks that all devices take part in, and the abort that ends every
// wait when one device fails. A device sees only its Endpoint; the executor
// sees the Transport and builds it with make_transport, whatever carries it.
//
// Protocol, per device and round (one iteration, or K for a blocked solve; see
// StencilJob::round_end) ending at iterate t:
//   send(side, t, rows) for each side with a neighbour, as soon as the edge
//     rows are swept (a GPU queues it beside its interior sweep);
//   post(t) once the edge rows and the sends are complete;
//   receive(side, t, rows) for each side, then wait() on what it returns
//     before the ghost rows are read.
// A device thus waits only for its neighbours, never for everyone, and a
// neighbour's edge rows of iterate t are taken before that neighbour can
// overwrite them (it must first see the end of our next round). Only residual
// checks join all devices.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "devices/device.hpp"
#include "devices/transport/processes.hpp"
#include "hetstencil/device_info.hpp"

namespace hetstencil {

/// A transfer under way: wait() returns once the ghost rows it fills may be
/// used; for a device whose copies are queued (a GPU), once the copy is queued
/// ahead of the device's later work on its transfer queue.
class Completion {
 public:
  /// What a transport that finishes later waits for.
  class Pending {
   public:
    virtual ~Pending() = default;
    virtual void wait() = 0;
  };
  /// Complete already.
  Completion() = default;
  explicit Completion(std::unique_ptr<Pending> pending) : pending_(std::move(pending)) {}
  void wait() {
    if (pending_) pending_->wait();
    pending_.reset();
  }

 private:
  std::unique_ptr<Pending> pending_;
};

struct CheckOutcome {
  Residual residual;
  bool stop = false;
};

/// One device's end of a transport.
class Endpoint {
 public:
  virtual ~Endpoint() = default;
  virtual bool has_neighbour(Side side) const = 0;
  /// Starts moving our `rows` edge rows of iterate t on `side` toward the
  /// neighbour there. Only for a side with a neighbour.
  virtual void send(Side side, std::int64_t t, std::int64_t rows) = 0;
  /// Our edge rows of iterate t, and what send() started for them, are complete.
  virtual void post(std::int64_t t) = 0;
  /// Starts filling our `rows` ghost rows on `side` with the neighbour's edge
  /// rows of iterate t. The wait for the neighbour's post(t) happens here or in
  /// the completion (the shared-memory transport waits here, spinning, then
  /// sleeping, and copies at once). Only for a side with a neighbour.
  virtual Completion receive(Side side, std::int64_t t, std::int64_t rows) = 0;
  /// The whole protocol for a device that overlaps nothing with it: sends on
  /// every side with a neighbour, posts t, then receives and waits.
  void exchange(std::int64_t t, std::int64_t rows);
  /// Collective over all devices at iterate t: this device's squared-residual
  /// row sums (one per owned row, in order) and its largest |rho|. Returns the
  /// residual of the whole grid, the same bits for any split, and whether the
  /// solve stops here.
  virtual CheckOutcome check(std::int64_t t, const double* row_sums, double max_abs) = 0;
  /// Set when any device of the solve failed (a device sets it when it fails);
  /// every wait watches it and leaves with Aborted.
  virtual std::atomic<bool>& abort_flag() = 0;
};

/// What a solve ended with: the residual checks' record.
struct ExchangeOutcome {
  Residual initial_residual;
  Residual final_residual;
  std::int64_t final_iteration = 0;
  bool converged = false;
  /// Over several processes, the path each link between them took:
  /// "r0-r1 nccl, r1-r2 host staging" (empty within one process).
  std::string links;
};

/// The exchange of one solve over devices in row order.
class Transport {
 public:
  virtual ~Transport() = default;
  /// Prepares device k's paths to its neighbours (e.g. GPU peer access), on k's
  /// host thread, once all devices are attached: part of the set-up, so that
  /// the iterations do not pay for it.
  virtual void connect(std::size_t k) = 0;
  virtual Endpoint& endpoint(std::size_t k) = 0;
  /// Makes every waiting device leave its wait with Aborted.
  virtual void abort() = 0;
  /// Iterates every device has posted, and the last check: safe to call from
  /// any thread while the devices run (elapsed_s is left to the caller).
  virtual Progress progress() = 0;
  /// Once the devices have run, before they detach: lets go of what the
  /// transport holds of their memory and of other processes' (CUDA IPC
  /// mappings), so that no process frees memory another has open.
  /// Collective over the processes of a solve that did not fail.
  virtual void finish() {}
  /// Once the devices have run.
  virtual ExchangeOutcome outcome() = 0;
};

/// Where a solve spans processes: who holds the rows beside this process's,
/// and every process's rows (each a block of consecutive rows, in rank order).
struct ProcessLinks {
  Processes* processes = nullptr;
  int above = -1;  ///< the rank holding the rows just above ours (-1: none)
  int below = -1;  ///< the rank holding the rows just below ours (-1: none)
  std::vector<RowRange> ranks;  ///< by rank
  /// How long a device waits for a neighbour's message.
  double silence_limit_s = kSilenceLimitS;
  /// How GPUs at process boundaries reach each other.
  GpuTransport gpu_transport = GpuTransport::Auto;
};

/// Throws InvalidArgument where `option` asks for what this build lacks (NCCL).
void check_gpu_transport(GpuTransport option);

/// The transport for `devices` (attached, in row order, holding `rows`) of a
/// solve of `job` with grid spacing h; `spins`: how long waits spin before
/// they sleep (see Counter). With `links`, `devices` are this process's part
/// of a solve over several processes.
std::unique_ptr<Transport> make_transport(const std::vector<Device*>& devices, const std::vector<RowRange>& rows,
                                          const StencilJob& job, double h, int spins,
                                          const ProcessLinks* links = nullptr);

}  // namespace hetstencil
