// What a transport moves: a device's edge rows (its first or last owned rows of
// an iterate) into its neighbours' ghost rows. The device says where the rows
// are (HaloRows); its backend says how rows get into and out of that memory
// (RowMover). The transport, not the device, calls the copies, so that no
// device reads another's memory, and a transport between processes can put
// its own steps (a send, a receive) between them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "devices/device.hpp"

namespace hetstencil {

/// Rows in memory: the first at `data`, the next `pitch` bytes further. The
/// rows a transport moves are lines: a job's unit is StencilJob::unit_lines()
/// of them (a row in 2-D, a plane's rows in 3-D), each line_bytes() long, and
/// each device keeps them its own pitch apart.
struct RowBlock {
  void* data = nullptr;
  std::size_t pitch = 0;
};

/// Unit i of a block whose units are `lines` lines of `line_bytes`: from the
/// first byte of its first line to the last of its last, the gaps between its
/// lines included. Transports that move GPU memory as it is (NCCL, a
/// CUDA-aware MPI) send a unit as this span: a job's lines are the same pitch
/// apart on every GPU, so the span fits the receiver's unit.
struct UnitSpan {
  char* data = nullptr;
  std::size_t bytes = 0;
};
inline UnitSpan unit_span(RowBlock block, std::int64_t i, std::int64_t lines, std::size_t line_bytes) {
  const std::size_t gaps = static_cast<std::size_t>(lines - 1) * block.pitch;
  return {static_cast<char*>(block.data) + static_cast<std::size_t>(i * lines) * block.pitch, gaps + line_bytes};
}

/// Where a GPU's rows are and where its copies are queued: its CUDA device
/// and its transfer stream (a cudaStream_t), for a transport that moves GPU
/// memory itself (NCCL), queueing its work on that stream; and its PCI bus id,
/// which names the GPU on its node whatever devices a process sees.
struct GpuQueue {
  int gpu = -1;
  void* stream = nullptr;
  std::string pci_bus_id;
};

/// What another process of the node opens one of a device's allocations by
/// (CUDA IPC), as the backend makes it.
using SharedHandle = std::array<char, 64>;

/// Copies of whole rows into and out of one device's memory, made by its
/// backend. A mover whose copies are queued (a GPU's, on its transfer stream)
/// returns once they are queued: the device orders its own later work after
/// them and waits for them before it posts an iterate (Endpoint::post).
class RowMover {
 public:
  virtual ~RowMover() = default;
  /// `rows` rows of `row_bytes` from this device's memory to host memory.
  virtual void to_host(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes) = 0;
  /// `rows` rows of `row_bytes` from host memory into this device's memory.
  virtual void from_host(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes) = 0;
  /// Whether this mover copies straight from `other`'s memory into its own
  /// (GPU peer access), preparing what that takes; false where rows between
  /// the two go through host memory. Called once per neighbour, before the
  /// iterations, on this device's host thread.
  virtual bool reaches(const RowMover& /*other*/) { return false; }
  /// Copies from `other`'s memory, where reaches(other) said it could.
  virtual void from_peer(RowBlock to, const RowMover& other, RowBlock from, std::int64_t rows,
                         std::size_t row_bytes);
  /// The handle by which another process opens the allocation starting at
  /// `base` (this device's memory: a block of HaloRows::edge_memory); none
  /// where the backend cannot share its memory between processes. Throws
  /// Error where it fails.
  virtual std::optional<SharedHandle> share(const void* /*base*/) { return std::nullopt; }
  /// Opens the allocation another process's mover shared as `handle` and
  /// returns its first byte in this process; throws Error where this device
  /// cannot reach it. Each open is met by a close.
  virtual void* open_shared(const SharedHandle& handle);
  virtual void close_shared(void* /*base*/) {}
  /// Copies from memory open_shared opened, queued as from_peer's are.
  virtual void from_shared(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes);
  /// The GPU and stream of a mover whose rows are GPU memory; none for host memory.
  virtual std::optional<GpuQueue> gpu_queue() const { return std::nullopt; }
};

/// Copies with memcpy: the mover of a device whose rows are host memory.
class HostRowMover final : public RowMover {
 public:
  void to_host(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes) override;
  void from_host(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes) override;
};

/// Where one attached device keeps the rows a transport moves; halo_depth()
/// rows a side. Called from the neighbours' threads too (only for an iterate
/// the device has posted): must not change under them.
class HaloRows {
 public:
  virtual ~HaloRows() = default;
  /// The first (Top) or last (Bottom) owned rows of iterate t, in the device's
  /// memory. Valid once the device has swept them, until its neighbours have
  /// posted the end of its next round.
  virtual RowBlock edge(Side side, std::int64_t t) const = 0;
  /// The same rows where a neighbour that cannot reach the device's memory
  /// reads them: host memory, filled by the transport through the mover's
  /// to_host (nothing to fill where it is edge() itself).
  virtual RowBlock host_edge(Side side, std::int64_t t) const = 0;
  /// The ghost rows above (Top) or below (Bottom) the slab for iterate t.
  virtual RowBlock ghost(Side side, std::int64_t t) const = 0;
  /// The first bytes of the allocations that edge() returns rows in, for a
  /// transport of another process that opens them (RowMover::share); every
  /// edge row lies in one of them. None where they are not shared so.
  virtual std::vector<const void*> edge_memory() const { return {}; }
  virtual RowMover& mover() = 0;
};

}  // namespace hetstencil
