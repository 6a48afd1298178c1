#include "model/calibrate.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <atomic>
#include <exception>
#include <memory>
#include <random>
#include <thread>

#include <spdlog/spdlog.h>

#include "devices/affinity.hpp"
#include "devices/cpu/cpu_device.hpp"
#include "devices/cpu/numa_buffer.hpp"
#include "devices/cuda/cuda_bench.hpp"
#include "devices/cuda/cuda_device.hpp"
#include "devices/sync.hpp"
#include "hetstencil/grid.hpp"
#include "model/robust.hpp"
#include "runtime/src/dispatch.hpp"
#include "runtime/src/executor.hpp"

namespace hetstencil {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Rows doubling from 4 up to `most`, and any `extra` counts below it.
std::vector<std::int64_t> row_counts(std::int64_t most, const std::vector<std::int64_t>& extra = {}) {
  std::vector<std::int64_t> rows;
  for (std::int64_t r = 4; r < most; r *= 2) rows.push_back(r);
  rows.push_back(most);
  for (std::int64_t r : extra) {
    if (r >= 1 && r < most) rows.push_back(r);
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

// A CPU device's time per row jumps where its two slabs stop fitting in the
// last-level cache: alone (where it switches to non-temporal stores) and when
// all the devices calibrated together share one cache. Points on both sides of
// each jump keep the interpolation from smearing it over a doubling of rows.
std::vector<std::int64_t> cache_edges(const std::vector<const DeviceSpec*>& cpus, std::int64_t nx, Precision precision) {
  std::vector<std::int64_t> rows;
  const double row_bytes = static_cast<double>((nx + 2) * static_cast<std::int64_t>(value_bytes(precision)));
  for (const DeviceSpec* c : cpus) {
    if (c->cache_bytes == 0) continue;
    for (std::size_t sharing : {std::size_t{1}, cpus.size()}) {
      const auto edge = static_cast<std::int64_t>(static_cast<double>(c->cache_bytes) /
                                                  (2.0 * row_bytes * static_cast<double>(sharing)));
      for (double f : {0.9, 1.1}) rows.push_back(static_cast<std::int64_t>(f * static_cast<double>(edge)));
    }
  }
  return rows;
}

// One row and a few more, to separate latency from bandwidth.
std::vector<double> row_sizes(double row_bytes) { return {row_bytes, 4 * row_bytes, 16 * row_bytes, 64 * row_bytes}; }

template <class T>
Grid<T> random_grid(std::int64_t ny, std::int64_t nx) {
  Grid<T> g(ny, nx);
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> dist(0.5, 1.5);
  for (std::int64_t k = 0; k < g.rows() * g.cols(); ++k) g.data()[k] = static_cast<T>(dist(rng));
  return g;
}

// The ways a GPU sweeps that are calibrated: sync always, and the variant asked for.
std::vector<VariantChoice> swept(const CalibrationOptions& o) {
  std::vector<VariantChoice> out{VariantChoice{}};
  if (o.variant.variant != Variant::Sync) out.push_back(o.variant);
  return out;
}

class Budget {
 public:
  explicit Budget(double seconds) : start_(Clock::now()), seconds_(seconds) {}
  bool allows(double more) const { return since(start_) + more <= seconds_; }
  double used() const { return since(start_); }

 private:
  Clock::time_point start_;
  double seconds_;
};

constexpr double kCpuPointSeconds = 0.02;
constexpr std::int64_t kGpuLoadSize = 8192;  // the square grid a GPU sweeps beside the CPU devices' calibration
constexpr int kMostCpuRepetitions = 101;

// Every CPU device sweeps at once, point by point, as in a solve: devices that
// share a memory controller are measured sharing it; and beside every GPU
// sweeping, its host thread waiting as a GPU device's does. Measured alone, a
// CPU device of the H100 host swept 1018 rows of 16384 in 0.39 ms; beside the
// GPU in a solve it took 0.62-0.75 ms.
void cpu_curves(const Topology& topology, const std::vector<const DeviceSpec*>& cpus,
                const std::vector<const DeviceSpec*>& gpus, Precision precision, const CalibrationOptions& o,
                std::int64_t most, const Budget& budget, Profile& profile, std::vector<std::string>& skipped) {
  if (cpus.empty()) return;
  std::vector<std::unique_ptr<GpuLoad>> loads;
  for (const DeviceSpec* g : gpus) {
    loads.push_back(std::make_unique<GpuLoad>(g->gpu, g->worker_cpus.front(), g->own_core, kGpuLoadSize));
  }
  std::vector<std::unique_ptr<CpuDevice>> devices;
  for (const DeviceSpec* c : cpus) {
    devices.push_back(std::make_unique<CpuDevice>(c->info, c->worker_cpus, c->cache_bytes,
                                                  spin_limit_for(c->info.threads, topology.hardware_threads())));
  }
  std::vector<std::vector<RateCurve::Point>> points(cpus.size()), checks(cpus.size());
  dispatch(precision, [&](auto zero) {
    using T = decltype(zero);
    Grid<T> grid = random_grid<T>(most, o.nx);
    StencilJob job;
    job.precision = precision;
    job.nx = o.nx;
    job.ny = most;
    job.initial = grid.data();
    job.result = grid.data();
    for (auto& d : devices) d->attach(job, RowRange{1, most});
    double last = 0.0;
    std::int64_t last_rows = 0;
    for (std::int64_t r : row_counts(most, cache_edges(cpus, o.nx, precision))) {
      const double estimate = last_rows ? last * static_cast<double>(r) / static_cast<double>(last_rows) : 0.0;
      // Short sweeps are repeated for 20 ms at least: on a shared
      // machine single points otherwise move by a fifth between calibrations.
      const int reps = estimate > 0.0 ? std::clamp(static_cast<int>(kCpuPointSeconds / estimate), o.repetitions,
                                                   kMostCpuRepetitions)
                                      : o.repetitions;
      if (!budget.allows(2 * estimate * (reps + 1))) {
        skipped.push_back("CPU devices, " + to_string(precision) + ", from " + std::to_string(r) + " rows");
        break;
      }
      run_on_threads(devices.size(), [&](std::size_t k) {
        points[k].push_back({r, robust_time(devices[k]->sweep_samples(r, reps))});
        checks[k].push_back({r, robust_time(devices[k]->sweep_samples(r, reps, true))});
      });
      last = 0.0;
      for (const auto& p : points) last = std::max(last, p.back().seconds);
      last_rows = r;
    }
    for (auto& d : devices) d->detach();
  });
  for (std::size_t k = 0; k < cpus.size(); ++k) {
    if (points[k].empty()) continue;
    DeviceProfile& d = profile.devices[cpus[k]->info.name];
    d.kind = "cpu";
    d.rates[rate_key(precision, o.nx)] = RateCurve(points[k]);
    d.checks[rate_key(precision, o.nx)] = RateCurve(checks[k]);
  }
}

// A row's trip as the exchange makes it: `to` waits for `from` to publish, then
// pulls the row from `from`'s NUMA node; `from` waits for `to` in turn. Half a
// round trip is one hand-over and one copy, each thread on its device's first core.
TransferCurve cpu_link(const DeviceSpec& from, const DeviceSpec& to, double row_bytes, int repetitions) {
  const std::vector<double> sizes = row_sizes(row_bytes);
  const auto bytes = static_cast<std::size_t>(sizes.back());
  NumaBuffer source(bytes, from.info.numa_node, from.info.name), target(bytes, to.info.numa_node, to.info.name);
  std::memset(source.data(), 1, bytes);
  std::memset(target.data(), 0, bytes);
  const int rounds = 50 * repetitions;
  std::vector<std::pair<double, double>> samples;
  std::atomic<bool> abort{false};
  for (double b : sizes) {
    Counter published(20000), pulled(20000);
    double seconds = 0.0;
    std::thread receiver([&] {
      bind_current_thread(to.info.name, to.worker_cpus.empty() ? std::vector<int>{} : to.worker_cpus.front());
      for (int k = 1; k <= rounds; ++k) {
        published.wait_at_least(k, abort);
        std::memcpy(target.data(), source.data(), static_cast<std::size_t>(b));
        pulled.advance_to(k);
      }
    });
    std::thread sender([&] {
      bind_current_thread(from.info.name, from.worker_cpus.empty() ? std::vector<int>{} : from.worker_cpus.front());
      const Clock::time_point begin = Clock::now();
      for (int k = 1; k <= rounds; ++k) {
        published.advance_to(k);
        pulled.wait_at_least(k, abort);
      }
      seconds = since(begin) / (2.0 * rounds);
    });
    sender.join();
    receiver.join();
    samples.push_back({b, seconds});
  }
  return TransferCurve::fit(samples);
}

// What an iteration costs besides the sweep: the device alone, 4 rows, its real
// loop. Two runs of different lengths, so that what a run costs once (threads,
// the final residual) drops out of the per-iteration figure. For a GPU the
// whole iteration (its loop outlasts a 4-row sweep); for a CPU the part beyond
// the sweep.
double loop_seconds(const Topology& topology, const DeviceSpec& spec, Precision precision, std::int64_t nx,
                    const RateCurve& curve, const VariantChoice& variant) {
  std::unique_ptr<Device> device;
  const int spins = spin_limit_for(spec.info.threads, topology.hardware_threads());
  if (spec.info.kind == DeviceKind::Gpu) {
    device = make_cuda_device(spec.info, spec.gpu, spec.worker_cpus.front(), spec.own_core);
  } else {
    device = std::make_unique<CpuDevice>(spec.info, spec.worker_cpus, spec.cache_bytes, spins);
  }
  Problem p;
  p.nx = nx;
  p.ny = 4;
  p.precision = precision;
  const Plan plan({{0, 1, 4}}, variant);
  const auto run_seconds = [&](std::int64_t iterations) {
    p.stop.max_iterations = iterations;
    return execute(p, plan, {device.get()}, spins).report.solve_s;
  };
  constexpr std::int64_t kShort = 100, kLong = 600;
  run_seconds(kShort);  // warm-up
  const double per_iteration = std::max(0.0, (run_seconds(kLong) - run_seconds(kShort)) / (kLong - kShort));
  return spec.info.kind == DeviceKind::Gpu ? per_iteration : std::max(0.0, per_iteration - curve.seconds(4));
}

// Set-up and tear-down as a solve makes them: the devices attach a slab and
// detach it at once (allocation, first touch or copy to the GPU, and back), at
// two slab sizes, fitted as latency + bytes / bandwidth. Called for the GPUs
// and the CPU devices apart: in a solve the CPU's slab is a few percent of the
// GPUs', and first-touching one as large as theirs beside their copies
// halved the GPUs' measured bandwidth (H100 host: 3.9 GB/s calibrated, 7.4
// measured in the solve).
void setup_curves(const Topology& topology, const std::vector<DeviceSpec>& specs, Precision precision, std::int64_t nx,
                  std::int64_t most, Profile& profile) {
  std::vector<std::unique_ptr<Device>> devices;
  for (const auto& spec : specs) {
    if (spec.info.kind == DeviceKind::Gpu) {
      devices.push_back(make_cuda_device(spec.info, spec.gpu, spec.worker_cpus.front(), spec.own_core));
    } else {
      devices.push_back(std::make_unique<CpuDevice>(spec.info, spec.worker_cpus, spec.cache_bytes,
                                                    spin_limit_for(spec.info.threads, topology.hardware_threads())));
    }
  }
  const std::vector<std::int64_t> sizes = {std::max<std::int64_t>(4, most / 8), std::max<std::int64_t>(8, most / 2)};
  std::vector<std::vector<std::pair<double, double>>> in(devices.size()), out(devices.size());
  dispatch(precision, [&](auto zero) {
    using T = decltype(zero);
    Grid<T> grid = random_grid<T>(sizes.back(), nx);
    StencilJob job;
    job.precision = precision;
    job.nx = nx;
    job.ny = sizes.back();
    job.initial = grid.data();
    job.result = grid.data();
    const double row_bytes = static_cast<double>(job.row_bytes());
    for (std::int64_t rows : sizes) {
      for (int rep = 0; rep < 2; ++rep) {
        run_on_threads(devices.size(), [&](std::size_t k) {
          Clock::time_point begin = Clock::now();
          devices[k]->attach(job, RowRange{1, rows});
          in[k].push_back({row_bytes * static_cast<double>(rows + 2), since(begin)});
          begin = Clock::now();
          devices[k]->detach();
          out[k].push_back({row_bytes * static_cast<double>(rows), since(begin)});
        });
      }
    }
  });
  for (std::size_t k = 0; k < devices.size(); ++k) {
    DeviceProfile& d = profile.devices[specs[k].info.name];
    d.setup_in = TransferCurve::fit(in[k]);
    d.setup_out = TransferCurve::fit(out[k]);
  }
}

}  // namespace

Calibration calibrate(const Topology& topology, const std::vector<DeviceSpec>& devices,
                      const CalibrationOptions& o, Profile profile) {
  const Budget budget(o.budget_s);
  Calibration out;
  profile.fingerprint = fingerprint_of(topology);
  const std::int64_t most = o.max_rows > 0 ? o.max_rows : o.nx;
  std::vector<const DeviceSpec*> cpus, gpus;
  for (const auto& d : devices) (d.info.kind == DeviceKind::Gpu ? gpus : cpus).push_back(&d);

  // Links first: they are quick, and the curves use what is left.
  const double row_bytes = static_cast<double>((o.nx + 2) * static_cast<std::int64_t>(value_bytes(o.precisions.front())));
  for (const DeviceSpec* a : cpus) {
    for (const DeviceSpec* b : cpus) {
      if (a != b) profile.links[link_key(a->info.name, b->info.name)] = cpu_link(*a, *b, row_bytes, o.repetitions);
    }
  }
  if (!gpus.empty()) {
    // Every GPU copies at once, as in a halo exchange: the figures are for a loaded machine.
    std::vector<GpuLinkSamples> samples(gpus.size());
    run_on_threads(gpus.size(), [&](std::size_t k) {
      std::vector<int> peers;
      for (const DeviceSpec* g : gpus) {
        if (g != gpus[k]) peers.push_back(g->gpu);
      }
      samples[k] = gpu_link_samples(gpus[k]->gpu, peers, row_sizes(row_bytes), o.repetitions);
    });
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      const std::string& g = gpus[k]->info.name;
      for (const DeviceSpec* c : cpus) {
        profile.links[link_key(g, c->info.name)] = TransferCurve::fit(samples[k].to_host);
        profile.links[link_key(c->info.name, g)] = TransferCurve::fit(samples[k].from_host);
      }
      std::size_t p = 0;
      for (const DeviceSpec* other : gpus) {
        if (other != gpus[k]) profile.links[link_key(g, other->info.name)] = TransferCurve::fit(samples[k].to_peer[p++]);
      }
    }
  }
  profile.link_conditions = gpus.empty() ? "CPU rows: a hand-over and a pull by the receiving socket, one link at a time"
                                         : "GPU copies timed on the host with every GPU copying at once; CPU rows: a "
                                           "hand-over and a pull by the receiving socket, one link at a time";

  for (Precision precision : o.precisions) {
    cpu_curves(topology, cpus, gpus, precision, o, most, budget, profile, out.skipped);
    for (const DeviceSpec* g : gpus) {
      for (const VariantChoice& variant : swept(o)) {
        if (!budget.allows(0.5)) {
          out.skipped.push_back(g->info.name + " " + to_string(precision) + " " + to_string(variant.variant));
          continue;
        }
        std::vector<RateCurve::Point> points, checks;
        for (const GpuRateSample& sample :
             gpu_rate_samples(g->gpu, precision, o.nx, row_counts(most), o.repetitions, variant)) {
          points.push_back({sample.rows, sample.sweep_s});
          checks.push_back({sample.rows, std::max(0.0, sample.checked_sweep_s - sample.sweep_s)});
        }
        DeviceProfile& d = profile.devices[g->info.name];
        d.kind = "gpu";
        d.rates[rate_key(precision, o.nx, variant)] = RateCurve(points);
        d.checks[rate_key(precision, o.nx, variant)] = RateCurve(checks);
      }
    }
  }
  for (Precision precision : o.precisions) {
    for (const auto& spec : devices) {
      // A CPU device sweeps plainly in any variant: one loop figure.
      const bool gpu = spec.info.kind == DeviceKind::Gpu;
      for (const VariantChoice& variant : gpu ? swept(o) : std::vector<VariantChoice>{{}}) {
        auto curve = profile.rate(spec.info.name, precision, o.nx, variant);
        if (!curve) continue;
        if (!budget.allows(0.2)) {
          out.skipped.push_back(spec.info.name + " " + to_string(precision) + " loop");
          continue;
        }
        profile.devices[spec.info.name].step[rate_key(precision, o.nx, variant)] =
            loop_seconds(topology, spec, precision, o.nx, *curve, variant);
      }
    }
  }
  if (budget.allows(1.0)) {
    for (const auto* group : {&gpus, &cpus}) {
      std::vector<DeviceSpec> specs;
      for (const DeviceSpec* d : *group) specs.push_back(*d);
      if (!specs.empty()) setup_curves(topology, specs, o.precisions.front(), o.nx, most, profile);
    }
  } else {
    out.skipped.push_back("set-up and tear-down");
  }
  out.seconds = budget.used();
  out.profile = std::move(profile);
  return out;
}

}  // namespace hetstencil
