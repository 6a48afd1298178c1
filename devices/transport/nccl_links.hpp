// The links NCCL carries: ghost rows GPU to GPU between neighbouring
// processes, queued on the devices' transfer streams, so that no host thread
// waits for them (the next sweep of the edge rows orders itself after them).
// Each such link has a communicator of its own, of its two GPUs (the upper
// process's rank 0, the lower's rank 1): a GPU may then be at the boundary of
// several processes' links, as where processes share a node's GPUs. No NCCL
// header here: a build without NCCL compiles the same code (no_nccl.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "devices/transport/halo_rows.hpp"
#include "devices/transport/processes.hpp"

namespace hetstencil {

/// One end of a link NCCL carries: this process's device `device` (a GPU, in
/// row order), on `side`, facing process `peer_process`'s GPU across link
/// `link` (the link between ranks `link` and `link` + 1).
struct NcclEnd {
  std::size_t device = 0;
  Side side = Side::Top;
  GpuQueue queue;
  int peer_process = -1;
  int link = -1;
};

/// Our edge rows to the neighbour at end `end`, and its rows into our ghost rows.
struct NcclTransfer {
  std::size_t end = 0;
  RowBlock edge;
  RowBlock ghost;
};

class NcclLinks {
 public:
  virtual ~NcclLinks() = default;
  /// Queues `transfers` (ends of one GPU) on its stream, as one group, each
  /// `units` units of `lines` lines of `line_bytes`. Throws Error (naming this
  /// rank, the GPU and the neighbour) where NCCL fails or failed since
  /// (rethrow_failure), Aborted once the solve is aborted.
  virtual void exchange(const NcclTransfer* transfers, std::size_t count, std::int64_t units, std::int64_t lines,
                        std::size_t line_bytes) = 0;
  /// Throws the failure the links' watch found, as Error: NCCL's asynchronous
  /// error, or a neighbour silent beyond the limit. Nothing where there is none.
  virtual void rethrow_failure() = 0;
  /// Ends every NCCL operation under way (ncclCommAbort), so that no GPU waits
  /// for a neighbour that will not come.
  virtual void abort() = 0;
};

/// Makes the communicators of the links `nccl_links` names (element r: whether
/// NCCL carries the link between ranks r and r + 1): rank 0 makes their ids
/// (ncclGetUniqueId) and broadcasts them, and each of this process's `ends`
/// joins its link's (ncclCommInitRank, grouped), then is connected to its
/// neighbour. Starts the watch: every few milliseconds it asks NCCL for
/// asynchronous errors and whether each end's last exchange has finished; on
/// a failure, or a silence beyond `silence_limit_s`, it sets `abort` and
/// aborts the communicators. `ends`: this process's, in row order (none
/// where it has none). Collective over `processes`.
std::unique_ptr<NcclLinks> connect_nccl(Processes& processes, const std::vector<bool>& nccl_links,
                                        std::vector<NcclEnd> ends, std::atomic<bool>& abort,
                                        double silence_limit_s);

}  // namespace hetstencil
