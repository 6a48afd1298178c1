#include "devices/cuda/cuda_stencil_runner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <type_traits>

#include "core/dispatch.hpp"
#include "core/log.hpp"
#include "devices/affinity.hpp"
#include "devices/cuda/coefficient_kernels.cuh"
#include "devices/cuda/cuda_check.hpp"
#include "devices/cuda/cuda_resources.hpp"
#include "devices/cuda/cuda_row_mover.hpp"
#include "devices/cuda/cuda_stencil_bench.hpp"
#include "devices/cuda/alone_steps.hpp"
#include "devices/cuda/graph_steps.hpp"
#include "devices/cuda/stencil_kernels.cuh"
#include "devices/transport/transport.hpp"

namespace hetstencil {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The slab holds whole units (rows in 2-D, planes in 3-D) in the layout of
// cuda::StencilSlab (lines a pitch apart): unit s of a buffer (0-based,
// ghost units included) is the grid's unit base_unit_ + s. Iterate t lives in
// buffers_[t % 2]. Edge and ghost units travel as lines (StencilJob::unit_lines)
// in that layout; their host copies are dense, as the grid.
//
// Sync (one sweep a round, ghost units the stencil's radius deep): per step,
// the edge units (radius deep each side) first on a high-priority stream and
// sent to the neighbours while the interior is swept on the other stream, as
// poisson5's device does. Blocked (K sweeps a round, K x radius ghost units):
// K sweeps of all but the outermost radius of units, then the exchange; the
// edges a round ends with are staged (two slots used in turn) since the next
// round overwrites both buffers before the neighbours have surely read them.
// A check folds the residual into the round's first sweep; the last iterate
// (max_iterations) is checked by a residual pass of its own.
class CudaStencilSlab final : public CudaStencilRunner {
 public:
  CudaStencilSlab(const std::string& name, int gpu, const std::vector<int>& host_cpus)
      : name_(name), gpu_(gpu), host_cpus_(host_cpus), halo_(*this, name_ + " (CUDA device " + std::to_string(gpu) + ")") {}

  ~CudaStencilSlab() override {
    if (cudaSetDevice(gpu_) == cudaSuccess) release();
  }

  std::uint64_t slab_bytes(const StencilJob& job, RowRange rows) const override {
    refuse_variant(job);
    const cuda::StencilSlab slab = cuda::StencilSlab::of(job.shape());
    const std::int64_t units = job.ghost_rows(Side::Top, rows) + rows.count + job.ghost_rows(Side::Bottom, rows);
    const std::uint64_t buffer = static_cast<std::uint64_t>(slab.buffer_values(units)) * value_bytes(job.precision);
    const bool sf = job.grid_source || job.h2f != nullptr;
    const std::uint64_t sums = static_cast<std::uint64_t>(rows.count * slab.lines * slab.segments) * sizeof(double);
    const std::uint64_t coefficients = job.stencil.variable ? (job.stencil.points.size() + 1) * buffer : 0;
    return (sf ? 3 : 2) * buffer + coefficients + 2 * sums + 2 * static_cast<std::uint64_t>(rows.count) * sizeof(double) +
           staged_bytes(job, slab);
  }

  void attach(const StencilJob& job, RowRange rows) override {
    refuse_variant(job);
    if (rows.count < 1) HETSTENCIL_THROW(InvalidArgument, name_ + ": a device needs at least one unit");
    job_ = &job;
    rows_ = rows;
    dispatch(job.precision, [&](auto zero) { attach_typed<decltype(zero)>(); });
  }

  HaloRows& halo() override { return halo_; }

  void run(Endpoint& port) override {
    bind_current_thread(name_, host_cpus_);
    use("starting the iterations");
    dispatch(job_->precision, [&](auto zero) {
      using T = decltype(zero);
      if (job_->variant.variant == Variant::Sync) {
        run_sync<T>(port);
      } else {
        run_blocked<T>(port);
      }
    });
  }

  void detach() override {
    use("copying the result back");
    if (job_->result) {
      char* dst = static_cast<char*>(job_->result) + static_cast<std::size_t>(base_unit_ + ghosts_[0]) * job_->unit_bytes();
      cuda::copy_units(slab_, value_bytes(job_->precision), dst, unit_of(final_t_ % 2, ghosts_[0]), rows_.count,
                       cudaMemcpyDeviceToHost, nullptr, context("copying its units back to the host"));
    }
    release();
    job_ = nullptr;
  }

  DeviceTimes times() const override { return times_; }

  std::vector<RateSamples> measure_sweeps(const StencilJob& job, const std::vector<std::int64_t>& rows,
                                          int repetitions, bool checks) override {
    return gpu_stencil_rate_samples(gpu_, job, rows, repetitions, checks);
  }

  SweepVsCopy sweep_vs_copy(const StencilJob& job, int repetitions) override {
    return bench_gpu_stencil_sweep(gpu_, job, repetitions);
  }

 private:
  // The units as the transport sees them: ghost units of iterate t in its
  // buffer; edge units in its buffer (sync: the neighbours have taken them
  // before we sweep that buffer again) or in the slot staged for t (blocked);
  // host copies in the pinned slot of the same number.
  class Halo final : public HaloRows {
   public:
    Halo(CudaStencilSlab& device, const std::string& who) : device_(device), mover_(device.gpu_, who) {}
    RowBlock edge(Side side, std::int64_t t) const override {
      const CudaStencilSlab& d = device_;
      if (d.job_->halo_depth() > 1) return {d.staged_.get<char>() + d.slot(side, t) * d.staged_side_bytes(), d.line_pitch()};
      const std::int64_t first = side == Side::Top ? d.ghosts_[0] : d.ghosts_[0] + d.rows_.count - d.job_->ghost_units();
      return {d.unit_of(t % 2, first), d.line_pitch()};
    }
    RowBlock host_edge(Side side, std::int64_t t) const override {
      const CudaStencilSlab& d = device_;
      return {d.host_edges_.get<char>() + d.slot(side, t) * d.host_side_bytes(), d.job_->line_bytes()};
    }
    RowBlock ghost(Side side, std::int64_t t) const override {
      const CudaStencilSlab& d = device_;
      const std::int64_t first = side == Side::Top ? 0 : d.ghosts_[0] + d.rows_.count;
      return {d.unit_of(t % 2, first), d.line_pitch()};
    }
    std::vector<const void*> edge_memory() const override {
      const CudaStencilSlab& d = device_;
      std::vector<const void*> blocks{d.buffers_[0].get(), d.buffers_[1].get()};
      if (d.staged_.get()) blocks.push_back(d.staged_.get());
      return blocks;
    }
    RowMover& mover() override { return mover_; }
    CudaRowMover& cuda_mover() { return mover_; }

   private:
    CudaStencilSlab& device_;
    CudaRowMover mover_;
  };

  std::string context(const std::string& doing) const {
    return name_ + " (CUDA device " + std::to_string(gpu_) + "): " + doing;
  }
  void use(const std::string& doing) const { HETSTENCIL_CUDA_CHECK(cudaSetDevice(gpu_), context(doing)); }

  // The asynchronous variants' kernels are poisson5's own.
  void refuse_variant(const StencilJob& job) const {
    const Variant v = job.variant.variant;
    if (v == Variant::Sync || v == Variant::Blocked) return;
    HETSTENCIL_THROW(InvalidArgument, name_ + ": the " + to_string(v) + " variant runs poisson5 only; the stencil '" +
                                          job.stencil.name + "' runs sync or blocked");
  }

  // A blocked round's edges, staged on the GPU (in the slab's layout) and in
  // pinned memory: two slots of [side][ghost units].
  static std::size_t staged_side_bytes(const StencilJob& job, const cuda::StencilSlab& slab) {
    return static_cast<std::size_t>(job.ghost_units() * slab.unit_values) * value_bytes(job.precision);
  }
  static std::uint64_t staged_bytes(const StencilJob& job, const cuda::StencilSlab& slab) {
    return job.halo_depth() > 1 ? 4 * staged_side_bytes(job, slab) : 0;
  }
  std::size_t staged_side_bytes() const { return staged_side_bytes(*job_, slab_); }
  // A side's edge units in pinned memory, dense as the grid.
  std::size_t host_side_bytes() const { return static_cast<std::size_t>(job_->ghost_units()) * job_->unit_bytes(); }
  // The slot of iterate t's edge units on `side`: [t % 2][side] (sync), or
  // [the slot staged for t][side] (blocked).
  std::size_t slot(Side side, std::int64_t t) const {
    if (job_->halo_depth() == 1) return static_cast<std::size_t>(2 * (t % 2) + static_cast<int>(side));
    const int staged = slot_t_[0].load() == t ? 0 : 1;
    if (slot_t_[staged].load() != t) {
      HETSTENCIL_THROW(Error, context("no edge units of iterate " + std::to_string(t) + " are staged"));
    }
    return static_cast<std::size_t>(2 * staged + static_cast<int>(side));
  }
  std::size_t line_pitch() const { return static_cast<std::size_t>(slab_.cols) * value_bytes(job_->precision); }

  char* unit_of(std::int64_t buffer, std::int64_t s) const {
    return buffers_[buffer].get<char>() +
           static_cast<std::size_t>(slab_.lead + s * slab_.unit_values) * value_bytes(job_->precision);
  }
  template <class T>
  T* units_of(const cuda::DeviceMemory& buffer) const {
    return buffer.get() ? buffer.get<T>() + slab_.lead : nullptr;
  }

  void release() {
    graphs_.clear();
    for (auto& b : buffers_) b.reset();
    sf_.reset();
    coefficients_.reset();
    variable_float_.reset();
    variable_double_.reset();
    segment_sums_.reset();
    segment_max_.reset();
    unit_stats_.reset();
    staged_.reset();
    host_edges_.reset();
    host_unit_stats_.reset();
    code_float_.reset();
    code_double_.reset();
  }

  template <class T>
  const cuda::StencilCode<T>& code() const {
    if constexpr (std::is_same_v<T, float>) {
      return *code_float_;
    } else {
      return *code_double_;
    }
  }

  template <class T>
  void attach_typed() {
    use("attaching its slab");
    for (Side side : {Side::Top, Side::Bottom}) ghosts_[static_cast<int>(side)] = job_->ghost_rows(side, rows_);
    slab_ = cuda::StencilSlab::of(job_->shape());
    const std::int64_t n = rows_.count;
    units_ = ghosts_[0] + n + ghosts_[1];
    base_unit_ = rows_.first - 1 + job_->stencil.radius() - ghosts_[0];
    const std::size_t buffer = static_cast<std::size_t>(slab_.buffer_values(units_)) * sizeof(T);
    const std::size_t needed = slab_bytes(*job_, rows_);
    std::size_t free_bytes = 0, total_bytes = 0;
    HETSTENCIL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes), context("reading its free memory"));
    const std::string slab_text = "its slab of " + std::to_string(n) + " units of the stencil '" + job_->stencil.name + "'";
    if (needed > total_bytes) {
      HETSTENCIL_THROW(InvalidArgument, context("allocating " + slab_text + ": it needs " + bytes_text(needed) +
                                                ", the GPU has " + bytes_text(total_bytes) + " in all"));
    }
    if (needed > free_bytes) {
      log::warn("{}", context(slab_text + " needs " + bytes_text(needed) + ", " + bytes_text(free_bytes) + " are free: trying"));
    }
    const std::size_t from = static_cast<std::size_t>(base_unit_) * job_->unit_bytes();
    // The lines' padding is read beside a last group of cells and never
    // stored: zeros there keep that group's quotients off the division.
    for (auto& b : buffers_) {
      b = cuda::DeviceMemory(buffer, context("allocating its slab"));
      HETSTENCIL_CUDA_CHECK(cudaMemset(b.get(), 0, buffer), context("clearing its slab"));
      upload(units_of<T>(b), static_cast<const char*>(job_->initial) + from, context("copying its units to the GPU"));
    }
    if (job_->h2f) {
      sf_ = cuda::DeviceMemory(buffer, context("allocating the right-hand side"));
      HETSTENCIL_CUDA_CHECK(cudaMemset(sf_.get(), 0, buffer), context("clearing the right-hand side"));
      upload(units_of<T>(sf_), static_cast<const char*>(job_->h2f) + from,
             context("copying the right-hand side to the GPU"));
    }
    if (job_->coefficients) attach_coefficients<T>(buffer, from);
    // The spike's cell in the slab's layout, relative to unit 0.
    const std::int64_t first_value = base_unit_ * job_->unit_values();
    const std::int64_t in_slab = job_->spike_index - first_value;
    spike_ = job_->spike_index >= 0 && in_slab >= 0 && in_slab < units_ * job_->unit_values()
                 ? in_slab / job_->unit_values() * slab_.unit_values +
                       in_slab % job_->unit_values() / slab_.grid_cols * slab_.cols + in_slab % slab_.grid_cols
                 : -1;
    const std::size_t sums = static_cast<std::size_t>(n * slab_.lines * slab_.segments) * sizeof(double);
    segment_sums_ = cuda::DeviceMemory(sums, context("allocating the residual sums"));
    segment_max_ = cuda::DeviceMemory(sums, context("allocating the residual maxima"));
    unit_stats_ = cuda::DeviceMemory(2 * static_cast<std::size_t>(n) * sizeof(double), context("allocating the unit sums"));
    host_unit_stats_ = cuda::PinnedMemory(2 * static_cast<std::size_t>(n) * sizeof(double),
                                          context("allocating pinned unit sums"));
    host_edges_ = cuda::PinnedMemory(4 * host_side_bytes(), context("allocating pinned edge units"));
    staged_ = cuda::DeviceMemory(staged_bytes(*job_, slab_), context("allocating staged edge units"));
    slot_t_[0] = slot_t_[1] = -1;
    next_slot_ = 0;
    auto made = std::make_unique<cuda::StencilCode<T>>(job_->stencil, job_->shape(), gpu_,
                                                       cuda::sweep_choice(name_, *job_, cuda::gpu_stages(gpu_)));
    if constexpr (std::is_same_v<T, float>) {
      code_float_ = std::move(made);
    } else {
      code_double_ = std::move(made);
    }
    main_ = cuda::Stream(context("creating its compute stream"));
    edge_ = cuda::Stream(context("creating its edge stream"), true);
    halo_.cuda_mover().use_stream(edge_);
    for (int b = 0; b < 2; ++b) {
      sweep_start_[b] = cuda::Event(context("creating a timing event"), true);
      sweep_done_[b] = cuda::Event(context("creating a timing event"), true);
    }
    edges_done_ = cuda::Event(context("creating an event"));
    ghosts_in_ = cuda::Event(context("creating an event"));
    residual_copied_ = cuda::Event(context("creating an event"));
    graphs_.reset(context("creating a timing event"));
    // The copies above ran on the legacy stream, which the non-blocking
    // streams of the iterations do not wait for.
    HETSTENCIL_CUDA_CHECK(cudaDeviceSynchronize(), context("finishing its set-up"));
    final_t_ = 0;
    times_ = {};
  }

  // The slab's units of dense grid values from `host` (its unit 0) into `to`.
  void upload(void* to, const char* host, const std::string& doing) const {
    cuda::copy_units(slab_, value_bytes(job_->precision), to, host, units_, cudaMemcpyHostToDevice, nullptr, doing);
  }

  // A variable stencil's grids (a_k, then D) over the slab's units, each a
  // buffer long, and the kernel that reads them.
  template <class T>
  void attach_coefficients(std::size_t buffer, std::size_t from) {
    const std::size_t grids = job_->stencil.points.size() + 1;
    const std::size_t grid_bytes = static_cast<std::size_t>(job_->shape().values()) * sizeof(T);
    coefficients_ = cuda::DeviceMemory(grids * buffer, context("allocating the coefficient grids"));
    for (std::size_t k = 0; k < grids; ++k) {
      upload(units_of<T>(coefficients_) + k * buffer / sizeof(T),
             static_cast<const char*>(job_->coefficients) + k * grid_bytes + from,
             context("copying the coefficient grids to the GPU"));
    }
    auto made = std::make_unique<cuda::CoefficientCode<T>>(stencil_terms<T>(job_->stencil, slab_.cols, slab_.unit_values));
    if constexpr (std::is_same_v<T, float>) {
      variable_float_ = std::move(made);
    } else {
      variable_double_ = std::move(made);
    }
  }

  template <class T>
  const cuda::CoefficientCode<T>* variable_code() const {
    if constexpr (std::is_same_v<T, float>) {
      return variable_float_.get();
    } else {
      return variable_double_.get();
    }
  }

  // Sweeps buffer units [begin, end) of iterate t into iterate t + 1 (none:
  // the residual alone), folding the residual of the owned units when `check`.
  template <class T>
  void sweep(std::int64_t t, std::int64_t begin, std::int64_t end, bool update, bool check, cudaStream_t stream) {
    cuda::StencilPass<T> pass;
    pass.in = units_of<T>(buffers_[t % 2]);
    pass.out = update ? units_of<T>(buffers_[(t + 1) % 2]) : nullptr;
    pass.sf = units_of<T>(sf_);
    pass.spike = spike_;
    pass.unit_begin = begin;
    pass.unit_end = end;
    if (check) {
      pass.check_begin = ghosts_[0];
      pass.check_end = ghosts_[0] + rows_.count;
    }
    pass.segment_sums = segment_sums_.get<double>();
    pass.segment_max = segment_max_.get<double>();
    if (const cuda::CoefficientCode<T>* variable = variable_code<T>()) {
      variable->launch(slab_, pass, {units_of<T>(coefficients_), slab_.buffer_values(units_)}, stream);
    } else {
      code<T>().launch(slab_, pass, stream);
    }
    HETSTENCIL_CUDA_CHECK(cudaGetLastError(), context(update ? "launching a sweep" : "launching the residual"));
  }

  // The owned units' residual sums and maxima, queued on `stream` after the
  // sweeps that fold them, copied to the host.
  void queue_unit_stats(cudaStream_t stream) {
    const std::int64_t n = rows_.count;
    cuda::stencil_unit_sums(slab_, segment_sums_.get<double>(), segment_max_.get<double>(), n,
                            unit_stats_.get<double>(), stream);
    HETSTENCIL_CUDA_CHECK(cudaGetLastError(), context("launching the unit sums"));
    HETSTENCIL_CUDA_CHECK(cudaMemcpyAsync(host_unit_stats_.get(), unit_stats_.get(), 2 * static_cast<std::size_t>(n) * sizeof(double),
                                          cudaMemcpyDeviceToHost, stream),
                          context("copying the residual unit sums"));
  }

  // Joins the check of all devices with iterate t's unit stats on the host.
  CheckOutcome agree_check(Endpoint& port, std::int64_t t) const {
    const std::int64_t n = rows_.count;
    const double* sums = host_unit_stats_.get<double>();
    return port.check(t, sums, *std::max_element(sums + n, sums + 2 * n));
  }

  // The owned units' residual sums, gathered on the compute stream once it
  // has the sweeps that fold them, then joined with the other devices'.
  CheckOutcome join_check(Endpoint& port, std::int64_t t) {
    queue_unit_stats(main_);
    HETSTENCIL_CUDA_CHECK(cudaEventRecord(residual_copied_, main_), context("recording the residual"));
    HETSTENCIL_CUDA_CHECK(cudaEventSynchronize(residual_copied_), context("computing the residual"));
    return agree_check(port, t);
  }

  // A slab alone checks iterate t, sweeping it into iterate t + 1 on the way
  // when `step`, as one graph on main_: kernels launched by themselves on a
  // stream of their own slow a process's later graphs (docs/model.md, "a
  // process's fifth solve"). Returns the check's outcome; its GPU time goes
  // to compute when it sweeps, else to the check.
  template <class T>
  CheckOutcome check_alone(Endpoint& port, std::int64_t t, bool step) {
    const Clock::time_point begin = Clock::now();
    const std::int64_t first = ghosts_[0], end = ghosts_[0] + rows_.count;
    const double gpu_s = graphs_.run_check(step ? 1 : 0, static_cast<int>(t % 2), 0, main_,
                                           context("checking the residual as a graph"), [&] {
                                             sweep<T>(t, first, end, step, true, main_);
                                             queue_unit_stats(main_);
                                           });
    const CheckOutcome outcome = agree_check(port, t);
    if (step) times_.compute_s += gpu_s;
    times_.check_s += since(begin) - (step ? gpu_s : 0.0);
    return outcome;
  }

  // A slab without neighbours: everything on main_ as graphs, its checks too;
  // nothing waits for another stream, and no kernel is launched by itself.
  template <class T>
  void run_alone(Endpoint& port) {
    const std::int64_t first = ghosts_[0], end = ghosts_[0] + rows_.count;
    final_t_ = cuda::iterate_alone(
        job_->stop, [&](std::int64_t t, bool step) { return check_alone<T>(port, t, step).stop; },
        [&](std::int64_t t, std::int64_t steps, bool last) {
          times_.compute_s += graphs_.run(t, steps, static_cast<int>(t % 2), 2, last, main_,
                                          context("sweeping its iterations as a graph"),
                                          [&](std::int64_t s) { sweep<T>(s, first, end, true, false, main_); });
        },
        [&](std::int64_t t) { port.post(t); });
  }

  // The residual of the last iterate t, once its ghost units are in.
  template <class T>
  void final_check(Endpoint& port, std::int64_t t) {
    const Clock::time_point begin = Clock::now();
    HETSTENCIL_CUDA_CHECK(cudaStreamSynchronize(edge_), context("finishing the ghost units"));
    sweep<T>(t, ghosts_[0], ghosts_[0] + rows_.count, false, true, main_);
    join_check(port, t);
    final_t_ = t;
    times_.check_s += since(begin);
  }

  double elapsed(const cuda::Event& from, const cuda::Event& to) const {
    float ms = 0.0f;
    HETSTENCIL_CUDA_CHECK(cudaEventElapsedTime(&ms, from, to), context("timing its sweeps"));
    return 1e-3 * static_cast<double>(ms);
  }

  // The neighbours' edge units of iterate t into our ghost units, queued on
  // the edge stream.
  void receive_ghosts(Endpoint& port, std::int64_t t) {
    Completion fills[2];
    for (Side side : {Side::Top, Side::Bottom}) {
      if (port.has_neighbour(side)) fills[static_cast<int>(side)] = port.receive(side, t, job_->ghost_units());
    }
    for (Completion& fill : fills) fill.wait();
  }

  // Compute time is the GPU's sweeping time, from events: the interior's
  // scaled to all units (the edges run beside it), or the edges' where the
  // slab is all edges.
  template <class T>
  void run_sync(Endpoint& port) {
    const Clock::time_point start = Clock::now();
    const std::int64_t n = rows_.count;
    const std::int64_t r = job_->stencil.radius();
    const std::int64_t first = ghosts_[0], end = ghosts_[0] + n;
    const bool split = n > 2 * r;  // else all units are edges
    const double scale = split ? static_cast<double>(n) / static_cast<double>(n - 2 * r) : 1.0;
    if (!port.has_neighbour(Side::Top) && !port.has_neighbour(Side::Bottom)) {
      run_alone<T>(port);
      HETSTENCIL_CUDA_CHECK(cudaDeviceSynchronize(), context("finishing the iterations"));
      times_.total_s = since(start);
      return;
    }
    // The sweeps of step s, once done.
    const auto time_step = [&](std::int64_t s) {
      if (s >= 0) times_.compute_s += scale * elapsed(sweep_start_[s % 2], sweep_done_[s % 2]);
    };
    for (std::int64_t t = 0;; ++t) {
      if (t >= job_->stop.max_iterations) {
        final_check<T>(port, t);
        time_step(t - 1);
        break;
      }
      const bool check = job_->stop.checks_at(t);
      const int parity = static_cast<int>(t % 2);
      // The edges of step t overwrite what the interior of step t - 1 read.
      HETSTENCIL_CUDA_CHECK(cudaStreamWaitEvent(edge_, sweep_done_[1 - parity], 0),
                            context("ordering the edge units after the interior"));
      if (!split) HETSTENCIL_CUDA_CHECK(cudaEventRecord(sweep_start_[parity], edge_), context("recording a sweep"));
      sweep<T>(t, first, split ? first + r : end, true, check, edge_);
      if (split) sweep<T>(t, end - r, end, true, check, edge_);
      if (!split) HETSTENCIL_CUDA_CHECK(cudaEventRecord(sweep_done_[parity], edge_), context("recording a sweep"));
      for (Side side : {Side::Top, Side::Bottom}) {
        if (port.has_neighbour(side)) port.send(side, t + 1, job_->ghost_units());
      }
      HETSTENCIL_CUDA_CHECK(cudaEventRecord(edges_done_, edge_), context("recording the edge units"));
      if (split) {
        HETSTENCIL_CUDA_CHECK(cudaEventRecord(sweep_start_[parity], main_), context("recording a sweep"));
        sweep<T>(t, first + r, end - r, true, check, main_);
        HETSTENCIL_CUDA_CHECK(cudaEventRecord(sweep_done_[parity], main_), context("recording a sweep"));
      }
      if (check) {
        const Clock::time_point begin = Clock::now();
        HETSTENCIL_CUDA_CHECK(cudaStreamWaitEvent(main_, edges_done_, 0), context("joining the residual"));
        const bool stop = join_check(port, t).stop;
        times_.check_s += since(begin);
        if (stop) {
          // Its sweeps made iterate t + 1, which the solve does not keep.
          final_t_ = t;
          time_step(t - 1);
          break;
        }
      }
      HETSTENCIL_CUDA_CHECK(cudaStreamSynchronize(edge_), context("sweeping its edge units"));
      // The edges of step t waited for the sweep of step t - 1.
      time_step(t - 1);
      const Clock::time_point waited = Clock::now();
      port.post(t + 1);
      receive_ghosts(port, t + 1);
      times_.exchange_s += since(waited);
    }
    HETSTENCIL_CUDA_CHECK(cudaDeviceSynchronize(), context("finishing the iterations"));
    times_.total_s = since(start);
  }

  template <class T>
  void run_blocked(Endpoint& port) {
    const Clock::time_point start = Clock::now();
    const std::int64_t r = job_->stencil.radius();
    const std::int64_t n = rows_.count;
    // All units but the outermost radius: the ghost zone's exact part shrinks
    // by the radius a sweep, and K x radius deep it still covers the owned units.
    const std::int64_t begin = r, end = units_ - r;
    const std::size_t per_side = staged_side_bytes();
    for (std::int64_t t = 0;;) {
      if (t >= job_->stop.max_iterations) {
        final_check<T>(port, t);
        break;
      }
      const bool check = job_->stop.checks_at(t);
      const std::int64_t round_end = job_->round_end(t);
      HETSTENCIL_CUDA_CHECK(cudaStreamWaitEvent(main_, ghosts_in_, 0), context("ordering the sweeps after the ghost units"));
      HETSTENCIL_CUDA_CHECK(cudaEventRecord(sweep_start_[0], main_), context("timing its sweeps"));
      sweep<T>(t, begin, end, true, check, main_);
      if (check) {
        const Clock::time_point checked = Clock::now();
        const bool stop = join_check(port, t).stop;
        times_.check_s += since(checked);
        if (stop) {
          final_t_ = t;
          break;
        }
      }
      for (std::int64_t s = t + 1; s < round_end; ++s) sweep<T>(s, begin, end, true, false, main_);
      HETSTENCIL_CUDA_CHECK(cudaEventRecord(sweep_done_[0], main_), context("timing its sweeps"));
      HETSTENCIL_CUDA_CHECK(cudaEventSynchronize(sweep_done_[0]), context("sweeping its units"));
      times_.compute_s += elapsed(sweep_start_[0], sweep_done_[0]);
      t = round_end;
      const Clock::time_point waited = Clock::now();
      // Stage the edges of iterate t in the slot the neighbours are done with.
      const int slot = next_slot_;
      next_slot_ = 1 - next_slot_;
      for (Side side : {Side::Top, Side::Bottom}) {
        if (!port.has_neighbour(side)) continue;
        const std::int64_t edge_first = side == Side::Top ? ghosts_[0] : ghosts_[0] + n - job_->ghost_units();
        HETSTENCIL_CUDA_CHECK(cudaMemcpyAsync(staged_.get<char>() + static_cast<std::size_t>(2 * slot + static_cast<int>(side)) * per_side,
                                              unit_of(t % 2, edge_first), per_side, cudaMemcpyDeviceToDevice, edge_),
                              context("staging its edge units"));
      }
      slot_t_[slot] = t;
      for (Side side : {Side::Top, Side::Bottom}) {
        if (port.has_neighbour(side)) port.send(side, t, job_->ghost_units());
      }
      HETSTENCIL_CUDA_CHECK(cudaStreamSynchronize(edge_), context("sending its edge units"));
      port.post(t);
      receive_ghosts(port, t);
      HETSTENCIL_CUDA_CHECK(cudaEventRecord(ghosts_in_, edge_), context("recording the ghost units"));
      times_.exchange_s += since(waited);
    }
    HETSTENCIL_CUDA_CHECK(cudaDeviceSynchronize(), context("finishing the iterations"));
    times_.total_s = since(start);
  }

  std::string name_;
  int gpu_;
  std::vector<int> host_cpus_;
  const StencilJob* job_ = nullptr;
  RowRange rows_;
  cuda::StencilSlab slab_;
  std::int64_t ghosts_[2] = {1, 1};  // ghost units above and below
  std::int64_t units_ = 0;           // units of a buffer, ghosts included
  std::int64_t base_unit_ = 0;       // the grid's unit of a buffer's unit 0
  std::int64_t spike_ = -1;          // the spike's index in a buffer, or -1
  std::unique_ptr<cuda::StencilCode<float>> code_float_;
  std::unique_ptr<cuda::StencilCode<double>> code_double_;
  std::unique_ptr<cuda::CoefficientCode<float>> variable_float_;   // a variable stencil's kernel, else null
  std::unique_ptr<cuda::CoefficientCode<double>> variable_double_;
  cuda::DeviceMemory coefficients_;  // a variable stencil's grids over the slab
  cuda::DeviceMemory buffers_[2];
  cuda::DeviceMemory sf_;
  cuda::DeviceMemory segment_sums_;
  cuda::DeviceMemory segment_max_;
  cuda::DeviceMemory unit_stats_;      // unit sums, then unit maxima
  cuda::DeviceMemory staged_;          // blocked: [slot][side] edge units
  cuda::PinnedMemory host_edges_;      // [slot][side] edge units for host neighbours
  cuda::PinnedMemory host_unit_stats_;
  std::atomic<std::int64_t> slot_t_[2] = {-1, -1};  // blocked: the iterate each slot holds
  int next_slot_ = 0;
  cuda::Stream main_;
  cuda::Stream edge_;
  cuda::Event sweep_start_[2];  // per parity of the step: its sweep's GPU time
  cuda::Event sweep_done_[2];
  cuda::GraphSteps graphs_;  // the iterations of a slab alone
  cuda::Event edges_done_;
  cuda::Event ghosts_in_;
  cuda::Event residual_copied_;
  std::int64_t final_t_ = 0;
  DeviceTimes times_;
  Halo halo_;
};

}  // namespace

std::unique_ptr<CudaStencilRunner> make_cuda_stencil_runner(const std::string& name, int gpu,
                                                            const std::vector<int>& host_cpus) {
  return std::make_unique<CudaStencilSlab>(name, gpu, host_cpus);
}

}  // namespace hetstencil
