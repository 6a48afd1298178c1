#include "devices/cuda/cuda_device.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <utility>

#include "core/log.hpp"
#include "devices/affinity.hpp"
#include "devices/cuda/cuda_bench.hpp"
#include "devices/cuda/cuda_check.hpp"
#include "devices/cuda/alone_steps.hpp"
#include "devices/cuda/graph_steps.hpp"
#include "devices/cuda/cuda_resources.hpp"
#include "devices/cuda/cuda_row_mover.hpp"
#include "devices/cuda/cuda_stencil_runner.hpp"
#include "devices/cuda/jacobi_kernels.cuh"
#include "devices/cuda/stencil_kernels.cuh"
#include "devices/cuda/stencil_tuning.hpp"
#include "devices/cuda/variant_kernels.cuh"
#include "devices/transport/transport.hpp"
#include "core/dispatch.hpp"

namespace hetstencil {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// Adds each row's group sums in column order and takes the row's largest
/// |rho|: row_sums[r - 1] and row_max[r - 1] for slab rows 1..rows. One warp a
/// row: the lanes read 32 sums side by side, and every lane adds them one after
/// the other, so lane 0 ends with the sequential sum.
__global__ void row_sums_kernel(const double* __restrict__ group_sums, const double* __restrict__ group_max,
                                std::int64_t groups, std::int64_t rows, double* __restrict__ row_sums,
                                double* __restrict__ row_max) {
  const std::int64_t r = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (r >= rows) return;  // a whole warp at once
  const double* sums = group_sums + r * groups;
  const double* maxima = group_max + r * groups;
  double total = 0.0, largest = 0.0;
  for (std::int64_t k0 = 0; k0 < groups; k0 += 32) {
    const bool mine = k0 + lane < groups;
    const double sum = mine ? sums[k0 + lane] : 0.0;
    largest = fmax(largest, mine ? maxima[k0 + lane] : 0.0);
    const int count = static_cast<int>(groups - k0 < 32 ? groups - k0 : 32);
    for (int k = 0; k < count; ++k) total += __shfl_sync(0xffffffffu, sum, k);
  }
  for (int d = 16; d >= 1; d /= 2) largest = fmax(largest, __shfl_down_sync(0xffffffffu, largest, d));
  if (lane == 0) {
    row_sums[r] = total;
    row_max[r] = largest;
  }
}

// Checks at most this many iterations apart keep a third buffer, so that the
// next sweep can run while the residual is being agreed on (see run_typed).
constexpr std::int64_t kLookaheadChecks = 16;

// GPU memory the runtime needs beside the slabs: the CUDA context's share that
// cudaMemGetInfo counts as used, and the tile kernels' scratch.
constexpr std::uint64_t kGpuReserve = std::uint64_t(512) << 20;

// The square grid a GPU's load sweeps (start_load): large enough to keep it busy.
constexpr std::int64_t kLoadSize = 8192;

class CudaDevice final : public Device {
 public:
  CudaDevice(DeviceInfo info, int gpu, std::vector<int> host_cpus, bool own_core)
      : info_(std::move(info)),
        gpu_(gpu),
        host_cpus_(std::move(host_cpus)),
        own_core_(own_core),
        halo_(*this, info_.name + " (CUDA device " + std::to_string(gpu) + ")"),
        any_stencil_(make_cuda_stencil_runner(info_.name, gpu_, host_cpus_)) {
    use("selecting the GPU");
    // Spinning is only fair on a core of our own (see make_cuda_device).
    const cudaError_t rc = cudaSetDeviceFlags(own_core_ ? cudaDeviceScheduleSpin : cudaDeviceScheduleBlockingSync);
    if (rc == cudaErrorSetOnActiveProcess) {
      (void)cudaGetLastError();
      log::debug("{}: the CUDA context exists already; its wait mode stays", info_.name);
    } else {
      HETSTENCIL_CUDA_CHECK(rc, context("choosing how the host thread waits"));
    }
    multiprocessors_ = cuda::multiprocessors(context("counting its SMs"));
  }

  ~CudaDevice() override {
    if (cudaSetDevice(gpu_) == cudaSuccess) release();
  }

  const DeviceInfo& info() const override { return info_; }
  std::vector<RateSamples> measure_sweeps(const StencilJob& job, const std::vector<std::int64_t>& rows,
                                          int repetitions, bool checks,
                                          const std::function<void()>& /*before_each*/) override {
    if (!job.poisson5) return any_stencil_->measure_sweeps(job, rows, repetitions, checks);
    return gpu_rate_samples(gpu_, job.precision, job.nx, rows, repetitions, checks, job.variant);
  }

  std::vector<LinkSamples> measure_links(const std::vector<const Device*>& others, const std::vector<double>& sizes,
                                         int repetitions) const override {
    std::vector<const Device*> hosts, peers;
    std::vector<int> peer_gpus;
    for (const Device* other : others) {
      if (const auto* gpu = dynamic_cast<const CudaDevice*>(other)) {
        if (gpu == this) continue;
        peers.push_back(other);
        peer_gpus.push_back(gpu->gpu_);
      } else if (other->info().kind == DeviceKind::Cpu) {
        hosts.push_back(other);
      }
    }
    const GpuLinkSamples samples = gpu_link_samples(gpu_, peer_gpus, sizes, repetitions);
    std::vector<LinkSamples> out;
    for (const Device* host : hosts) {
      out.push_back({this, host, samples.to_host});
      out.push_back({host, this, samples.from_host});
    }
    for (std::size_t k = 0; k < peers.size(); ++k) out.push_back({this, peers[k], samples.to_peer[k]});
    return out;
  }

  std::unique_ptr<DeviceLoad> start_load() const override {
    return std::make_unique<GpuLoad>(gpu_, host_cpus_, own_core_, kLoadSize);
  }

  // poisson5's kernels are tuned by hand (jacobi_kernels.cuh); any other
  // stencil's sweep has its kernel and shape to choose.
  std::vector<Tunable> tunables(const StencilJob& job) const override {
    return job.poisson5 ? std::vector<Tunable>{} : cuda::stencil_tunables(job, cuda::gpu_stages(gpu_));
  }
  void prepare_sweeps(const StencilJob& job, const std::vector<Tuning>& tunings) const override {
    if (!job.poisson5) cuda::compile_sweeps_ahead(info_.name, job, tunings, gpu_);
  }

  SweepVsCopy sweep_vs_copy(const StencilJob& job, int repetitions) override {
    if (!job.poisson5) return any_stencil_->sweep_vs_copy(job, repetitions);
    return bench_gpu_sweep(gpu_, job.precision, job.nx, job.ny, repetitions);
  }
  DeviceTimes times() const override { return other_stencil_ ? any_stencil_->times() : times_; }

  std::uint64_t slab_bytes(const StencilJob& job, RowRange rows) const override {
    if (!job.poisson5) return any_stencil_->slab_bytes(job, rows);
    return dispatch(job.precision, [&](auto zero) { return bytes_needed<decltype(zero)>(job, rows); });
  }

  MemoryFigure memory() const override {
    use("reading its memory");
    std::size_t free_bytes = 0, total_bytes = 0;
    HETSTENCIL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes), context("reading its memory"));
    MemoryFigure m;
    m.where = "the memory of " + info_.name;
    m.total = m.reported = total_bytes;
    m.free = free_bytes;
    m.reserved = kGpuReserve;
    return m;
  }

  void attach(const StencilJob& job, RowRange rows) override {
    other_stencil_ = !job.poisson5;
    if (other_stencil_) return any_stencil_->attach(job, rows);
    job_ = &job;
    rows_ = rows;
    dispatch(job.precision, [&](auto zero) { attach_typed<decltype(zero)>(); });
  }

  HaloRows& halo() override { return other_stencil_ ? any_stencil_->halo() : halo_; }

  void run(Endpoint& port) override {
    if (other_stencil_) return any_stencil_->run(port);
    bind_current_thread(info_.name, host_cpus_);
    use("starting the iterations");
    dispatch(job_->precision, [&](auto zero) { run_typed<decltype(zero)>(port); });
  }

  void detach() override {
    if (other_stencil_) return any_stencil_->detach();
    use("copying the result back");
    if (job_->result) {
      const std::size_t value = value_bytes(job_->precision);
      const std::size_t row_bytes = job_->row_bytes();
      char* dst = static_cast<char*>(job_->result) + static_cast<std::size_t>(rows_.first * job_->cols()) * value;
      HETSTENCIL_CUDA_CHECK(cudaMemcpy2D(dst, row_bytes, slab_row(final_buffer_, 1),
                                         static_cast<std::size_t>(layout_.pitch) * value, row_bytes,
                                         static_cast<std::size_t>(rows_.count), cudaMemcpyDeviceToHost),
                            context("copying its rows back to the host"));
    }
    release();
  }

 private:
  // What a check of an iterate fills: per group of segments of each row its
  // folded squares and its band's largest |rho|, then per row their sum and
  // maximum (row sums first), and those on the host.
  struct CheckBuffers {
    cuda::DeviceMemory group_sums;
    cuda::DeviceMemory group_max;
    cuda::DeviceMemory row_stats;
    cuda::PinnedMemory host_row_stats;
    cuda::Event copied;
  };

  // The slab's rows as its transport sees them. The edge rows' host copies are
  // kept by the buffer iterate t lives in (a sync solve's t % buffers, a
  // blocked one's buffer of its round), which the neighbours empty before we
  // refill it.
  class Halo final : public HaloRows {
   public:
    Halo(CudaDevice& device, const std::string& who) : device_(device), mover_(device.gpu_, who) {}
    RowBlock edge(Side side, std::int64_t t) const override {
      const CudaDevice& d = device_;
      return {d.slab_row(d.buffer_of(t), side == Side::Top ? 1 : d.rows_.count - d.job_->halo_depth() + 1),
              d.pitch_bytes()};
    }
    RowBlock host_edge(Side side, std::int64_t t) const override {
      const CudaDevice& d = device_;
      const std::size_t depth = static_cast<std::size_t>(d.job_->halo_depth());
      return {d.host_edges_.get<char>() +
                  static_cast<std::size_t>(2 * d.buffer_of(t) + static_cast<int>(side)) * depth * d.job_->row_bytes(),
              d.job_->row_bytes()};
    }
    RowBlock ghost(Side side, std::int64_t t) const override {
      const CudaDevice& d = device_;
      return {d.slab_row(d.buffer_of(t), side == Side::Top ? 1 - d.job_->halo_depth() : d.rows_.count + 1),
              d.pitch_bytes()};
    }
    std::vector<const void*> edge_memory() const override {
      const CudaDevice& d = device_;
      std::vector<const void*> blocks;
      for (int b = 0; b < d.buffer_count_; ++b) blocks.push_back(d.buffers_[b].get());
      return blocks;
    }
    RowMover& mover() override { return mover_; }
    CudaRowMover& cuda_mover() { return mover_; }

   private:
    CudaDevice& device_;
    CudaRowMover mover_;
  };

  std::size_t pitch_bytes() const { return static_cast<std::size_t>(layout_.pitch) * value_bytes(job_->precision); }

  std::string context(const std::string& doing) const {
    return info_.name + " (CUDA device " + std::to_string(gpu_) + "): " + doing;
  }
  void use(const std::string& doing) const { HETSTENCIL_CUDA_CHECK(cudaSetDevice(gpu_), context(doing)); }

  // Iterate t lives in buffers_[t % buffer_count_]; a tile variant's in the
  // buffer a pass wrote it to (the neighbours ask from their own threads).
  int buffer_of(std::int64_t t) const {
    if (job_->variant.variant == Variant::Sync) return static_cast<int>(t % buffer_count_);
    return held_[0].load() == t ? 0 : 1;
  }

  // Column 0 of row r in buffer b, numbered as owned rows: 1..count are owned,
  // 0 and below the ghost rows above, count + 1 and on those below.
  char* slab_row(int b, std::int64_t r) const {
    return buffers_[b].get<char>() +
           static_cast<std::size_t>((r + ghosts_[0] - 1) * layout_.pitch + layout_.offset) * value_bytes(job_->precision);
  }
  // Buffer b (or the right-hand side) from its owned rows' upper ghost row on,
  // as the sync kernels index it.
  template <class T>
  T* owned(T* base) const {
    return base ? base + (ghosts_[0] - 1) * layout_.pitch : nullptr;
  }

  void release() {
    graphs_.clear();
    for (auto& b : buffers_) b.reset();
    h2f_.reset();
    for (CheckBuffers& c : checks_) c = CheckBuffers();
    host_edges_.reset();
  }

  static int buffers_for(const StencilJob& job) {
    return job.stop.uses_tolerance() && job.stop.check_every <= kLookaheadChecks ? 3 : 2;
  }

  // GPU memory of a slab of `rows`: its buffers, the right-hand side where it
  // is a grid, the residual sums and the row statistics.
  template <class T>
  static std::size_t bytes_needed(const StencilJob& job, RowRange rows) {
    const cuda::SlabLayout layout = cuda::make_layout<T>(job.nx);
    const std::int64_t slab_rows = job.ghost_rows(Side::Top, rows) + rows.count + job.ghost_rows(Side::Bottom, rows);
    const std::size_t slab = static_cast<std::size_t>(slab_rows * layout.pitch) * sizeof(T);
    const std::size_t sums = static_cast<std::size_t>(rows.count * layout.groups) * sizeof(double);
    const bool h2f = job.grid_source || job.h2f != nullptr;
    return static_cast<std::size_t>(buffers_for(job)) * slab + (h2f ? slab : 0) +
           2 * (2 * sums + 2 * static_cast<std::size_t>(rows.count) * sizeof(double));
  }

  template <class T>
  void attach_typed() {
    use("attaching its slab");
    layout_ = cuda::make_layout<T>(job_->nx);
    buffer_count_ = buffers_for(*job_);
    for (Side side : {Side::Top, Side::Bottom}) ghosts_[static_cast<int>(side)] = job_->ghost_rows(side, rows_);
    const std::int64_t n = rows_.count;
    const std::int64_t slab_rows = ghosts_[0] + n + ghosts_[1];
    const std::size_t slab = static_cast<std::size_t>(slab_rows * layout_.pitch) * sizeof(T);
    const std::size_t sums = static_cast<std::size_t>(n * layout_.groups) * sizeof(double);
    // Refused before any device allocated (check_memory) where it cannot fit;
    // here only a warning where it may not fit in what is free.
    const std::size_t needed = bytes_needed<T>(*job_, rows_);
    std::size_t free_bytes = 0, total_bytes = 0;
    HETSTENCIL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes), context("reading its free memory"));
    const std::string slab_text = "its slab of " + std::to_string(n) + " rows of " + std::to_string(job_->nx);
    if (needed > total_bytes) {
      HETSTENCIL_THROW(InvalidArgument, context("allocating " + slab_text + ": it needs " + bytes_text(needed) +
                                                ", the GPU has " + bytes_text(total_bytes) + " in all"));
    }
    if (needed > free_bytes) {
      log::warn("{}", context(slab_text + " needs " + bytes_text(needed) + ", " + bytes_text(free_bytes) + " are free: trying"));
    }
    // The owned rows and the ghost rows around them.
    const std::size_t row_bytes = job_->row_bytes();
    const std::size_t pitch_bytes = static_cast<std::size_t>(layout_.pitch) * sizeof(T);
    const auto rows_from = [&](const void* grid) {
      return static_cast<const char*>(grid) +
             static_cast<std::size_t>((rows_.first - ghosts_[0]) * job_->cols()) * sizeof(T);
    };
    for (int b = 0; b < buffer_count_; ++b) {
      buffers_[b] = cuda::DeviceMemory(slab, context("allocating its slab"));
      HETSTENCIL_CUDA_CHECK(cudaMemset(buffers_[b].get(), 0, slab), context("clearing its slab"));
    }
    HETSTENCIL_CUDA_CHECK(cudaMemcpy2D(slab_row(0, 1 - ghosts_[0]), pitch_bytes, rows_from(job_->initial), row_bytes,
                                       row_bytes, static_cast<std::size_t>(slab_rows), cudaMemcpyHostToDevice),
                          context("copying its rows to the GPU"));
    for (int b = 1; b < buffer_count_; ++b) {
      HETSTENCIL_CUDA_CHECK(cudaMemcpy(buffers_[b].get(), buffers_[0].get(), slab, cudaMemcpyDeviceToDevice),
                            context("filling its other buffers"));
    }
    if (job_->h2f) {
      h2f_ = cuda::DeviceMemory(slab, context("allocating the right-hand side"));
      HETSTENCIL_CUDA_CHECK(cudaMemset(h2f_.get(), 0, slab), context("clearing the right-hand side"));
      char* dst = h2f_.get<char>() + static_cast<std::size_t>(layout_.offset) * sizeof(T);
      HETSTENCIL_CUDA_CHECK(cudaMemcpy2D(dst, pitch_bytes, rows_from(job_->h2f), row_bytes, row_bytes,
                                         static_cast<std::size_t>(slab_rows), cudaMemcpyHostToDevice),
                            context("copying the right-hand side to the GPU"));
    }
    for (CheckBuffers& c : checks_) {
      c.group_sums = cuda::DeviceMemory(sums, context("allocating the residual sums"));
      c.group_max = cuda::DeviceMemory(sums, context("allocating the residual maxima"));
      c.row_stats = cuda::DeviceMemory(2 * static_cast<std::size_t>(n) * sizeof(double), context("allocating the row sums"));
      c.host_row_stats = cuda::PinnedMemory(2 * static_cast<std::size_t>(n) * sizeof(double),
                                            context("allocating pinned row sums"));
      c.copied = cuda::Event(context("creating an event"));
    }
    host_edges_ = cuda::PinnedMemory(2 * static_cast<std::size_t>(buffer_count_ * job_->halo_depth()) * row_bytes,
                                     context("allocating pinned edge rows"));
    main_ = cuda::Stream(context("creating its compute stream"));
    edge_ = cuda::Stream(context("creating its edge stream"), true);
    halo_.cuda_mover().use_stream(edge_);
    for (int b = 0; b < buffer_count_; ++b) {
      edge_done_[b] = cuda::Event(context("creating an event"));
      edge_start_[b] = cuda::Event(context("creating a timing event"), true);
      edge_swept_[b] = cuda::Event(context("creating a timing event"), true);
      interior_start_[b] = cuda::Event(context("creating a timing event"), true);
      interior_done_[b] = cuda::Event(context("creating a timing event"), true);
    }
    // High priority, as the edge rows': its few blocks must not wait behind the
    // next sweep's, or the host hears of the check a whole sweep late and the
    // edge rows after it start late (a gap every other iteration on an H100).
    check_ = cuda::Stream(context("creating its residual stream"), true);
    swept_ = cuda::Event(context("creating an event"));
    graphs_.reset(context("creating a timing event"));
    // The copies above ran on the legacy stream; the iterations run on
    // non-blocking streams, which do not wait for it (a device-to-device or
    // pageable copy may return before it is done).
    HETSTENCIL_CUDA_CHECK(cudaDeviceSynchronize(), context("finishing its set-up"));
    final_t_ = 0;
    final_buffer_ = 0;
    held_[0] = 0;
    held_[1] = -1;
    times_ = {};
  }

  // The residual buffers of a check of iterate t: consecutive iterates use
  // different ones, so the sums of one are gathered while the next is swept.
  const CheckBuffers& check_of(std::int64_t t) const { return checks_[t % 2]; }

  // The sweep of slab rows [begin, end) from iterate t.
  cuda::SweepArgs args(std::int64_t t, std::int64_t begin, std::int64_t end) const {
    cuda::SweepArgs a;
    a.layout = layout_;
    a.row_begin = begin;
    a.row_end = end;
    a.multiprocessors = multiprocessors_;
    const std::int64_t local_spike = job_->spike_row - (rows_.first - 1);
    if (job_->spike_row >= 0 && local_spike >= 1 && local_spike <= rows_.count) {
      a.spike_row = local_spike;
      a.spike_col = job_->spike_col;
    }
    a.group_sums = check_of(t).group_sums.get<double>();
    a.group_max = check_of(t).group_max.get<double>();
    return a;
  }

  // Sweeps slab rows [begin, end) of iterate t into iterate t + 1, folding the
  // residual of iterate t on the way when `residual`.
  template <class T>
  void sweep(std::int64_t t, std::int64_t begin, std::int64_t end, bool residual, cudaStream_t stream) {
    const T* u = owned(buffers_[buffer_of(t)].get<T>());
    T* v = owned(buffers_[buffer_of(t + 1)].get<T>());
    const auto a = args(t, begin, end);
    if (residual) {
      cuda::launch_sweep<T, true, true>(u, v, owned(h2f_.get<T>()), a, stream);
    } else {
      cuda::launch_sweep<T, true, false>(u, v, owned(h2f_.get<T>()), a, stream);
    }
    HETSTENCIL_CUDA_CHECK(cudaGetLastError(), context("launching a sweep"));
  }

  // The residual of iterate t alone, no new iterate: the last check's.
  template <class T>
  void sweep_residual(std::int64_t t, cudaStream_t stream) {
    cuda::launch_sweep<T, false, true>(owned(buffers_[buffer_of(t)].get<T>()), nullptr, owned(h2f_.get<T>()),
                                       args(t, 1, rows_.count + 1), stream);
    HETSTENCIL_CUDA_CHECK(cudaGetLastError(), context("launching the residual"));
  }

  // The row sums and maxima of iterate t's residual sweeps, copied to the host.
  void queue_row_stats(std::int64_t t, cudaStream_t stream) {
    const std::int64_t n = rows_.count;
    const CheckBuffers& c = check_of(t);
    double* stats = c.row_stats.get<double>();
    row_sums_kernel<<<static_cast<unsigned>((n + 7) / 8), 256, 0, stream>>>(
        c.group_sums.get<double>(), c.group_max.get<double>(), layout_.groups, n, stats, stats + n);
    HETSTENCIL_CUDA_CHECK(cudaGetLastError(), context("launching the row sums"));
    HETSTENCIL_CUDA_CHECK(cudaMemcpyAsync(c.host_row_stats.get(), stats, 2 * static_cast<std::size_t>(n) * sizeof(double),
                                          cudaMemcpyDeviceToHost, stream),
                          context("copying the residual row sums"));
  }

  // Queued once the residual sweeps of iterate t are on main_: on the residual
  // stream, which waits for them, the row stats; the check's `copied` event
  // marks their arrival. main_ goes on sweeping.
  void queue_residual_gather(std::int64_t t) {
    HETSTENCIL_CUDA_CHECK(cudaEventRecord(swept_, main_), context("recording the residual sweeps"));
    HETSTENCIL_CUDA_CHECK(cudaStreamWaitEvent(check_, swept_, 0), context("ordering the residual after its sweeps"));
    queue_row_stats(t, check_);
    HETSTENCIL_CUDA_CHECK(cudaEventRecord(check_of(t).copied, check_), context("recording the residual"));
  }

  // Joins the check of all devices with iterate t's row stats on the host.
  CheckOutcome agree_check(Endpoint& port, std::int64_t t) const {
    const CheckBuffers& c = check_of(t);
    const double* row_max = c.host_row_stats.get<double>() + rows_.count;
    return port.check(t, c.host_row_stats.get<double>(), *std::max_element(row_max, row_max + rows_.count));
  }

  // Waits for the gathered residual of iterate t and joins the check of all devices.
  CheckOutcome join_check(Endpoint& port, std::int64_t t) {
    HETSTENCIL_CUDA_CHECK(cudaEventSynchronize(check_of(t).copied), context("computing the residual"));
    return agree_check(port, t);
  }

  // A slab alone checks iterate t, sweeping it into iterate t + 1 on the way
  // when `step`, as one graph on main_: kernels launched one by one on a
  // stream of their own, a handful of them in a process, make every kernel of
  // its later graphs slower on an H200 (docs/model.md, "a process's fifth
  // solve"), and a slab alone launches none. Returns the check's outcome; its
  // GPU time goes to compute when it sweeps, else to the check.
  template <class T>
  CheckOutcome check_alone(Endpoint& port, std::int64_t t, bool step) {
    const Clock::time_point begin = Clock::now();
    const double gpu_s = graphs_.run_check(step ? 1 : 0, buffer_of(t), static_cast<int>(t % 2), main_,
                                           context("checking the residual as a graph"), [&] {
                                             if (step) {
                                               sweep<T>(t, 1, rows_.count + 1, true, main_);
                                             } else {
                                               sweep_residual<T>(t, main_);
                                             }
                                             queue_row_stats(t, main_);
                                           });
    const CheckOutcome outcome = agree_check(port, t);
    if (step) times_.compute_s += gpu_s;
    times_.check_s += since(begin) - (step ? gpu_s : 0.0);
    return outcome;
  }

  // The interior of the step from iterate t; it needs the edge rows of iterate t.
  template <class T>
  void queue_interior(std::int64_t t, bool residual) {
    const std::int64_t n = rows_.count;
    HETSTENCIL_CUDA_CHECK(cudaStreamWaitEvent(main_, edge_done_[buffer_of(t + buffer_count_ - 1)], 0),
                          context("ordering the interior after the edge rows"));
    HETSTENCIL_CUDA_CHECK(cudaEventRecord(interior_start_[buffer_of(t)], main_), context("recording the interior"));
    if (n > 2) sweep<T>(t, 2, n, residual, main_);
    HETSTENCIL_CUDA_CHECK(cudaEventRecord(interior_done_[buffer_of(t)], main_), context("recording the interior"));
  }

  // GPU time between two completed events.
  double elapsed(const cuda::Event& from, const cuda::Event& to) const {
    float ms = 0.0f;
    HETSTENCIL_CUDA_CHECK(cudaEventElapsedTime(&ms, from, to), context("timing its sweeps"));
    return 1e-3 * static_cast<double>(ms);
  }

  // Compute time is what the GPU spends sweeping, from events, not the host's
  // waits: what the model's rate curve (a sweep of all its rows) predicts. The
  // edge rows run beside the interior, so an iteration's sweep is the interior's
  // time scaled to all rows; a slab of one or two rows is all edges.
  void time_edges(std::int64_t t) {
    if (rows_.count <= 2) times_.compute_s += elapsed(edge_start_[buffer_of(t)], edge_swept_[buffer_of(t)]);
  }
  void time_interior(std::int64_t t) {
    if (rows_.count <= 2) return;
    const double n = static_cast<double>(rows_.count);
    times_.compute_s += elapsed(interior_start_[buffer_of(t)], interior_done_[buffer_of(t)]) * n / (n - 2.0);
  }

  // A tile variant: passes between the checks, each check a residual sweep of
  // the iterate in hand. Alone, all passes up to a check are queued at once;
  // with neighbours (blocked only), rounds of K sweeps (round_with_neighbours).
  // Compute time is the passes' GPU time.
  template <class T>
  void run_variant(Endpoint& port) {
    const Clock::time_point start = Clock::now();
    const std::int64_t n = rows_.count;
    const bool alone = !port.has_neighbour(Side::Top) && !port.has_neighbour(Side::Bottom);
    const int limit = cuda::allow_tile_shared_memory<T>(gpu_, context("allowing the tile kernels their shared memory"));
    // The tile kernels see the slab as a grid whose boundary is its outermost rows.
    cuda::TileArgs tiles;
    tiles.layout = layout_;
    tiles.ny = ghosts_[0] + n + ghosts_[1] - 2;
    const std::int64_t local_spike = job_->spike_row - (rows_.first - ghosts_[0]);
    if (job_->spike_row >= 0 && local_spike >= 1 && local_spike <= tiles.ny) {
      tiles.spike_row = local_spike;
      tiles.spike_col = job_->spike_col;
    }
    int current = 0;  // buffers_[current] holds iterate t
    for (std::int64_t t = 0;;) {
      if (job_->stop.checks_at(t)) {
        const Clock::time_point begin = Clock::now();
        // After iterate t's ghost rows (and the edge rows before them).
        HETSTENCIL_CUDA_CHECK(cudaStreamWaitEvent(main_, edge_done_[current], 0),
                              context("ordering the residual after the ghost rows"));
        cuda::launch_sweep<T, false, true>(owned(buffers_[current].get<T>()), nullptr, owned(h2f_.get<T>()),
                                           args(t, 1, n + 1), main_);
        HETSTENCIL_CUDA_CHECK(cudaGetLastError(), context("launching the residual"));
        queue_residual_gather(t);
        const bool stop = join_check(port, t).stop || t >= job_->stop.max_iterations;
        times_.check_s += since(begin);
        if (stop) {
          final_t_ = t;
          final_buffer_ = current;
          break;
        }
      }
      if (alone) {
        HETSTENCIL_CUDA_CHECK(cudaEventRecord(interior_start_[0], main_), context("timing its passes"));
        for (const std::int64_t end = job_->stop.next_check(t); t < end;) {
          const int steps = static_cast<int>(std::min<std::int64_t>(job_->variant.param, end - t));
          if (cuda::launch_tile_pass<T>(job_->variant, steps, buffers_[current].get<T>(),
                                        buffers_[1 - current].get<T>(), h2f_.get<T>(), tiles, limit, main_,
                                        context("running " + to_string(job_->variant.variant)))) {
            current = 1 - current;
          }
          t += steps;
        }
        HETSTENCIL_CUDA_CHECK(cudaEventRecord(interior_done_[0], main_), context("timing its passes"));
        HETSTENCIL_CUDA_CHECK(cudaEventSynchronize(interior_done_[0]),
                              context("running " + to_string(job_->variant.variant)));
        times_.compute_s += elapsed(interior_start_[0], interior_done_[0]);
        held_[current] = t;
      } else {
        round_with_neighbours<T>(port, t, current, tiles);
      }
    }
    HETSTENCIL_CUDA_CHECK(cudaDeviceSynchronize(), context("finishing the iterations"));
    if (!alone && final_t_ > 0) times_.compute_s += elapsed(interior_start_[current], interior_done_[current]);
    times_.total_s = since(start);
  }

  // A blocked round from iterate t (in buffers_[current]) to the round's end,
  // beside neighbours: the K edge rows a side first, on the edge stream, then
  // the interior on the main stream. While the interior runs, the edge rows
  // travel and the neighbours' arrive in the ghost rows. The next round's edge
  // rows wait for this interior and those ghost rows; its interior waits only
  // for this round's edge rows, as it reads no ghost row. Returns with t and
  // current at the round's end.
  template <class T>
  void round_with_neighbours(Endpoint& port, std::int64_t& t, int& current, const cuda::TileArgs& tiles) {
    const std::int64_t end = job_->round_end(t);
    const int steps = static_cast<int>(end - t);
    const int next = 1 - current;
    const std::int64_t depth = job_->halo_depth();
    const std::int64_t first = ghosts_[0];  // the grid row of owned row 1
    const std::int64_t past = first + rows_.count;
    cuda::PassRows interior{port.has_neighbour(Side::Top) ? first + depth : first,
                            port.has_neighbour(Side::Bottom) ? past - depth : past};
    cuda::PassRows edges[2] = {{first, interior.first}, {interior.end, past}};
    if (interior.count() < 0) {  // fewer than 2 K rows: all are edge rows
      edges[0] = {first, past};
      edges[1] = interior = {past, past};
    }
    const std::string doing = context("running " + to_string(job_->variant.variant));
    const T* from = buffers_[current].get<T>();
    T* to = buffers_[next].get<T>();
    HETSTENCIL_CUDA_CHECK(cudaStreamWaitEvent(edge_, interior_done_[current], 0),
                          context("ordering the edge rows after the interior"));
    HETSTENCIL_CUDA_CHECK(cudaEventRecord(edge_start_[next], edge_), context("recording the edge rows"));
    for (const cuda::PassRows& rows : edges) cuda::launch_blocked<T>(steps, from, to, h2f_.get<T>(), tiles, rows, edge_, doing);
    HETSTENCIL_CUDA_CHECK(cudaGetLastError(), doing + ": launching the edge rows");
    HETSTENCIL_CUDA_CHECK(cudaEventRecord(edge_swept_[next], edge_), context("recording the edge rows"));
    HETSTENCIL_CUDA_CHECK(cudaStreamWaitEvent(main_, edge_swept_[current], 0),
                          context("ordering the interior after the edge rows"));
    HETSTENCIL_CUDA_CHECK(cudaEventRecord(interior_start_[next], main_), context("recording the interior"));
    cuda::launch_blocked<T>(steps, from, to, h2f_.get<T>(), tiles, interior, main_, doing);
    HETSTENCIL_CUDA_CHECK(cudaGetLastError(), doing + ": launching the interior");
    HETSTENCIL_CUDA_CHECK(cudaEventRecord(interior_done_[next], main_), context("recording the interior"));
    HETSTENCIL_CUDA_CHECK(cudaEventSynchronize(edge_swept_[next]), doing + ": sweeping its edge rows");
    times_.compute_s += elapsed(edge_start_[next], edge_swept_[next]);
    // These edge rows waited for the last round's interior.
    if (t > 0) times_.compute_s += elapsed(interior_start_[current], interior_done_[current]);
    held_[next] = end;
    current = next;
    t = end;
    const Clock::time_point waited = Clock::now();
    exchange_deep(port, t);
    times_.exchange_s += since(waited);
  }

  // A blocked round's end at iterate t: its edge rows sent (to the host for
  // neighbours that cannot reach its memory), then the neighbours' queued into
  // its ghost rows on the edge stream, where edge_done_ marks them in.
  void exchange_deep(Endpoint& port, std::int64_t t) {
    const std::int64_t depth = job_->halo_depth();
    for (Side side : {Side::Top, Side::Bottom}) {
      if (port.has_neighbour(side)) port.send(side, t, depth);
    }
    HETSTENCIL_CUDA_CHECK(cudaStreamSynchronize(edge_), context("copying its edge rows to the host"));
    port.post(t);
    receive_ghosts(port, t, depth);
    HETSTENCIL_CUDA_CHECK(cudaEventRecord(edge_done_[buffer_of(t)], edge_), context("recording its ghost rows"));
  }

  // The neighbours' edge rows of iterate t into our ghost rows: queued on the
  // edge stream, ahead of the next sweep of the edge rows.
  void receive_ghosts(Endpoint& port, std::int64_t t, std::int64_t depth) {
    Completion fills[2];
    for (Side side : {Side::Top, Side::Bottom}) {
      if (port.has_neighbour(side)) fills[static_cast<int>(side)] = port.receive(side, t, depth);
    }
    for (Completion& fill : fills) fill.wait();
  }

  // A slab without neighbours: everything on main_, as graphs, checks too
  // (check_alone): nothing waits for another stream, and no kernel is
  // launched by itself. Each step sweeps all its rows.
  template <class T>
  void run_alone(Endpoint& port) {
    const std::int64_t n = rows_.count;
    final_t_ = cuda::iterate_alone(
        job_->stop, [&](std::int64_t t, bool step) { return check_alone<T>(port, t, step).stop; },
        [&](std::int64_t t, std::int64_t steps, bool last) {
          times_.compute_s += graphs_.run(t, steps, buffer_of(t), buffer_count_, last, main_,
                                          context("sweeping its iterations as a graph"),
                                          [&](std::int64_t s) { sweep<T>(s, 1, n + 1, false, main_); });
        },
        [&](std::int64_t t) { port.post(t); });
    final_buffer_ = buffer_of(final_t_);
  }

  // Per step t -> t + 1: the edge rows first, on a high-priority stream, so that
  // they travel to the neighbours while the interior is computed; then the
  // neighbours' edge rows of iterate t + 1 are pulled into our ghost rows. When
  // iterate t is checked, the residual folds into the same sweeps; with three
  // buffers the interior of step t + 1 is queued before the check is agreed on,
  // and iterate t survives in its buffer should the solve stop there.
  template <class T>
  void run_typed(Endpoint& port) {
    if (job_->variant.variant != Variant::Sync) {
      run_variant<T>(port);
      return;
    }
    const Clock::time_point start = Clock::now();
    if (!port.has_neighbour(Side::Top) && !port.has_neighbour(Side::Bottom)) {
      run_alone<T>(port);
      HETSTENCIL_CUDA_CHECK(cudaDeviceSynchronize(), context("finishing the iterations"));
      times_.total_s = since(start);
      return;
    }
    const std::int64_t n = rows_.count;
    const std::int64_t edge_row[2] = {1, n};  // top and bottom; the same row when n == 1
    bool interior_queued = false;               // the interior of step t was queued during the last check

    for (std::int64_t t = 0;; ++t) {
      if (t >= job_->stop.max_iterations) {
        const Clock::time_point begin = Clock::now();
        HETSTENCIL_CUDA_CHECK(cudaStreamSynchronize(edge_), context("finishing the ghost rows"));
        sweep_residual<T>(t, main_);
        queue_residual_gather(t);
        join_check(port, t);
        final_t_ = t;
        final_buffer_ = buffer_of(t);
        times_.check_s += since(begin);
        if (t > 0) time_interior(t - 1);
        break;
      }
      const bool check = job_->stop.checks_at(t);
      HETSTENCIL_CUDA_CHECK(cudaStreamWaitEvent(edge_, interior_done_[buffer_of(t + buffer_count_ - 1)], 0),
                            context("ordering the edge rows after the interior"));
      HETSTENCIL_CUDA_CHECK(cudaEventRecord(edge_start_[buffer_of(t)], edge_), context("recording the edge rows"));
      for (int k = 0; k < (n > 1 ? 2 : 1); ++k) sweep<T>(t, edge_row[k], edge_row[k] + 1, check, edge_);
      HETSTENCIL_CUDA_CHECK(cudaEventRecord(edge_swept_[buffer_of(t)], edge_), context("recording the edge rows"));
      for (Side side : {Side::Top, Side::Bottom}) {
        if (port.has_neighbour(side)) port.send(side, t + 1, 1);
      }
      HETSTENCIL_CUDA_CHECK(cudaEventRecord(edge_done_[buffer_of(t)], edge_), context("recording the edge rows"));
      if (!interior_queued) queue_interior<T>(t, check);
      interior_queued = false;

      if (check) {
        const Clock::time_point begin = Clock::now();
        HETSTENCIL_CUDA_CHECK(cudaStreamWaitEvent(main_, edge_done_[buffer_of(t)], 0), context("joining the residual"));
        queue_residual_gather(t);
        if (buffer_count_ == 3 && t + 1 < job_->stop.max_iterations) {
          queue_interior<T>(t + 1, job_->stop.checks_at(t + 1));
          interior_queued = true;
        }
        const bool stop = join_check(port, t).stop;
        times_.check_s += since(begin);
        if (stop) {
          // Its sweeps made iterate t + 1, which the solve does not keep.
          final_t_ = t;
          final_buffer_ = buffer_of(t);
          break;
        }
      }
      HETSTENCIL_CUDA_CHECK(cudaEventSynchronize(edge_done_[buffer_of(t)]), context("sweeping its edge rows"));
      // The edge rows of step t waited for the interior of step t - 1.
      time_edges(t);
      if (t > 0) time_interior(t - 1);
      const Clock::time_point waited = Clock::now();
      port.post(t + 1);
      receive_ghosts(port, t + 1, 1);
      times_.exchange_s += since(waited);
    }
    HETSTENCIL_CUDA_CHECK(cudaDeviceSynchronize(), context("finishing the iterations"));
    times_.total_s = since(start);
  }

  DeviceInfo info_;
  int gpu_;
  int multiprocessors_ = 0;  // its sweeps walk bands by them (cuda::sweep_band)
  std::vector<int> host_cpus_;
  bool own_core_;
  const StencilJob* job_ = nullptr;
  RowRange rows_;
  cuda::SlabLayout layout_;
  int buffer_count_ = 2;
  cuda::DeviceMemory buffers_[3];
  cuda::DeviceMemory h2f_;
  CheckBuffers checks_[2];
  cuda::PinnedMemory host_edges_;    // [buffer][side] rows for host neighbours
  cuda::Stream main_;
  cuda::Stream edge_;
  cuda::Event edge_done_[3];         // per buffer: the step from that iterate
  cuda::Event edge_start_[3];        // timing its edge sweeps and its interior sweep
  cuda::Event edge_swept_[3];
  cuda::Event interior_start_[3];
  cuda::Event interior_done_[3];
  cuda::Stream check_;               // gathers a check's sums while main_ sweeps on
  cuda::Event swept_;                // the residual sweeps queued on main_ so far
  cuda::GraphSteps graphs_;          // the iterations of a slab alone
  std::int64_t ghosts_[2] = {1, 1};  // ghost rows above and below
  std::atomic<std::int64_t> held_[2] = {0, -1};  // a tile variant's: the iterate each buffer holds
  std::int64_t final_t_ = 0;
  int final_buffer_ = 0;             // the buffer holding iterate final_t_
  DeviceTimes times_;
  Halo halo_;
  // Any other stencil's slab, runs and measurements; other_stencil_: the attached job's.
  std::unique_ptr<CudaStencilRunner> any_stencil_;
  bool other_stencil_ = false;
};

}  // namespace

std::unique_ptr<Device> make_cuda_device(DeviceInfo info, int gpu, std::vector<int> host_cpus, bool own_core) {
  return std::make_unique<CudaDevice>(std::move(info), gpu, std::move(host_cpus), own_core);
}

}  // namespace hetstencil
