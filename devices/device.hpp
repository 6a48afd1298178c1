// The Device interface: one CPU socket or one GPU that owns a slab of rows.
//
// A device owns interior rows [first, first + count) of the grid plus ghost rows
// above and below: one each for a sync solve; K on a side with a neighbour for
// a blocked one, which sweeps K times between exchanges (the ghost zone shrinks
// by a row a sweep, so the owned rows stay exact) and trades K rows at a time.
// It runs the iterations itself (its own threads, its own overlap of exchange
// and compute) and talks to its neighbours only through its Endpoint of the
// solve's Transport (devices/transport/), which moves rows between their
// memories. Devices never see each other's type or memory: the algorithm is the
// same for a CPU socket and a GPU.
#pragma once

#include <cstdint>
#include <string>

#include "devices/memory.hpp"
#include "hetstencil/device_info.hpp"
#include "hetstencil/plan.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/report.hpp"

namespace hetstencil {

class Endpoint;
class HaloRows;

/// Rows above (Top, smaller row index) or below (Bottom) a slab.
enum class Side { Top = 0, Bottom = 1 };
inline Side opposite(Side s) { return s == Side::Top ? Side::Bottom : Side::Top; }

/// Interior rows [first, first + count), 1-based (row 0 is the boundary).
struct RowRange {
  std::int64_t first = 1;
  std::int64_t count = 0;
  std::int64_t end() const { return first + count; }
};

/// What a device needs to know of the problem, independent of precision: the
/// pointers refer to values of the problem's precision.
struct StencilJob {
  Precision precision = Precision::Double;
  std::int64_t nx = 0;
  std::int64_t ny = 0;
  const void* initial = nullptr;  ///< (ny+2) x (nx+2) initial iterate, dense
  void* result = nullptr;         ///< (ny+2) x (nx+2) solution, filled by detach(); none when null
  const void* h2f = nullptr;      ///< (ny+2) x (nx+2) h*h*f, or nullptr when the source is the spike
  bool grid_source = false;       ///< the right-hand side is a grid (h2f), even before h2f is set
  std::int64_t spike_row = -1;    ///< the spike's cell (h*h*f = 1 there), -1 when none
  std::int64_t spike_col = -1;
  StopRule stop;
  VariantChoice variant;  ///< how a GPU sweeps; anything but sync runs on a single GPU alone

  std::int64_t cols() const { return nx + 2; }
  std::size_t row_bytes() const { return hetstencil::row_bytes(nx, precision); }
  /// Ghost rows on a side with a neighbour, and the sweeps between exchanges.
  int halo_depth() const { return hetstencil::halo_depth(variant); }
  /// Where the round of sweeps from iterate t ends: halo_depth() sweeps later,
  /// or sooner at a residual check (rounds never step over one).
  std::int64_t round_end(std::int64_t t) const { return std::min(t + halo_depth(), stop.next_check(t)); }
  /// Ghost rows above (Top) or below a slab of these rows: halo_depth() where a
  /// neighbour owns them, the one boundary row at the grid's edge.
  std::int64_t ghost_rows(Side side, RowRange rows) const {
    const bool edge = side == Side::Top ? rows.first == 1 : rows.end() == ny + 1;
    return edge ? 1 : halo_depth();
  }
};

/// Per-device timings of the last run.
struct DeviceTimes {
  double compute_s = 0.0;
  double exchange_s = 0.0;
  double check_s = 0.0;
  double total_s = 0.0;
  double compute_p90_s = 0.0;  // per iteration, over its rounds; 0 where not measured
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;

  /// The bytes attach(job, rows) will allocate, and the memory they come from:
  /// checked before anything is allocated (check_memory).
  virtual std::uint64_t slab_bytes(const StencilJob& job, RowRange rows) const = 0;
  virtual MemoryFigure memory() const = 0;

  /// Allocates the slab for `rows` and copies the initial values in, ghost rows
  /// included (the set-up transfer). The job outlives the attachment.
  virtual void attach(const StencilJob& job, RowRange rows) = 0;
  /// Where the attached slab keeps the rows its transport moves, and how they
  /// are copied in and out; valid until detach().
  virtual HaloRows& halo() = 0;
  /// Runs the job's stop rule, exchanging ghost rows through `port`.
  virtual void run(Endpoint& port) = 0;
  /// Copies the owned rows of the final iterate into job.result (unless it is
  /// null); frees the slab.
  virtual void detach() = 0;

  virtual DeviceTimes times() const = 0;
};

}  // namespace hetstencil
