#include "devices/cpu/cpu_device.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "devices/cpu/cpu_links.hpp"
#include "devices/cpu/jacobi_kernels.hpp"
#include "devices/cpu/stencil_sweep.hpp"
#include "devices/transport/transport.hpp"
#include "hetstencil/error.hpp"
#include "core/robust.hpp"
#include "core/dispatch.hpp"
#include "core/residual.hpp"

namespace hetstencil {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// What to assume where the topology does not say how large the cache is.
constexpr std::uint64_t kAssumedCacheBytes = std::uint64_t(32) << 20;

// The fewest values of a chunk of rows the workers claim (RowClaims), a few
// microseconds of a core's sweep, so that a claim costs little beside it.
constexpr std::int64_t kLeastChunkValues = 4096;

}  // namespace

CpuDevice::CpuDevice(DeviceInfo info, std::vector<std::vector<int>> worker_cpus, std::uint64_t cache_bytes,
                     int spins)
    : info_(std::move(info)),
      lead_cpus_(worker_cpus.empty() ? std::vector<int>{} : worker_cpus.front()),
      team_(info_.name, std::move(worker_cpus), spins),
      cache_bytes_(cache_bytes > 0 ? cache_bytes : kAssumedCacheBytes) {
  info_.threads = team_.size();
}

std::vector<Tunable> CpuDevice::tunables(const StencilJob& job) const {
  std::vector<Tunable> out;
  // Fewer workers than cores can stream as much memory with less contention,
  // and leave the hypervisor of a virtual machine the cores it takes (7/8 and
  // 3/4 of the team: team_size.hpp).
  Tunable threads{"threads", {}, team_.size()};
  for (int eighths : {1, 2, 4, 6, 7, 8}) {
    const int n = team_.size() * eighths / 8;
    if (n >= 1 && (threads.values.empty() || threads.values.back() != n)) threads.values.push_back(n);
  }
  out.push_back(threads);
  // Non-temporal stores once the slab overflows the cache (1), or plain ones
  // (0): neither is the faster everywhere. Plain by default for a float
  // stencil but poisson5 (an H100 host's 16 cores, 512^3: poisson7 16.5 ms
  // against 19.9 streaming, box27 31.7 against 37.2; a 2-core EPYC VM agrees
  // but for star4), streaming for double (poisson7 27.9 against 33.8, star4
  // 56.4 against 63.9) and for poisson5's row kernels.
  const bool plain = !job.poisson5 && job.precision == Precision::Float;
  out.push_back({"streaming", {0, 1}, plain ? 0 : 1});
  if (job.poisson5) return out;
  const SweepBlocking defaults;
  out.push_back({"chunk_values", {64, 128, 256, 512, 1024, 2048}, static_cast<int>(defaults.chunk_values)});
  // More points a pass than the stencil has sweeps as all of them in one.
  const int points = static_cast<int>(
      std::clamp<std::size_t>(job.stencil.points.size(), 1, static_cast<std::size_t>(defaults.points_per_pass)));
  Tunable per_pass{"points_per_pass", {}, points};
  for (int g = 1; g <= points; ++g) per_pass.values.push_back(g);
  out.push_back(per_pass);
  if (job.stencil.dimension == 3) {
    out.push_back({"tile_kib", {256, 512, 1024, 2048, 4096}, static_cast<int>(defaults.tile_bytes / 1024)});
    out.push_back({"tile_rows_per_radius", {1, 2, 4, 8, 16}, defaults.tile_rows_per_radius});
  }
  return out;
}

std::int64_t CpuDevice::least_chunk_rows() const { return (kLeastChunkValues + pitch_ - 1) / pitch_; }

Block CpuDevice::worker_rows(int worker, std::int64_t begin, std::int64_t end) const {
  const Block b = even_block(end - begin, active_, worker);
  return {b.begin + begin, b.end + begin};
}

template <class T>
T* CpuDevice::row(int buffer, std::int64_t r) const {
  return static_cast<T*>(iterates_.data(buffer)) + (r + ghosts_[0] - 1) * pitch_;
}

std::int64_t CpuDevice::global_unit(std::int64_t r) const {
  return rows_.first - 1 + r + job_->stencil.radius() - 1;
}

template <>
const StencilTerms<float>& CpuDevice::terms<float>() const {
  return terms_float_;
}
template <>
const StencilTerms<double>& CpuDevice::terms<double>() const {
  return terms_double_;
}

std::int64_t CpuDevice::pitch_of(const StencilJob& job) {
  if (!job.poisson5) return job.unit_values();
  const std::int64_t values_per_line = 64 / static_cast<std::int64_t>(value_bytes(job.precision));
  return (job.cols() + values_per_line - 1) / values_per_line * values_per_line;
}

std::size_t CpuDevice::buffer_bytes(const StencilJob& job, RowRange rows) {
  const std::int64_t slab_rows = job.ghost_rows(Side::Top, rows) + rows.count + job.ghost_rows(Side::Bottom, rows);
  return static_cast<std::size_t>(slab_rows * pitch_of(job)) * value_bytes(job.precision);
}

std::size_t CpuDevice::staged_bytes(const StencilJob& job) {
  return job.halo_depth() > 1 ? 2 * static_cast<std::size_t>(job.ghost_units()) * job.unit_bytes() : 0;
}

std::uint64_t CpuDevice::slab_bytes(const StencilJob& job, RowRange rows) const {
  return IteratePair::mapped_bytes(buffer_bytes(job, rows)) + 2 * staged_bytes(job) +
         static_cast<std::size_t>(rows.count) * sizeof(double);
}

void CpuDevice::attach(const StencilJob& job, RowRange rows) {
  if (rows.count < 1) HETSTENCIL_THROW(InvalidArgument, info_.name + ": a device needs at least one row");
  const std::vector<Tunable> parameters = tunables(job);
  check_tuning(info_.name, parameters, job.tuning);
  const auto value = [&](const char* name) { return tuned_value(job.tuning, parameters, name); };
  team_.use(value("threads"));
  active_ = value("threads");
  claims_.reset(active_);
  streaming_allowed_ = value("streaming") == 1;
  blocking_ = SweepBlocking{};
  if (!job.poisson5) {
    blocking_.chunk_values = value("chunk_values");
    blocking_.points_per_pass = value("points_per_pass");
    if (job.stencil.dimension == 3) {
      blocking_.tile_bytes = std::int64_t(value("tile_kib")) * 1024;
      blocking_.tile_rows_per_radius = value("tile_rows_per_radius");
    }
  }
  job_ = &job;
  rows_ = rows;
  for (Side side : {Side::Top, Side::Bottom}) ghosts_[static_cast<int>(side)] = job.ghost_rows(side, rows);
  pitch_ = pitch_of(job);
  value_bytes_ = value_bytes(job.precision);
  if (!job.poisson5) {
    terms_float_ = stencil_terms<float>(job.stencil, job.shape());
    terms_double_ = stencil_terms<double>(job.stencil, job.shape());
  }
  iterates_ = IteratePair(buffer_bytes(job, rows), info_.numa_node, info_.name);
  const std::size_t staged = staged_bytes(job);
  for (int slot = 0; slot < 2; ++slot) {
    staged_[slot] = allocating(info_.name, staged, [&] { return std::vector<unsigned char>(staged, 0); });
    staged_t_[slot] = -1;
  }
  next_slot_ = 0;
  row_sums_ = allocating(info_.name, static_cast<std::uint64_t>(rows.count) * sizeof(double),
                         [&] { return std::vector<double>(static_cast<std::size_t>(rows.count), 0.0); });
  worker_max_.assign(static_cast<std::size_t>(team_.size()), 0.0);
  final_t_ = 0;
  times_ = {};
  dispatch(job.precision, [&](auto zero) {
    using T = decltype(zero);
    team_.run([&](int w) { attach_rows<T>(w); });
  });
}

// Each worker first-touches its own rows (so the pages land next to it) while
// filling both buffers from the initial iterate; the outer workers also take
// the ghost rows.
template <class T>
void CpuDevice::attach_rows(int worker) {
  Block b = worker_rows(worker, 1, rows_.count + 1);
  if (worker == 0) b.begin = 1 - ghosts_[0];
  if (worker == active_ - 1) b.end = rows_.count + ghosts_[1] + 1;
  const T* initial = static_cast<const T*>(job_->initial);
  const std::int64_t unit = job_->unit_values();
  for (std::int64_t r = b.begin; r < b.end; ++r) {
    const T* src = initial + global_unit(r) * unit;
    for (int buffer = 0; buffer < 2; ++buffer) {
      T* dst = row<T>(buffer, r);
      std::memcpy(dst, src, static_cast<std::size_t>(unit) * sizeof(T));
      std::fill(dst + unit, dst + pitch_, T(0));
    }
  }
}

// Once the rows swept (in both buffers) overflow the cache, each new row would
// be read for ownership and evicted unused: write it straight to memory instead.
// Decided by the rows swept, so that a calibration over part of a slab sweeps
// as a run over a slab of that size does.
bool CpuDevice::streaming_stores(std::int64_t rows) const {
  if (rows < 0) rows = rows_.count;
  const auto bytes = static_cast<std::uint64_t>(2 * rows * pitch_) * value_bytes_;
  return streaming_allowed_ && kHasStreamingStores && bytes > cache_bytes_;
}

// The workers claim a sweep's cells in chunks (RowClaims): a worker slowed
// down holds the others up by a chunk, not by its share. In 2-D a chunk is
// rows of a share; in 3-D, tiles' lines of every plane of a share, whose tiles
// march through the share's planes in one go as its own worker's do (a chunk
// of planes would read the radius of planes beside it again).
template <class T>
void CpuDevice::sweep_rows(int worker, int from, std::int64_t begin, std::int64_t end) {
  const bool streaming = streaming_stores(end - begin);
  if (job_->stencil.dimension == 3) {
    const std::int64_t lines = job_->ny;
    const std::int64_t tile_lines = sweep_tile(job_->shape(), blocking_, sizeof(T)).lines;
    claims_.sweep(worker, active_, 0, active_ * lines, tile_lines, [&](Block b) {
      const std::int64_t owner = b.begin / lines;
      const SweepLines part{b.begin - owner * lines, b.end - owner * lines};
      sweep_units_of<T>(from, worker_rows(static_cast<int>(owner), begin, end), streaming, part);
    });
    return;
  }
  const std::int64_t least_rows = least_chunk_rows();
  if (!job_->poisson5) {
    claims_.sweep(worker, active_, begin, end, least_rows, [&](Block b) { sweep_units_of<T>(from, b, streaming); });
    return;
  }
  const T* h2f = static_cast<const T*>(job_->h2f);
  const auto sweep = streaming ? jacobi_row_streaming<T> : jacobi_row<T>;
  claims_.sweep(worker, active_, begin, end, least_rows, [&](Block b) {
    for (std::int64_t r = b.begin; r < b.end; ++r) {
      const std::int64_t global = rows_.first - 1 + r;
      sweep(row<T>(from, r - 1), row<T>(from, r), row<T>(from, r + 1), h2f ? h2f + global * job_->cols() : nullptr,
            global == job_->spike_row ? job_->spike_col : -1, row<T>(1 - from, r), job_->nx);
    }
  });
  if (streaming) stream_fence();  // the rows must be visible before the barrier
}

// Units b as a grid of their own (GridShape with its units on the split axis),
// from the radius-deep units before them: stencil_sweep's slab.
template <class T>
void CpuDevice::sweep_units_of(int from, Block b, bool streaming, SweepLines lines) {
  if (b.size() <= 0) return;
  const std::int64_t base = b.begin - job_->stencil.radius();
  GridShape view = job_->shape();
  (view.dimension() == 3 ? view.nz : view.ny) = b.size();
  const std::int64_t base_index = global_unit(base) * job_->unit_values();
  const T* h2f = static_cast<const T*>(job_->h2f);
  SlabSource<T> source;
  source.sf = h2f ? h2f + base_index : nullptr;
  source.spike_index = job_->spike_index >= 0 ? job_->spike_index - base_index : -1;
  if (job_->coefficients) {
    source.coefficients = static_cast<const T*>(job_->coefficients) + base_index;
    source.stride = job_->shape().values();
  }
  sweep_units(terms<T>(), view, row<T>(from, base), row<T>(1 - from, base), source, 0, b.size(), blocking_, streaming,
              lines);
}

template <class T>
void CpuDevice::residual_units(int worker, int current, std::int64_t count) {
  const StencilTerms<T>& update = terms<T>();
  const GridShape shape = job_->shape();
  const std::int64_t d = shape.depth;
  const bool three_d = shape.dimension() == 3;
  const T* h2f = static_cast<const T*>(job_->h2f);
  const T* coefficients = static_cast<const T*>(job_->coefficients);
  const std::int64_t stride = shape.values();
  std::vector<T> sums(static_cast<std::size_t>(shape.nx));  // a row's neighbour sums, from its first interior value
  double max_abs = 0.0;
  const auto unit_residual = [&](std::int64_t r) {
    const T* u = row<T>(current, r);
    const std::int64_t index = global_unit(r) * job_->unit_values();
    double sum = 0.0;  // of the unit's rows, in row order
    for (std::int64_t i = three_d ? d : 0; i < (three_d ? d + shape.ny : 1); ++i) {
      const std::int64_t at = i * shape.cols();
      const T* a = coefficients ? coefficients + index + at + d : nullptr;
      row_neighbours(update, blocking_, u + at + d, sums.data(), shape.nx, a, stride);
      // StencilTerms::residual with the neighbours' sum taken from sums.
      const RowResidual rr = residual_segments<T>(d, shape.nx, [&](std::int64_t j) {
        const std::int64_t cell = index + at + j;
        const T sf = h2f ? h2f[cell] : (cell == job_->spike_index ? T(1) : T(0));
        const T diagonal = a ? update.diagonal_at(a + (j - d), stride) : update.diagonal;
        return T(sf - (diagonal * u[at + j] - sums[static_cast<std::size_t>(j - d)]));
      });
      sum += rr.sum_sq;
      max_abs = std::max(max_abs, rr.max_abs);
    }
    row_sums_[static_cast<std::size_t>(r - 1)] = sum;
  };
  claims_.sweep(worker, active_, 1, count + 1, least_chunk_rows(), [&](Block b) {
    for (std::int64_t r = b.begin; r < b.end; ++r) unit_residual(r);
  });
  worker_max_[static_cast<std::size_t>(worker)] = max_abs;
}

// The residual sums of the rows a worker claims into row_sums_, their largest
// |rho| into worker_max_.
template <class T>
void CpuDevice::residual_rows(int worker, int current, std::int64_t count) {
  if (!job_->poisson5) {
    residual_units<T>(worker, current, count);
    return;
  }
  const T* h2f = static_cast<const T*>(job_->h2f);
  double max_abs = 0.0;
  claims_.sweep(worker, active_, 1, count + 1, least_chunk_rows(), [&](Block b) {
    for (std::int64_t r = b.begin; r < b.end; ++r) {
      const std::int64_t global = rows_.first - 1 + r;
      const RowResidual rr = residual_row<T>(row<T>(current, r - 1), row<T>(current, r), row<T>(current, r + 1),
                                             h2f ? h2f + global * job_->cols() : nullptr,
                                             global == job_->spike_row ? job_->spike_col : -1, job_->nx);
      row_sums_[static_cast<std::size_t>(r - 1)] = rr.sum_sq;
      max_abs = std::max(max_abs, rr.max_abs);
    }
  });
  worker_max_[static_cast<std::size_t>(worker)] = max_abs;
}

template <class T>
void CpuDevice::copy_rows(int worker, int from) {
  const Block b = worker_rows(worker, 1, rows_.count + 1);
  const bool streaming = streaming_stores();
  const auto copy = streaming ? copy_row_streaming<T> : copy_row<T>;
  if (!job_->poisson5) {
    // copy_row copies values 1..n: the whole unit from the value before it.
    for (std::int64_t r = b.begin; r < b.end; ++r) copy(row<T>(from, r) - 1, row<T>(1 - from, r) - 1, pitch_);
    if (streaming) stream_fence();
    return;
  }
  for (std::int64_t r = b.begin; r < b.end; ++r) copy(row<T>(from, r), row<T>(1 - from, r), job_->nx);
  if (streaming) stream_fence();
}

// One body per worker. Worker 0 leads: it times the phases, exchanges ghost rows
// with the neighbouring devices and joins the residual checks; the barriers keep
// the other workers from running ahead of it. A round's sweeps cover the ghost
// rows but the outermost ones (a sync solve's round: the owned rows, once).
template <class T>
void CpuDevice::run_iterations(int worker, Endpoint& port) {
  const bool leader = worker == 0;
  const Clock::time_point start = Clock::now();
  const std::int64_t radius = job_->stencil.radius();
  const std::int64_t swept_begin = 1 - ghosts_[0] + radius;
  const std::int64_t swept_end = rows_.count + 1 + ghosts_[1] - radius;
  for (std::int64_t t = 0;;) {
    const int current = static_cast<int>(t % 2);
    if (job_->stop.checks_at(t)) {
      const Clock::time_point begin = Clock::now();
      residual_rows<T>(worker, current, rows_.count);
      team_.sync();
      if (leader) {
        const double device_max = *std::max_element(worker_max_.begin(), worker_max_.end());
        stop_ = port.check(t, row_sums_.data(), device_max).stop;
        final_t_ = t;
        times_.check_s += seconds_since(begin);
      }
      team_.sync();
      if (stop_) break;
    }
    const Clock::time_point sweep_begin = Clock::now();
    const std::int64_t round_begin = t;
    for (const std::int64_t end = job_->round_end(t); t < end; ++t) {
      sweep_rows<T>(worker, static_cast<int>(t % 2), swept_begin, swept_end);
      team_.sync();
    }
    if (leader) {
      const Clock::time_point exchange_begin = Clock::now();
      const double swept = std::chrono::duration<double>(exchange_begin - sweep_begin).count();
      times_.compute_s += swept;
      if (t > round_begin) round_compute_.push_back(swept / static_cast<double>(t - round_begin));
      exchange(port, t);
      times_.exchange_s += seconds_since(exchange_begin);
    }
    team_.sync();
  }
  if (leader) {
    times_.total_s = seconds_since(start);
    times_.compute_p90_s = round_compute_.empty() ? 0.0 : percentile(round_compute_, 0.9);
  }
}

void CpuDevice::exchange(Endpoint& port, std::int64_t t) {
  const std::int64_t depth = job_->halo_depth();
  if (depth > 1) {
    // The slot Halo::host_edge gives for iterate t; the neighbours read the
    // other one, if any, until they post the end of their next round.
    staged_t_[next_slot_] = t;
    next_slot_ = 1 - next_slot_;
  }
  port.exchange(t, job_->ghost_units());
}

void CpuDevice::run(Endpoint& port) {
  stop_ = false;
  round_compute_.clear();
  round_compute_.reserve(static_cast<std::size_t>(std::min<std::int64_t>(job_->stop.max_iterations + 1, 1 << 20)));
  dispatch(job_->precision, [&](auto zero) {
    using T = decltype(zero);
    team_.run([&](int w) { run_iterations<T>(w, port); }, port.abort_flag());
  });
}

RowBlock CpuDevice::halo_block(int buffer, std::int64_t r) const {
  const std::size_t pitch_bytes = static_cast<std::size_t>(pitch_) * value_bytes_;
  // The transport moves a unit's lines, dense within the unit.
  return {static_cast<char*>(iterates_.data(buffer)) + static_cast<std::size_t>(r + ghosts_[0] - 1) * pitch_bytes,
          pitch_bytes / static_cast<std::size_t>(job_->unit_lines())};
}

RowBlock CpuDevice::Halo::edge(Side side, std::int64_t t) const {
  CpuDevice& d = device_;
  const std::int64_t first = side == Side::Top ? 1 : d.rows_.count - d.job_->ghost_units() + 1;
  return d.halo_block(static_cast<int>(t % 2), first);
}

// One row a round: iterate t stays in its buffer until the neighbours have
// taken it (we overwrite it only in the round after their next). Deeper: the slot.
RowBlock CpuDevice::Halo::host_edge(Side side, std::int64_t t) const {
  CpuDevice& d = device_;
  if (d.job_->halo_depth() == 1) return edge(side, t);
  const int slot = d.staged_t_[0] == t ? 0 : 1;
  if (d.staged_t_[slot] != t) {
    HETSTENCIL_THROW(Error, d.info_.name + ": no edge rows of iterate " + std::to_string(t) + " are staged");
  }
  return {d.staged_[slot].data() +
              static_cast<std::size_t>(static_cast<int>(side) * d.job_->ghost_units()) * d.job_->unit_bytes(),
          d.job_->line_bytes()};
}

RowBlock CpuDevice::Halo::ghost(Side side, std::int64_t t) const {
  CpuDevice& d = device_;
  const std::int64_t first = side == Side::Top ? 1 - d.job_->ghost_units() : d.rows_.count + 1;
  return d.halo_block(static_cast<int>(t % 2), first);
}

template <class T>
void CpuDevice::detach_rows(int worker) {
  const Block b = worker_rows(worker, 1, rows_.count + 1);
  T* result = static_cast<T*>(job_->result);
  const int final_buffer = static_cast<int>(final_t_ % 2);
  for (std::int64_t r = b.begin; r < b.end; ++r) {
    std::memcpy(result + global_unit(r) * job_->unit_values(), row<T>(final_buffer, r),
                static_cast<std::size_t>(job_->unit_values()) * sizeof(T));
  }
}

void CpuDevice::detach() {
  if (job_->result) {
    dispatch(job_->precision, [&](auto zero) {
      using T = decltype(zero);
      team_.run([&](int w) { detach_rows<T>(w); });
    });
  }
  iterates_ = IteratePair();
  // The job may end with the attachment (a caller's local): no use of it after.
  job_ = nullptr;
}

void CpuDevice::check_attached(const StencilJob& job, const char* doing) const {
  if (job_ != &job) HETSTENCIL_THROW(InvalidArgument, info_.name + ": " + doing + " needs the job's slab attached");
}

SweepVsCopy CpuDevice::sweep_vs_copy(const StencilJob& job, int repetitions) {
  check_attached(job, "timing a sweep beside a copy");
  std::vector<double> sweeps, copies;
  dispatch(job_->precision, [&](auto zero) {
    using T = decltype(zero);
    team_.run([&](int w) {
      // Warm-up of each, then sweep and copy alternate so that drift hits both.
      for (int rep = -1; rep < repetitions; ++rep) {
        for (int kind = 0; kind < 2; ++kind) {
          team_.sync();
          const Clock::time_point begin = Clock::now();
          if (kind == 0) {
            sweep_rows<T>(w, 0, 1, rows_.count + 1);
          } else {
            copy_rows<T>(w, 0);
          }
          team_.sync();
          if (w == 0 && rep >= 0) (kind == 0 ? sweeps : copies).push_back(seconds_since(begin));
        }
      }
    });
  });
  SweepVsCopy out;
  out.sweep_s = median(sweeps);
  out.copy_s = median(copies);
  out.streaming_stores = streaming_stores();
  return out;
}

std::vector<RateSamples> CpuDevice::measure_sweeps(const StencilJob& job, const std::vector<std::int64_t>& rows,
                                                   int repetitions, bool checks,
                                                   const std::function<void()>& before_each) {
  check_attached(job, "measuring sweeps");
  std::vector<RateSamples> out;
  for (std::int64_t r : rows) {
    RateSamples s;
    s.rows = r;
    s.sweep_s = sweep_samples(r, repetitions, false, before_each);
    if (checks) s.check_s = sweep_samples(r, repetitions, true, before_each);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<LinkSamples> CpuDevice::measure_links(const std::vector<const Device*>& others,
                                                  const std::vector<double>& sizes, int repetitions) const {
  std::vector<LinkSamples> out;
  const CpuEnd from{info_.name, info_.numa_node, lead_cpus_};
  for (const Device* other : others) {
    const auto* cpu = dynamic_cast<const CpuDevice*>(other);
    if (!cpu || cpu == this) continue;
    const CpuEnd to{cpu->info_.name, cpu->info_.numa_node, cpu->lead_cpus_};
    out.push_back({this, other, cpu_link_samples(from, to, sizes, repetitions)});
  }
  return out;
}

std::vector<double> CpuDevice::sweep_samples(std::int64_t rows, int repetitions, bool residual,
                                             const std::function<void()>& before_each) {
  rows = std::min(rows, rows_.count);
  std::vector<double> samples;
  dispatch(job_->precision, [&](auto zero) {
    using T = decltype(zero);
    team_.run([&](int w) {
      for (int rep = -1; rep < repetitions; ++rep) {
        // Back and forth between the buffers, as a solve does: a sweep always
        // in one direction would read rows that never leave the cache when its
        // stores bypass it, and time a slab larger than the cache as if it fit.
        const int from = (rep + 1) % 2;
        if (w == 0 && before_each) before_each();
        team_.sync();
        const Clock::time_point begin = Clock::now();
        if (residual) {
          residual_rows<T>(w, from, rows);
        } else {
          sweep_rows<T>(w, from, 1, rows + 1);
        }
        team_.sync();
        if (w == 0 && rep >= 0) samples.push_back(seconds_since(begin));
      }
    });
  });
  return samples;
}

}  // namespace hetstencil
