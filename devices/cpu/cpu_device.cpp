#include "devices/cpu/cpu_device.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "devices/cpu/jacobi_kernels.hpp"
#include "devices/halo_port.hpp"
#include "hetstencil/error.hpp"
#include "model/robust.hpp"
#include "runtime/src/dispatch.hpp"
#include "runtime/src/residual.hpp"

namespace hetstencil {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// What to assume where the topology does not say how large the cache is.
constexpr std::uint64_t kAssumedCacheBytes = std::uint64_t(32) << 20;

}  // namespace

CpuDevice::CpuDevice(DeviceInfo info, std::vector<std::vector<int>> worker_cpus, std::uint64_t cache_bytes,
                     int spins)
    : info_(std::move(info)),
      team_(info_.name, std::move(worker_cpus), spins),
      cache_bytes_(cache_bytes > 0 ? cache_bytes : kAssumedCacheBytes) {
  info_.threads = team_.size();
}

Block CpuDevice::worker_rows(int worker, std::int64_t count) const {
  const Block b = even_block(count < 0 ? rows_.count : count, team_.size(), worker);
  return {b.begin + 1, b.end + 1};  // slab row 0 is the upper ghost row
}

template <class T>
T* CpuDevice::row(int buffer, std::int64_t r) const {
  return static_cast<T*>(buffers_[buffer].data()) + r * pitch_;
}

void CpuDevice::attach(const StencilJob& job, RowRange rows) {
  if (rows.count < 1) HETSTENCIL_THROW(InvalidArgument, info_.name + ": a device needs at least one row");
  job_ = &job;
  rows_ = rows;
  const std::size_t bytes_per_value = value_bytes(job.precision);
  const std::int64_t values_per_line = 64 / static_cast<std::int64_t>(bytes_per_value);
  pitch_ = (job.cols() + values_per_line - 1) / values_per_line * values_per_line;
  const std::size_t bytes = static_cast<std::size_t>((rows.count + 2) * pitch_) * bytes_per_value;
  for (auto& b : buffers_) b = NumaBuffer(bytes, info_.numa_node, info_.name);
  row_sums_.assign(static_cast<std::size_t>(rows.count), 0.0);
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
  Block b = worker_rows(worker);
  if (worker == 0) b.begin = 0;
  if (worker == team_.size() - 1) b.end = rows_.count + 2;
  const T* initial = static_cast<const T*>(job_->initial);
  for (std::int64_t r = b.begin; r < b.end; ++r) {
    const T* src = initial + (rows_.first - 1 + r) * job_->cols();
    for (int buffer = 0; buffer < 2; ++buffer) {
      T* dst = row<T>(buffer, r);
      std::memcpy(dst, src, static_cast<std::size_t>(job_->cols()) * sizeof(T));
      std::fill(dst + job_->cols(), dst + pitch_, T(0));
    }
  }
}

// Once the rows swept (in both buffers) overflow the cache, each new row would
// be read for ownership and evicted unused: write it straight to memory instead.
// Decided by the rows swept, so that a calibration over part of a slab sweeps
// as a run over a slab of that size does.
bool CpuDevice::streaming_stores(std::int64_t rows) const {
  if (rows < 0) rows = rows_.count;
  const auto bytes = static_cast<std::uint64_t>(2 * rows * pitch_) * value_bytes(job_->precision);
  return kHasStreamingStores && bytes > cache_bytes_;
}

template <class T>
void CpuDevice::sweep_rows(int worker, int from, std::int64_t count) {
  const Block b = worker_rows(worker, count);
  const bool streaming = streaming_stores(count);
  const T* h2f = static_cast<const T*>(job_->h2f);
  const auto sweep = streaming ? jacobi_row_streaming<T> : jacobi_row<T>;
  for (std::int64_t r = b.begin; r < b.end; ++r) {
    const std::int64_t global = rows_.first - 1 + r;
    sweep(row<T>(from, r - 1), row<T>(from, r), row<T>(from, r + 1), h2f ? h2f + global * job_->cols() : nullptr,
          global == job_->spike_row ? job_->spike_col : -1, row<T>(1 - from, r), job_->nx);
  }
  if (streaming) stream_fence();  // the rows must be visible before the barrier
}

// A worker's rows' residual sums into row_sums_, its largest |rho| into worker_max_.
template <class T>
void CpuDevice::residual_rows(int worker, int current, std::int64_t count) {
  const Block b = worker_rows(worker, count);
  const T* h2f = static_cast<const T*>(job_->h2f);
  double max_abs = 0.0;
  for (std::int64_t r = b.begin; r < b.end; ++r) {
    const std::int64_t global = rows_.first - 1 + r;
    const RowResidual rr = residual_row<T>(row<T>(current, r - 1), row<T>(current, r), row<T>(current, r + 1),
                                           h2f ? h2f + global * job_->cols() : nullptr,
                                           global == job_->spike_row ? job_->spike_col : -1, job_->nx);
    row_sums_[static_cast<std::size_t>(r - 1)] = rr.sum_sq;
    max_abs = std::max(max_abs, rr.max_abs);
  }
  worker_max_[static_cast<std::size_t>(worker)] = max_abs;
}

template <class T>
void CpuDevice::copy_rows(int worker, int from) {
  const Block b = worker_rows(worker);
  const bool streaming = streaming_stores();
  const auto copy = streaming ? copy_row_streaming<T> : copy_row<T>;
  for (std::int64_t r = b.begin; r < b.end; ++r) copy(row<T>(from, r), row<T>(1 - from, r), job_->nx);
  if (streaming) stream_fence();
}

// One body per worker. Worker 0 leads: it times the phases, exchanges ghost rows
// with the neighbouring devices and joins the residual checks; the barriers keep
// the other workers from running ahead of it.
template <class T>
void CpuDevice::run_iterations(int worker, HaloPort& port) {
  const bool leader = worker == 0;
  const Clock::time_point start = Clock::now();
  for (std::int64_t t = 0;; ++t) {
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
    sweep_rows<T>(worker, current, rows_.count);
    team_.sync();
    if (leader) {
      const Clock::time_point exchange_begin = Clock::now();
      times_.compute_s += std::chrono::duration<double>(exchange_begin - sweep_begin).count();
      const int next = 1 - current;
      port.publish(t + 1);
      port.wait_neighbours(t + 1);
      if (port.has_neighbour(Side::Top)) {
        std::memcpy(row<T>(next, 0), port.neighbour_edge(Side::Top, t + 1), job_->row_bytes());
      }
      if (port.has_neighbour(Side::Bottom)) {
        std::memcpy(row<T>(next, rows_.count + 1), port.neighbour_edge(Side::Bottom, t + 1), job_->row_bytes());
      }
      times_.exchange_s += seconds_since(exchange_begin);
    }
    team_.sync();
  }
  if (leader) times_.total_s = seconds_since(start);
}

void CpuDevice::run(HaloPort& port) {
  stop_ = false;
  dispatch(job_->precision, [&](auto zero) {
    using T = decltype(zero);
    team_.run([&](int w) { run_iterations<T>(w, port); }, port.abort_flag());
  });
}

const void* CpuDevice::edge_row(Side side, std::int64_t t) const {
  const std::int64_t r = side == Side::Top ? 1 : rows_.count;
  return static_cast<const char*>(buffers_[t % 2].data()) +
         static_cast<std::size_t>(r * pitch_) * value_bytes(job_->precision);
}

template <class T>
void CpuDevice::detach_rows(int worker) {
  const Block b = worker_rows(worker);
  T* result = static_cast<T*>(job_->result);
  const int final_buffer = static_cast<int>(final_t_ % 2);
  for (std::int64_t r = b.begin; r < b.end; ++r) {
    std::memcpy(result + (rows_.first - 1 + r) * job_->cols(), row<T>(final_buffer, r),
                static_cast<std::size_t>(job_->cols()) * sizeof(T));
  }
}

void CpuDevice::detach() {
  dispatch(job_->precision, [&](auto zero) {
    using T = decltype(zero);
    team_.run([&](int w) { detach_rows<T>(w); });
  });
  for (auto& b : buffers_) b = NumaBuffer();
}

CpuDevice::SweepVsCopy CpuDevice::bench(int repetitions) {
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
            sweep_rows<T>(w, 0, rows_.count);
          } else {
            copy_rows<T>(w, 0);
          }
          team_.sync();
          if (w == 0 && rep >= 0) (kind == 0 ? sweeps : copies).push_back(seconds_since(begin));
        }
      }
    });
  });
  return {median(sweeps), median(copies)};
}

std::vector<double> CpuDevice::sweep_samples(std::int64_t rows, int repetitions, bool residual) {
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
        team_.sync();
        const Clock::time_point begin = Clock::now();
        if (residual) {
          residual_rows<T>(w, from, rows);
        } else {
          sweep_rows<T>(w, from, rows);
        }
        team_.sync();
        if (w == 0 && rep >= 0) samples.push_back(seconds_since(begin));
      }
    });
  });
  return samples;
}

}  // namespace hetstencil
