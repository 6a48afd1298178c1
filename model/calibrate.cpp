#include "model/calibrate.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>

#include "core/log.hpp"
#include "devices/slab_memory.hpp"
#include "devices/sync.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/grid.hpp"
#include "hetstencil/statistics.hpp"
#include "core/robust.hpp"
#include "core/dispatch.hpp"
#include "core/timing_grid.hpp"
#include "model/calibration_steps.hpp"
#include "model/cpu_curves.hpp"
#include "model/tune.hpp"

namespace hetstencil {
namespace {

using Clock = std::chrono::steady_clock;

// One row and a few more, to separate latency from bandwidth.
std::vector<double> row_sizes(double row_bytes) { return {row_bytes, 4 * row_bytes, 16 * row_bytes, 64 * row_bytes}; }

// The ways a GPU sweeps that are calibrated: sync always, and the variant asked for.
std::vector<VariantChoice> swept(const CalibrationOptions& o) {
  std::vector<VariantChoice> out{VariantChoice{}};
  if (o.variant.variant != Variant::Sync) out.push_back(o.variant);
  return out;
}

// What a device's loop and the set-up take on the H100 host (see -v): kept
// free when the CPU curves are measured.
constexpr double kLoopSeconds = 0.2;
constexpr double kSetupSeconds = 1.0;

// The links every device measures (see Device::measure_links): the CPU devices'
// one at a time, then every GPU's at once, as in a halo exchange, so that the
// GPU figures are for a loaded machine.
void link_curves(const Topology& topology, const std::vector<DeviceSpec>& specs, const std::vector<double>& sizes,
                 int repetitions, Profile& profile) {
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<const Device*> all;
  std::vector<std::size_t> cpus, gpus;
  for (const auto& spec : specs) {
    (spec.info.kind == DeviceKind::Gpu ? gpus : cpus).push_back(devices.size());
    devices.push_back(device_for(topology, spec));
    all.push_back(devices.back().get());
  }
  std::vector<std::vector<LinkSamples>> found(devices.size());
  for (std::size_t k : cpus) found[k] = devices[k]->measure_links(all, sizes, repetitions);
  run_on_threads(gpus.size(), [&](std::size_t i) {
    found[gpus[i]] = devices[gpus[i]]->measure_links(all, sizes, repetitions);
  });
  const auto key_of = [&](const Device* d) {
    return device_key(specs[static_cast<std::size_t>(std::find(all.begin(), all.end(), d) - all.begin())].info);
  };
  for (const auto& links : found) {
    for (const LinkSamples& l : links) profile.links[link_key(key_of(l.from), key_of(l.to))] = TransferCurve::fit(l.samples);
  }
}

// A solve of the device alone, as the time of its iterations and the rest.
struct LoopTimes {
  double iteration_s = 0.0;  // an iteration, sweep and loop
  double rest_s = 0.0;       // besides its iterations: start, the one residual check, end
};

// The device's real loop alone on a slab of `rows` rows: two runs of
// different lengths, an iteration from their difference, so that what a run
// costs once (threads, the final residual) drops out, and that from the
// shorter run. The longer run lasts 50 ms at the pace of the shorter one's
// first run (a warm-up, its set-up too: a GPU's full slab is copied in and
// out), its whole time an iteration: less where what a run costs once is
// large. A sweep timed alone would size it no better, a GPU's graphs running
// its iterations several times faster. Nothing when the two would not fit in
// `budget`. The device sweeps with its tuned parameters in o.tuned.
std::optional<LoopTimes> loop_times(const Topology& topology, const DeviceSpec& spec, Precision precision,
                                    const CalibrationOptions& o, std::int64_t rows, double sweep_s,
                                    const VariantChoice& variant, const Budget& budget) {
  const std::unique_ptr<Device> device = device_for(topology, spec);
  const int spins = spin_limit_for(spec.info.threads, topology.hardware_threads());
  // Rows of a 2-D stencil, planes of a 3-D one.
  Problem p = problem_of(o, precision);
  (o.stencil.dimension == 3 ? p.nz : p.ny) = rows;
  const Plan plan({{0, 1, rows}}, variant);
  const Tuning tuning = tuned_values(o.tuned, spec.info.name, p.stencil, precision);
  const auto run_seconds = [&](std::int64_t iterations) {
    p.stop.max_iterations = iterations;
    return o.time_solve(p, plan, *device, spins, tuning);
  };
  // The shorter run at most one batch of 64 iterations, so that what it
  // costs once is measured near its own length; the longer in whole batches:
  // a GPU without neighbours launches 64 iterations as one graph, captured on
  // its first use, and a shorter last graph would be captured by one run only.
  constexpr double kLongRunSeconds = 0.05;
  constexpr std::int64_t kBatch = 64, kMost = 1024 * kBatch;
  const auto iterations_for = [](double seconds, double pace, std::int64_t least, std::int64_t most) {
    const double n = pace > 0.0 ? seconds / pace : static_cast<double>(least);
    const auto count = static_cast<std::int64_t>(std::clamp(n, static_cast<double>(least), static_cast<double>(most)));
    return count >= kBatch ? count / kBatch * kBatch : count;
  };
  const std::int64_t shorter = iterations_for(kLongRunSeconds / 6.0, sweep_s, 16, kBatch);
  const Clock::time_point begin = Clock::now();
  const double warm_s = run_seconds(shorter);
  const double warm_wall_s = seconds_since(begin);
  const double pace = warm_s / static_cast<double>(shorter);
  const std::int64_t longer = iterations_for(kLongRunSeconds, pace, 6 * shorter, kMost);
  if (!budget.allows(2.0 * warm_wall_s + static_cast<double>(longer - shorter) * pace)) return std::nullopt;
  const double longer_s = run_seconds(longer);
  const double shorter_s = run_seconds(shorter);
  LoopTimes t;
  t.iteration_s = std::max(0.0, (longer_s - shorter_s) / static_cast<double>(longer - shorter));
  t.rest_s = std::max(0.0, shorter_s - static_cast<double>(shorter) * t.iteration_s);
  return t;
}

// A device's loop figures under `key`, from its curve and check curve: its
// step (a loop on 4 rows) and, for a GPU, its overhead and what a solve costs
// once (a loop on `most` rows), as a solve of the device alone runs them.
void device_loops(const Topology& topology, const DeviceSpec& spec, Precision precision, const CalibrationOptions& o,
                  std::int64_t most, const std::string& key, const RateCurve& curve,
                  const std::optional<RateCurve>& check, const VariantChoice& variant, const Budget& budget,
                  Profile& profile, std::vector<std::string>& skipped) {
  const bool gpu = spec.info.kind == DeviceKind::Gpu;
  const std::string what = spec.info.name + " " + to_string(precision) +
                           (variant.variant == Variant::Sync ? "" : " " + to_string(variant.variant)) +
                           (is_poisson5(o.stencil) ? "" : " " + o.stencil.name);
  const auto loop = [&](std::int64_t rows) -> std::optional<LoopTimes> {
    if (!budget.allows(kLoopSeconds)) return std::nullopt;
    return loop_times(topology, spec, precision, o, rows, curve.seconds(rows), variant, budget);
  };
  // What a solve costs once, but its one residual check (the model's).
  const auto fixed = [&](const LoopTimes& t, std::int64_t rows) {
    return std::max(0.0, t.rest_s - (check ? check->seconds(rows) : 0.0));
  };
  DeviceProfile& d = entry_of(profile, spec.info);
  const auto small = loop(4);
  if (!small) {
    skipped.push_back(what + " loop");
    return;
  }
  // A CPU device's loop (its barrier, the hand-over) costs what it costs
  // after any sweep: the part beyond a 4-row sweep. A GPU's host thread
  // queues the next sweep while the last runs: on 4 rows its loop is the
  // whole iteration, a floor; on a full slab what shows beyond the sweep
  // (launch gaps, waits between its streams) is measured there.
  d.step[key] = gpu ? small->iteration_s : std::max(0.0, small->iteration_s - curve.seconds(4));
  if (!gpu) {
    d.fixed[key] = fixed(*small, 4);
    return;
  }
  if (const auto full = loop(most)) {
    // Signed: alone, its loop launches the iterations between checks as
    // one graph, which runs its sweeps closer together than a sweep
    // timed by itself (on an H100, 256^2: 3.1 us an iteration, 7.6 us a sweep).
    d.overhead[key] = full->iteration_s - curve.seconds(most);
    d.fixed[key] = fixed(*full, most);
  } else {
    skipped.push_back(what + " loop on " + std::to_string(most) + " rows");
  }
}

// Set-up and tear-down as a solve makes them: the devices attach a slab and
// detach it at once (allocation, first touch or copy to the GPU, and back), at
// two slab sizes, fitted as latency + bytes / bandwidth. Called for the GPUs
// and the CPU devices apart: in a solve the CPU's slab is a few percent of the
// GPUs', and first-touching one as large as theirs beside their copies
// halves the GPUs' bandwidth (H100 host: 3.9 GB/s against 7.4 GB/s beside a
// CPU slab of a solve's size).
void setup_curves(const Topology& topology, const std::vector<DeviceSpec>& specs, Precision precision, std::int64_t nx,
                  std::int64_t most, Profile& profile) {
  std::vector<std::unique_ptr<Device>> devices;
  for (const auto& spec : specs) devices.push_back(device_for(topology, spec));
  const std::vector<std::int64_t> sizes = {std::max<std::int64_t>(4, most / 8), std::max<std::int64_t>(8, most / 2)};
  std::vector<std::vector<std::pair<double, double>>> in(devices.size()), out(devices.size());
  dispatch(precision, [&](auto zero) {
    using T = decltype(zero);
    StencilJob job;
    job.precision = precision;
    job.nx = nx;
    job.ny = sizes.back();
    std::vector<Slab> slabs;
    for (const auto& d : devices) slabs.push_back({d.get(), RowRange{1, sizes.back()}});
    const std::uint64_t grid_size = grid_bytes(nx, sizes.back(), precision);
    check_memory_for(job, grid_size, slabs);
    Grid<T> grid = allocating("the calibration's grid", grid_size, [&] { return timing_grid<T>(sizes.back(), nx); });
    job.initial = grid.data();
    job.result = nullptr;  // timings only: devices measured at once never write into the grid the others read
    const double row_bytes = static_cast<double>(job.row_bytes());
    for (std::int64_t rows : sizes) {
      for (int rep = 0; rep < 2; ++rep) {
        run_on_threads(devices.size(), [&](std::size_t k) {
          Clock::time_point begin = Clock::now();
          devices[k]->attach(job, RowRange{1, rows});
          in[k].push_back({row_bytes * static_cast<double>(rows + 2), seconds_since(begin)});
          begin = Clock::now();
          devices[k]->detach();
          out[k].push_back({row_bytes * static_cast<double>(rows), seconds_since(begin)});
        });
      }
    }
  });
  for (std::size_t k = 0; k < devices.size(); ++k) {
    DeviceProfile& d = entry_of(profile, specs[k].info);
    d.setup_in = TransferCurve::fit(in[k]);
    d.setup_out = TransferCurve::fit(out[k]);
  }
}

// Other processes crowding the host while it calibrated are in every figure:
// on the 2-core VM the same solve took 10.3-10.8 ms an iteration alone and
// 21-67 ms beside compilers, and a calibration taken beside them predicted
// 18-48 ms (docs/model.md). Said, so that a prediction off by as much is read
// as the host's.
void say_if_crowded(const HostLoad& load) {
  const std::string crowd = load.since_start().describe();
  if (crowd.empty()) return;
  log::warn("calibration: {}; its figures are for that load, and a solve at another moment may take more or less "
            "by as much",
            crowd);
}

}  // namespace

Calibration calibrate(const Topology& topology, const std::vector<DeviceSpec>& devices,
                      const CalibrationOptions& options, Profile profile) {
  CalibrationOptions o = options;  // its tuned teams: sized_cpu_curves (cpu_curves.hpp)
  if (!o.time_solve) HETSTENCIL_THROW(InvalidArgument, "calibration needs a solve timer (CalibrationOptions::time_solve)");
  Budget budget(o.budget_s);
  const HostLoad load;
  Calibration out;
  profile.fingerprint = fingerprint_of(topology);
  const std::int64_t most = o.max_rows > 0 ? o.max_rows : o.nx;
  // Sizes in bounds before anything is sized by them.
  for (Precision precision : o.precisions) grid_bytes(o.nx, most, precision);
  std::vector<const DeviceSpec*> cpus, gpus;
  for (const auto& d : devices) (d.info.kind == DeviceKind::Gpu ? gpus : cpus).push_back(&d);
  if (!is_poisson5(o.stencil)) {
    // The devices' sweeps of the stencil alone: the GPUs' first (quick), each
    // on buffers of its own, then the CPU devices'.
    o.stencil.validate();
    for (Precision precision : o.precisions) grid_bytes(timing_job(o, precision, most).shape(), precision);
    for (Precision precision : o.precisions) {
      const std::string key = stencil_rate_key(problem_of(o, precision));
      for (const DeviceSpec* g : gpus) {
        if (!budget.allows(0.2)) {
          out.skipped.push_back(g->info.name + " " + to_string(precision) + " " + o.stencil.name);
          continue;
        }
        std::vector<RateCurve::Point> points, checks;
        const std::unique_ptr<Device> gpu = device_for(topology, *g);
        StencilJob job = timing_job(o, precision, most);
        job.tuning = tuning_of(o, *gpu, job);
        for (const RateSamples& sample : gpu->measure_sweeps(job, row_counts(most), o.repetitions, true)) {
          points.push_back({sample.rows, robust_time(sample.sweep_s)});
          checks.push_back({sample.rows, robust_time(sample.check_s)});
        }
        DeviceProfile& d = entry_of(profile, g->info);
        d.kind = "gpu";
        d.rates[key] = RateCurve(points);
        d.checks[key] = RateCurve(checks);
      }
    }
    budget.mark("GPU curves of " + o.stencil.name);
    // Alone, a GPU runs a stencil's iterations as graphs, faster than its
    // sweeps timed one by one where the grid is small: its loops, as poisson5's.
    for (Precision precision : o.precisions) {
      const std::string key = stencil_rate_key(problem_of(o, precision));
      for (const DeviceSpec* g : gpus) {
        const DeviceProfile& d = entry_of(profile, g->info);
        const auto curve = d.rates.find(key);
        if (curve == d.rates.end()) continue;
        const auto check = d.checks.find(key);
        device_loops(topology, *g, precision, o, most, key, curve->second,
                     check == d.checks.end() ? std::nullopt : std::optional<RateCurve>(check->second), {}, budget,
                     profile, out.skipped);
      }
    }
    budget.mark("GPU loops of " + o.stencil.name);
    for (Precision precision : o.precisions) {
      sized_cpu_curves(topology, cpus, {}, precision, o, most, budget, profile, out.skipped);
    }
    budget.mark("CPU curves of " + o.stencil.name);
    say_if_crowded(load);
    out.seconds = budget.used();
    out.profile = std::move(profile);
    return out;
  }

  // Links first: they are quick, and the curves use what is left.
  link_curves(topology, devices, row_sizes(static_cast<double>(row_bytes(o.nx, o.precisions.front()))),
              o.repetitions, profile);
  profile.link_conditions = gpus.empty() ? "CPU rows: a hand-over and a pull by the receiving socket, one link at a time"
                                         : "GPU copies timed on the host with every GPU copying at once; CPU rows: a "
                                           "hand-over and a pull by the receiving socket, one link at a time";

  budget.mark("links");

  // GPUs first: their curves are quick and a plan cannot do without them,
  // while a CPU device's largest points are its slowest; the CPU curves leave
  // time for the loops and the set-up after them.
  for (Precision precision : o.precisions) {
    for (const DeviceSpec* g : gpus) {
      for (const VariantChoice& variant : swept(o)) {
        if (!budget.allows(0.5)) {
          out.skipped.push_back(g->info.name + " " + to_string(precision) + " " + to_string(variant.variant));
          continue;
        }
        StencilJob job;
        job.precision = precision;
        job.nx = o.nx;
        job.variant = variant;
        const std::unique_ptr<Device> gpu = device_for(topology, *g);
        job.tuning = tuning_of(o, *gpu, job);
        std::vector<RateCurve::Point> points, checks;
        for (const RateSamples& sample : gpu->measure_sweeps(job, row_counts(most), o.repetitions, true)) {
          points.push_back({sample.rows, robust_time(sample.sweep_s)});
          checks.push_back({sample.rows, robust_time(sample.check_s)});
        }
        DeviceProfile& d = entry_of(profile, g->info);
        d.kind = "gpu";
        d.rates[rate_key(precision, o.nx, variant)] = RateCurve(points);
        d.checks[rate_key(precision, o.nx, variant)] = RateCurve(checks);
      }
    }
    budget.mark("GPU curves");
    const double after_curves = kSetupSeconds + kLoopSeconds * static_cast<double>(devices.size() + gpus.size());
    sized_cpu_curves(topology, cpus, gpus, precision, o, most, budget.leaving(after_curves), profile, out.skipped);
    budget.mark("CPU curves");
  }
  for (Precision precision : o.precisions) {
    for (const auto& spec : devices) {
      // A CPU device sweeps plainly in any variant: one loop figure.
      const bool gpu = spec.info.kind == DeviceKind::Gpu;
      for (const VariantChoice& variant : gpu ? swept(o) : std::vector<VariantChoice>{{}}) {
        const auto curve = profile.rate(device_key(spec.info), precision, o.nx, variant);
        if (!curve) continue;
        device_loops(topology, spec, precision, o, most, rate_key(precision, o.nx, variant), *curve,
                     profile.check(device_key(spec.info), precision, o.nx, variant), variant, budget, profile,
                     out.skipped);
      }
    }
  }
  budget.mark("loops");
  if (budget.allows(kSetupSeconds)) {
    const Precision precision = o.precisions.front();
    for (const auto* group : {&gpus, &cpus}) {
      std::vector<DeviceSpec> specs;
      for (const DeviceSpec* d : *group) specs.push_back(*d);
      // A fit of latency + bytes / bandwidth: CPU slabs need not be large.
      const std::int64_t rows = group == &cpus ? cpu_rows_worth_measuring(cpus, timing_job(o, precision, most), most) : most;
      if (!specs.empty()) setup_curves(topology, specs, precision, o.nx, rows, profile);
    }
    budget.mark("set-up and tear-down");
  } else {
    out.skipped.push_back("set-up and tear-down");
  }
  say_if_crowded(load);
  out.seconds = budget.used();
  out.profile = std::move(profile);
  return out;
}

}  // namespace hetstencil
