// A CPU socket (or a group of cores) as a device: worker pthreads bound to its
// cores, its slab on its NUMA node, each worker sweeping a contiguous block of
// the slab's rows, a barrier inside the socket between iterations. poisson5
// runs its tuned row kernels (jacobi_kernels.hpp); any other stencil sweeps
// whole units (rows in 2-D, planes in 3-D) with stencil_sweep.hpp.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "devices/cpu/iterate_pair.hpp"
#include "devices/cpu/row_claims.hpp"
#include "devices/cpu/stencil_sweep.hpp"
#include "devices/cpu/worker_team.hpp"
#include "devices/device.hpp"
#include "devices/transport/halo_rows.hpp"
#include "core/even_split.hpp"
#include "core/stencil_terms.hpp"

namespace hetstencil {

class CpuDevice final : public Device {
 public:
  /// worker_cpus: for each worker, the OS processor indices it is bound to;
  /// cache_bytes: the last-level cache the workers share (0: unknown).
  CpuDevice(DeviceInfo info, std::vector<std::vector<int>> worker_cpus, std::uint64_t cache_bytes, int spins);

  const DeviceInfo& info() const override { return info_; }
  std::uint64_t slab_bytes(const StencilJob& job, RowRange rows) const override;
  MemoryFigure memory() const override { return numa_node_memory(info_.numa_node); }
  void attach(const StencilJob& job, RowRange rows) override;
  HaloRows& halo() override { return halo_; }
  void run(Endpoint& port) override;
  void detach() override;
  DeviceTimes times() const override { return times_; }
  /// "threads" (how many of its workers sweep), "streaming" (1: non-temporal
  /// stores where the slab overflows the cache, 0: plain); for any stencil but poisson5
  /// also SweepBlocking's "chunk_values" and "points_per_pass", and in 3-D
  /// "tile_kib" (tile_bytes / 1024) and "tile_rows_per_radius".
  std::vector<Tunable> tunables(const StencilJob& job) const override;

  std::vector<RateSamples> measure_sweeps(const StencilJob& job, const std::vector<std::int64_t>& rows,
                                          int repetitions, bool checks,
                                          const std::function<void()>& before_each = {}) override;
  std::vector<LinkSamples> measure_links(const std::vector<const Device*>& others, const std::vector<double>& sizes,
                                         int repetitions) const override;
  /// One sweep over the attached slab beside a plain copy of the same bytes by
  /// the same workers on the same memory with the same kind of stores.
  SweepVsCopy sweep_vs_copy(const StencilJob& job, int repetitions) override;
  /// Seconds of each of `repetitions` sweeps (after a warm-up) over the first
  /// `rows` rows of the attached slab, by all workers: the calibration's
  /// samples; with `residual`, of the residual pass a check makes instead.
  /// `before_each`, when given, is called by one worker before each sweep
  /// (the warm-up too) while the others wait: to start several devices'
  /// sweeps together, as a solve does.
  std::vector<double> sweep_samples(std::int64_t rows, int repetitions, bool residual = false,
                                    const std::function<void()>& before_each = {});
  /// Whether a sweep of `rows` rows of the attached (or last detached) slab
  /// uses non-temporal stores (rows that overflow the last-level cache do,
  /// unless tuned not to); all rows by default.
  bool streaming_stores(std::int64_t rows = -1) const;

 private:
  /// Values per slab unit: for poisson5 a row of nx + 2 rounded up to 64
  /// bytes (its kernels' alignment), else the unit as dense as in the grid
  /// (stencil_sweep's offsets are the grid's).
  static std::int64_t pitch_of(const StencilJob& job);
  /// Bytes of one buffer of a slab of `rows`, and of the staged edge rows.
  static std::size_t buffer_bytes(const StencilJob& job, RowRange rows);
  static std::size_t staged_bytes(const StencilJob& job);
  /// Row (unit) r of a buffer, numbered as owned rows: 1..count are owned, 0
  /// and below the ghost rows above, count + 1 and on those below.
  template <class T>
  T* row(int buffer, std::int64_t r) const;
  /// The grid's index of the slab's unit r (numbered as row() numbers them).
  std::int64_t global_unit(std::int64_t r) const;
  /// The update of any stencil (not poisson5), in precision T.
  template <class T>
  const StencilTerms<T>& terms() const;
  /// Sweeps units b of buffer `from` (in 3-D their `lines`) with
  /// stencil_sweep (any stencil but poisson5), with non-temporal stores where
  /// `streaming`.
  template <class T>
  void sweep_units_of(int from, Block b, bool streaming, SweepLines lines = {});
  /// The residual sums of the units a worker claims (any stencil but poisson5), in the reference's order.
  template <class T>
  void residual_units(int worker, int current, std::int64_t count);
  template <class T>
  void attach_rows(int worker);
  /// Sweeps rows [begin, end) of buffer `from` into the other buffer.
  template <class T>
  void sweep_rows(int worker, int from, std::int64_t begin, std::int64_t end);
  template <class T>
  void residual_rows(int worker, int current, std::int64_t count);
  template <class T>
  void copy_rows(int worker, int from);
  template <class T>
  void run_iterations(int worker, Endpoint& port);
  /// The leader's part of a round's end at iterate t: send and post our edges,
  /// take the neighbours' into our ghost rows.
  void exchange(Endpoint& port, std::int64_t t);
  template <class T>
  void detach_rows(int worker);
  /// A worker's share of rows [begin, end), which the active_ workers share
  /// (the others sleep: WorkerTeam::use).
  Block worker_rows(int worker, std::int64_t begin, std::int64_t end) const;
  /// The rows of kLeastChunkValues values at least: a chunk the workers claim
  /// has a multiple of them.
  std::int64_t least_chunk_rows() const;
  /// Row r of a buffer (numbered as row() numbers them) as its transport sees it.
  RowBlock halo_block(int buffer, std::int64_t r) const;

  // The slab's rows as its transport sees them: all in host memory.
  class Halo final : public HaloRows {
   public:
    explicit Halo(CpuDevice& device) : device_(device) {}
    RowBlock edge(Side side, std::int64_t t) const override;
    RowBlock host_edge(Side side, std::int64_t t) const override;
    RowBlock ghost(Side side, std::int64_t t) const override;
    RowMover& mover() override { return mover_; }

   private:
    CpuDevice& device_;
    HostRowMover mover_;
  };

  /// Throws unless `job` is the attached one: `doing` needs its slab.
  void check_attached(const StencilJob& job, const char* doing) const;

  DeviceInfo info_;
  std::vector<int> lead_cpus_;  // the first worker's processors, where its links are measured from
  WorkerTeam team_;
  const StencilJob* job_ = nullptr;
  RowRange rows_;
  std::int64_t ghosts_[2] = {1, 1};  // ghost rows above and below
  std::int64_t pitch_ = 0;  // values per slab unit (pitch_of)
  SweepBlocking blocking_;  // the stencil sweep's (any stencil but poisson5), from the job's tuning
  int active_ = 1;          // workers that sweep, from the job's tuning
  RowClaims claims_{1};     // the chunks of a sweep the active workers claim
  bool streaming_allowed_ = true;  // non-temporal stores where the slab overflows the cache, from the job's tuning
  StencilTerms<float> terms_float_;
  StencilTerms<double> terms_double_;
  std::size_t value_bytes_ = 0;
  IteratePair iterates_;  // iterate t lives in iterates_.data(t % 2)
  // With deep halos a round overwrites both buffers, so the edges a round ends
  // with are sent aside for the neighbours (Halo::host_edge): two slots, used
  // in turn, each [side][depth] rows of cols() values, and the iterate each
  // slot holds.
  std::vector<unsigned char> staged_[2];
  std::atomic<std::int64_t> staged_t_[2] = {-1, -1};  // read by the neighbours' threads
  int next_slot_ = 0;
  std::int64_t final_t_ = 0;
  std::vector<double> row_sums_;
  std::vector<double> worker_max_;
  bool stop_ = false;
  std::uint64_t cache_bytes_;
  DeviceTimes times_;
  std::vector<double> round_compute_;  // each round's sweeps, per iteration
  Halo halo_{*this};
};

}  // namespace hetstencil
