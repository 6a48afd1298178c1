#include "model/calibrate.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <optional>

#include <spdlog/fmt/fmt.h>

#include "core/log.hpp"
#include "devices/backend.hpp"
#include "devices/slab_memory.hpp"
#include "devices/sync.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/grid.hpp"
#include "hetstencil/statistics.hpp"
#include "core/robust.hpp"
#include "core/dispatch.hpp"
#include "core/source_term.hpp"
#include "core/timing_grid.hpp"
#include "model/team_size.hpp"
#include "model/tune.hpp"

namespace hetstencil {
namespace {

using Clock = std::chrono::steady_clock;

// The device's entry in the profile: under what it is (device_key), named as in this run.
DeviceProfile& entry_of(Profile& profile, const DeviceInfo& info) {
  DeviceProfile& d = profile.devices[device_key(info)];
  d.name = info.name;
  return d;
}

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The device for `spec`, from its backend, its threads spinning as a device of its size alone would.
std::unique_ptr<Device> device_for(const Topology& topology, const DeviceSpec& spec) {
  return make_device(spec, spin_limit_for(spec.info.threads, topology.hardware_threads()));
}

// The tuned parameters of `device` for `job` that it takes (o.tuned's).
Tuning tuning_of(const CalibrationOptions& o, const Device& device, const StencilJob& job) {
  const std::string& name = device.info().name;
  return usable_tuning(name, device.tunables(job), tuned_values(o.tuned, name, job.stencil, job.precision));
}

// A timing job of `units` units (rows, or planes of o.ny rows) of the stencil.
StencilJob timing_job(const CalibrationOptions& o, Precision precision, std::int64_t units) {
  StencilJob job;
  job.precision = precision;
  job.nx = o.nx;
  job.stencil = o.stencil;
  job.poisson5 = is_poisson5(o.stencil);
  const bool planes = o.stencil.dimension == 3;
  job.ny = planes ? o.ny : units;
  job.nz = planes ? units : 0;
  return job;
}

// The problem whose curves `o` measures (its key: stencil_rate_key).
Problem problem_of(const CalibrationOptions& o, Precision precision) {
  Problem p;
  p.stencil = o.stencil;
  p.precision = precision;
  p.nx = o.nx;
  p.ny = o.stencil.dimension == 3 ? o.ny : o.nx;
  p.nz = o.stencil.dimension == 3 ? 1 : 0;
  return p;
}

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
std::vector<std::int64_t> cache_edges(const std::vector<const DeviceSpec*>& cpus, const StencilJob& job) {
  std::vector<std::int64_t> rows;
  const auto row = static_cast<double>(job.unit_bytes());
  for (const DeviceSpec* c : cpus) {
    if (c->cache_bytes == 0) continue;
    for (std::size_t sharing : {std::size_t{1}, cpus.size()}) {
      const auto edge = static_cast<std::int64_t>(static_cast<double>(c->cache_bytes) /
                                                  (2.0 * row * static_cast<double>(sharing)));
      for (double f : {0.9, 1.1}) rows.push_back(static_cast<std::int64_t>(f * static_cast<double>(edge)));
    }
  }
  return rows;
}

// Beyond a few times the rows its cache holds a CPU device streams its slabs
// from memory and its time grows in proportion to its rows: the curve's last
// segment carries on. Measuring further (a 16384^2 float grid: 2 GiB of
// slabs to set up, 25 ms sweeps) would take most of a calibration's budget.
std::int64_t cpu_rows_worth_measuring(const std::vector<const DeviceSpec*>& cpus, const StencilJob& job,
                                      std::int64_t most) {
  const auto row = static_cast<double>(job.unit_bytes());
  std::int64_t enough = 0;
  for (const DeviceSpec* c : cpus) {
    if (c->cache_bytes == 0) return most;  // no cache known: no bound
    enough = std::max(enough, static_cast<std::int64_t>(4.0 * static_cast<double>(c->cache_bytes) / (2.0 * row)));
  }
  return std::min(most, std::max<std::int64_t>(enough, 64));
}

// One row and a few more, to separate latency from bandwidth.
std::vector<double> row_sizes(double row_bytes) { return {row_bytes, 4 * row_bytes, 16 * row_bytes, 64 * row_bytes}; }

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
  /// Logs (with -v) where the time goes: `what` took the time since the last mark.
  void mark(const std::string& what) {
    const double now = used();
    log::debug("calibration: {} took {:.2f} s, {:.2f} s in all", what, now - marked_, now);
    marked_ = now;
  }
  /// The same budget less `reserve` seconds kept for what comes after.
  Budget leaving(double reserve) const {
    Budget b = *this;
    b.seconds_ -= reserve;
    return b;
  }

 private:
  Clock::time_point start_;
  double seconds_;
  double marked_ = 0.0;
};

// What a device's loop and the set-up take on the H100 host (see -v): kept
// free when the CPU curves are measured.
constexpr double kLoopSeconds = 0.2;
constexpr double kSetupSeconds = 1.0;
constexpr double kCpuPointSeconds = 0.02;
constexpr int kCpuPasses = 4;
constexpr int kRestRepetitions = 2;  // a pass, at each point, for each device's rest curve
constexpr int kMostCpuRepetitions = 101;
constexpr double kSettlingSeconds = 0.01;
constexpr int kLeastSettlingSweeps = 2;
constexpr int kMostSettlingSweeps = 20;

// The grid (and a variable stencil's coefficient grids: its curves carry their
// bytes) that CPU devices sweep in timings, set in `job`. Nothing is written
// back: devices measured at once never write into the grid the others read.
template <class T>
struct TimingInputs {
  Grid<T> grid;
  CoefficientTerms<T> coefficients;
};

template <class T>
TimingInputs<T> timing_inputs(StencilJob& job, const std::vector<Slab>& slabs) {
  const std::uint64_t grid_size = grid_bytes(job.shape(), job.precision);
  check_memory_for(job, grid_size, slabs);
  TimingInputs<T> in;
  in.grid = allocating("the calibration's grid", grid_size, [&] { return timing_grid<T>(job.shape()); });
  in.coefficients = allocating("the calibration's coefficient grids", grid_size * (job.stencil.points.size() + 1),
                               [&] { return timing_coefficients<T>(job.stencil, job.shape()); });
  job.initial = in.grid.data();
  job.result = nullptr;
  job.coefficients = in.coefficients.values.empty() ? nullptr : in.coefficients.values.data();
  return in;
}

// A CPU device's first sweeps of a row count after sweeping another run slow:
// on the 2-core VM 2048 rows of 2048 doubles took 2.39, 2.23, 1.79, 1.59 ms
// after the 1024-row point, and 1.31-1.39 ms an iteration in solves (and 1024
// rows 1.28, 0.90 ms before 0.57-0.62 ms). A curve of the first few sweeps of
// every point (its last points: 2 to 4 a pass) priced 2048 rows at 2.3 ms.
// The first sweeps of each run, 10 ms' worth and at least 2, are dropped.
int settling_sweeps(double estimate) {
  if (!(estimate > 0.0)) return kLeastSettlingSweeps;
  return std::clamp(static_cast<int>(std::ceil(kSettlingSeconds / estimate)), kLeastSettlingSweeps,
                    kMostSettlingSweeps);
}

// `samples` without its first `settling`.
void append_settled(std::vector<double>& to, const std::vector<double>& samples, int settling) {
  const auto from = std::min(samples.size(), static_cast<std::size_t>(settling));
  to.insert(to.end(), samples.begin() + static_cast<std::ptrdiff_t>(from), samples.end());
}

// The GPUs sweeping in the background as in a solve, their host threads
// waiting as they would, while this lives (Device::start_load).
struct GpusSweeping {
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<std::unique_ptr<DeviceLoad>> loads;  // stopped before their devices go
};

GpusSweeping gpus_sweeping(const Topology& topology, const std::vector<const DeviceSpec*>& gpus) {
  GpusSweeping out;
  for (const DeviceSpec* g : gpus) {
    out.devices.push_back(device_for(topology, *g));
    if (auto load = out.devices.back()->start_load()) out.loads.push_back(std::move(load));
  }
  return out;
}

// Every CPU device sweeps at once, point by point, as in a solve: each sweep
// starts on all of them together, so that devices that share a memory
// controller and a cache are measured sharing them; and beside every GPU
// sweeping, its host thread waiting as a GPU device's does: on the H100 host
// the CPU device sweeps 500 / 1000 / 2000 rows of 16384 floats in 0.37 / 0.98 /
// 2.08 ms alone and 1.13 / 2.09 / 2.08 ms beside the GPU (bench cpu
// --beside-gpus); in solves beside it, either, from one run to the next.
// Every point's samples are taken in four passes over the points, so that a
// spell of a slower machine (a neighbour on a shared host) moves every point
// a little and none a lot: taken at once, on a 2-core VM, one point of a curve
// can move by half between calibrations while its neighbours do not (2048
// rows of 2048 doubles: 5.3 and 11.0 ms in two calibrations a minute apart,
// its samples taken at once).
struct CpuCurves {
  std::int64_t rows = 0;  // the most rows measured for
  std::size_t points = 0;  // the points measured (0: no curve is written)
};

CpuCurves cpu_curves(const Topology& topology, const std::vector<const DeviceSpec*>& cpus,
                     const std::vector<const DeviceSpec*>& gpus, Precision precision, const CalibrationOptions& o,
                     std::int64_t most, const Budget& budget, Profile& profile, std::vector<std::string>& skipped) {
  if (cpus.empty()) return {};
  profile.canary_bytes_per_s = host_canary_bytes_per_s();
  most = cpu_rows_worth_measuring(cpus, timing_job(o, precision, most), most);
  const GpusSweeping beside = gpus_sweeping(topology, gpus);
  std::vector<std::unique_ptr<Device>> devices;
  for (const DeviceSpec* c : cpus) devices.push_back(device_for(topology, *c));
  const std::vector<std::int64_t> rows = row_counts(most, cache_edges(cpus, timing_job(o, precision, most)));
  // [device][point]: every sample of a point, from all passes.
  using Samples = std::vector<std::vector<std::vector<double>>>;
  Samples sweeps(cpus.size(), std::vector<std::vector<double>>(rows.size()));
  Samples checks = sweeps;
  // Devices on one memory node share its bandwidth and cache: at an unequal
  // split one sweeps a few rows while the others stream the rest through the
  // cache. Each point is also measured that way, as each device's rest curve:
  // one device sweeps the point's rows, the others the rest of `most` rows
  // between them (none at the last point: it sweeps alone), in the passes
  // after the first (which gives every point's time, to budget by).
  const bool one_memory = std::all_of(cpus.begin(), cpus.end(), [&](const DeviceSpec* c) {
    return c->info.numa_node == cpus.front()->info.numa_node;
  });
  const bool rests = devices.size() > 1 && one_memory;
  std::vector<std::map<std::int64_t, std::vector<double>>> rest(devices.size());  // [device][rows]
  const auto others_rows = [&](std::int64_t r) { return (most - r) / static_cast<std::int64_t>(devices.size() - 1); };
  std::size_t measured = 0;  // points that pass 0 reached: later passes repeat those
  std::atomic<bool> abort{false};
  Barrier together(static_cast<int>(devices.size()), spin_limit_for(static_cast<int>(devices.size()),
                                                                     topology.hardware_threads()));
  const auto start_together = [&] { together.wait(abort); };
  // A point's time so far: the slowest device's median (0 before any sample).
  const auto seconds_at = [&](std::size_t i) {
    double s = 0.0;
    for (const auto& d : sweeps) s = d[i].empty() ? s : std::max(s, median(d[i]));
    return s;
  };
  dispatch(precision, [&](auto zero) {
    using T = decltype(zero);
    StencilJob job = timing_job(o, precision, most);
    std::vector<Slab> slabs;
    for (const auto& d : devices) slabs.push_back({d.get(), RowRange{1, most}});
    const TimingInputs<T> inputs = timing_inputs<T>(job, slabs);
    // Each device's own job: its own tuned parameters.
    std::vector<StencilJob> jobs(devices.size(), job);
    for (std::size_t k = 0; k < devices.size(); ++k) {
      jobs[k].tuning = tuning_of(o, *devices[k], jobs[k]);
      devices[k]->attach(jobs[k], RowRange{1, most});
    }
    log::debug("calibration: CPU slabs of {} rows ready at {:.2f} s", most, budget.used());
    for (int pass = 0; pass < kCpuPasses; ++pass) {
      const std::size_t points = pass == 0 ? rows.size() : measured;
      for (std::size_t i = 0; i < points; ++i) {
        // Pass 0 estimates a point from the one before it, scaled by rows.
        const double estimate = pass > 0 ? seconds_at(i)
                                : i > 0 ? seconds_at(i - 1) * static_cast<double>(rows[i]) / static_cast<double>(rows[i - 1])
                                        : 0.0;
        // Short sweeps are repeated for 20 ms at least, spread over the passes.
        const int passes = kCpuPasses;
        const int least = (o.repetitions + passes - 1) / passes;
        const int reps = estimate > 0.0 ? std::clamp(static_cast<int>(kCpuPointSeconds / (passes * estimate)), least,
                                                     kMostCpuRepetitions / passes)
                                        : least;
        // A check's cost, rarely paid, is measured once; pass 0 leaves room for the passes after it.
        const bool with_checks = pass == 0;
        const double runs = static_cast<double>(with_checks ? passes + 1 : 1);
        const int settling = settling_sweeps(estimate);
        if (!budget.allows(estimate * (reps + settling + 1) * runs)) {
          if (pass == 0) {
            skipped.push_back("CPU devices, " + to_string(precision) + ", from " + std::to_string(rows[i]) + " rows");
          }
          break;
        }
        run_on_threads(
            devices.size(),
            [&](std::size_t k) {
              const RateSamples got =
                  devices[k]->measure_sweeps(jobs[k], {rows[i]}, reps + settling, with_checks, start_together).front();
              append_settled(sweeps[k][i], got.sweep_s, settling);
              append_settled(checks[k][i], got.check_s, settling);
            },
            [&] { abort = true; });
        // Each device in turn takes the point's rows, the others the rest:
        // settled by the longer of the two sweeps.
        const double others_s = rests && measured > 0 ? seconds_at(measured - 1) *
                                                            static_cast<double>(others_rows(rows[i])) /
                                                            static_cast<double>(rows[measured - 1])
                                                      : 0.0;
        const int rest_settling = settling_sweeps(std::max(estimate, others_s));
        if (rests && pass > 0 &&
            budget.allows(static_cast<double>(devices.size() * (kRestRepetitions + rest_settling + 1)) *
                          seconds_at(measured - 1))) {
          for (std::size_t j = 0; j < devices.size(); ++j) {
            run_on_threads(
                devices.size(),
                [&](std::size_t k) {
                  const std::int64_t r = k == j ? rows[i] : others_rows(rows[i]);
                  const RateSamples got =
                      devices[k]->measure_sweeps(jobs[k], {r}, kRestRepetitions + rest_settling, false, start_together)
                          .front();
                  if (r >= 1) append_settled(rest[k][r], got.sweep_s, rest_settling);
                },
                [&] { abort = true; });
          }
        }
        if (pass == 0) measured = i + 1;
      }
      log::debug("calibration: CPU pass {} done at {:.2f} s", pass, budget.used());
    }
    for (auto& d : devices) d->detach();
  });
  for (std::size_t k = 0; k < cpus.size(); ++k) {
    if (measured == 0) continue;
    std::vector<RateCurve::Point> points, check_points, rest_points;
    for (std::size_t i = 0; i < measured; ++i) {
      points.push_back({rows[i], robust_time(sweeps[k][i])});
      check_points.push_back({rows[i], robust_time(checks[k][i])});
    }
    DeviceProfile& d = entry_of(profile, cpus[k]->info);
    d.kind = "cpu";
    const std::string key = stencil_rate_key(problem_of(o, precision));
    d.rates[key] = RateCurve(points);
    d.checks[key] = RateCurve(check_points);
    for (const auto& [r, samples] : rest[k]) rest_points.push_back({r, robust_time(samples)});
    if (!rest_points.empty()) {
      d.rest[key] = RateCurve(rest_points);
      d.rest_rows[key] = most;
    } else {
      // A rest curve of the key belongs to rates it does not go with now.
      d.rest.erase(key);
      d.rest_rows.erase(key);
    }
  }
  return {most, measured};
}

// Each CPU device's teams timed (team_size.hpp) beside the GPUs sweeping, as
// in a solve, one device at a time, and a faster one kept as its "threads" in
// o.tuned and in the profile's tuned parameters, beside the values it had
// (their figures are the trials' where it had none). Returns whether any
// device sweeps with another team than before.
bool size_teams(const Topology& topology, const std::vector<const DeviceSpec*>& cpus,
                const std::vector<const DeviceSpec*>& gpus, Precision precision, CalibrationOptions& o,
                std::int64_t most, Profile& profile) {
  bool resized = false;
  const std::string key = tuning_key(o.stencil, precision);
  const GpusSweeping beside = gpus_sweeping(topology, gpus);
  dispatch(precision, [&](auto zero) {
    using T = decltype(zero);
    StencilJob job = timing_job(o, precision, most);
    std::vector<std::unique_ptr<Device>> devices;
    std::vector<Slab> slabs;
    for (const DeviceSpec* c : cpus) {
      devices.push_back(device_for(topology, *c));
      slabs.push_back({devices.back().get(), RowRange{1, most}});
    }
    const TimingInputs<T> inputs = timing_inputs<T>(job, slabs);
    const std::vector<std::int64_t> units = team_trial_units(most);
    std::string slab;
    for (std::size_t k = 0; k < units.size(); ++k) {
      slab += fmt::format("{}{}", k == 0 ? "" : k + 1 == units.size() ? " and " : ", ", units[k]);
    }
    slab += o.stencil.dimension == 3 ? fmt::format(" planes of {}x{}", o.ny, o.nx) : fmt::format(" rows of {}", o.nx);
    for (std::size_t k = 0; k < cpus.size(); ++k) {
      const std::string& name = cpus[k]->info.name;
      job.tuning = tuning_of(o, *devices[k], job);
      const std::vector<TeamTrial> trials = time_teams(*devices[k], job, most);
      if (trials.empty()) continue;
      const std::size_t chosen = fastest_team(trials);
      // Said either way: the trials run only where the hypervisor took cores.
      log::warn("calibration: {}{}", team_choice_text(name, slab, trials, chosen),
                chosen == 0 ? "" : " (its tuned threads in the profile, which solves use)");
      if (chosen == 0) continue;
      resized = true;
      TunedParameters kept = o.tuned.devices[name].tuned[key];
      Tuning values = job.tuning;
      values["threads"] = trials[chosen].workers;
      kept.values = not_defaults(devices[k]->tunables(job), values);
      // The figures of a tuner's other values stay theirs; else the trials':
      // a sweep of the whole slab at their rate a row, all workers' as the
      // defaults' (every trial list has them).
      const int all = threads_of(*devices[k], job)->default_value;
      if (kept.values.size() == kept.values.count("threads")) {
        const auto defaults = std::find_if(trials.begin(), trials.end(), [&](const TeamTrial& t) { return t.workers == all; });
        kept.default_s = defaults->row_s * static_cast<double>(most);
        kept.tuned_s = trials[chosen].row_s * static_cast<double>(most);
        kept.grid = o.stencil.dimension == 3 ? grid_text(o.nx, o.ny, most) : grid_text(o.nx, most, 0);
      }
      o.tuned.devices[name].tuned[key] = kept;
      entry_of(profile, cpus[k]->info).tuned[key] = kept;
    }
  });
  return resized;
}

// The CPU curves; where the hypervisor took cores from the workers meanwhile,
// the devices' teams sized (size_teams) and the curves measured again with
// the teams kept, where the budget has room for both.
void sized_cpu_curves(const Topology& topology, const std::vector<const DeviceSpec*>& cpus,
                      const std::vector<const DeviceSpec*>& gpus, Precision precision, CalibrationOptions& o,
                      std::int64_t most, const Budget& budget, Profile& profile, std::vector<std::string>& skipped) {
  if (cpus.empty()) return;
  const HostLoad load;
  const Clock::time_point begin = Clock::now();
  const CpuCurves measured = cpu_curves(topology, cpus, gpus, precision, o, most, budget, profile, skipped);
  const double curves_s = since(begin);
  const HostLoad::Figures seen = load.since_start();
  if (!(seen.stolen > HostLoad::kCrowdingCores)) return;
  if (!budget.allows(static_cast<double>(cpus.size()) * kTeamTrialsSeconds + curves_s)) {
    skipped.push_back("CPU devices' team sizes, " + to_string(precision) + " (" + seen.describe() + ")");
    return;
  }
  log::info("calibration: while the CPU devices swept, {}; timing other teams", seen.describe());
  const Profile tuned_before = o.tuned;
  const Profile profile_before = profile;
  if (!size_teams(topology, cpus, gpus, precision, o, measured.rows, profile)) return;
  if (cpu_curves(topology, cpus, gpus, precision, o, most, budget, profile, skipped).points == 0) {
    // No curve of the teams kept: the teams measured stay, with their curves.
    o.tuned = tuned_before;
    profile = profile_before;
    skipped.push_back("CPU devices' curves with the teams timed, " + to_string(precision));
  }
}

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
// different lengths (the longer about 50 ms, and 100 to 600 iterations), an
// iteration from their difference, so that what a run costs once (threads,
// the final residual) drops out, and that from the shorter run. Nothing when,
// after a first run (its set-up too: a GPU's full slab is copied in and out),
// the two would not fit in `budget`. The device sweeps with its tuned
// parameters in o.tuned.
std::optional<LoopTimes> loop_times(const Topology& topology, const DeviceSpec& spec, Precision precision,
                                    const CalibrationOptions& o, std::int64_t rows, double sweep_s,
                                    const VariantChoice& variant, const Budget& budget) {
  const std::unique_ptr<Device> device = device_for(topology, spec);
  const int spins = spin_limit_for(spec.info.threads, topology.hardware_threads());
  Problem p;
  p.nx = o.nx;
  p.ny = rows;
  p.precision = precision;
  const Plan plan({{0, 1, rows}}, variant);
  const Tuning tuning = tuned_values(o.tuned, spec.info.name, p.stencil, precision);
  const auto run_seconds = [&](std::int64_t iterations) {
    p.stop.max_iterations = iterations;
    return o.time_solve(p, plan, *device, spins, tuning);
  };
  constexpr double kLongRunSeconds = 0.05;
  const std::int64_t longer =
      sweep_s > 0.0 ? std::clamp<std::int64_t>(static_cast<std::int64_t>(kLongRunSeconds / sweep_s), 100, 600) : 600;
  const std::int64_t shorter = longer / 6;
  const Clock::time_point begin = Clock::now();
  run_seconds(shorter);  // warm-up
  if (!budget.allows(2.0 * since(begin) + static_cast<double>(longer) * sweep_s)) return std::nullopt;
  const double longer_s = run_seconds(longer);
  const double shorter_s = run_seconds(shorter);
  LoopTimes t;
  t.iteration_s = std::max(0.0, (longer_s - shorter_s) / static_cast<double>(longer - shorter));
  t.rest_s = std::max(0.0, shorter_s - static_cast<double>(shorter) * t.iteration_s);
  return t;
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
          in[k].push_back({row_bytes * static_cast<double>(rows + 2), since(begin)});
          begin = Clock::now();
          devices[k]->detach();
          out[k].push_back({row_bytes * static_cast<double>(rows), since(begin)});
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
  CalibrationOptions o = options;  // its tuned teams: size_teams
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
        auto curve = profile.rate(device_key(spec.info), precision, o.nx, variant);
        if (!curve) continue;
        const std::string what = spec.info.name + " " + to_string(precision) +
                                 (variant.variant == Variant::Sync ? "" : " " + to_string(variant.variant));
        const auto loop = [&](std::int64_t rows) -> std::optional<LoopTimes> {
          if (!budget.allows(kLoopSeconds)) return std::nullopt;
          return loop_times(topology, spec, precision, o, rows, curve->seconds(rows), variant, budget);
        };
        const auto check = profile.check(device_key(spec.info), precision, o.nx, variant);
        // What a solve costs once, but its one residual check (the model's).
        const auto fixed = [&](const LoopTimes& t, std::int64_t rows) {
          return std::max(0.0, t.rest_s - (check ? check->seconds(rows) : 0.0));
        };
        DeviceProfile& d = entry_of(profile, spec.info);
        const std::string key = rate_key(precision, o.nx, variant);
        const auto small = loop(4);
        if (!small) {
          out.skipped.push_back(what + " loop");
          continue;
        }
        // A CPU device's loop (its barrier, the hand-over) costs what it costs
        // after any sweep: the part beyond a 4-row sweep. A GPU's host thread
        // queues the next sweep while the last runs: on 4 rows its loop is the
        // whole iteration, a floor; on a full slab what shows beyond the sweep
        // (launch gaps, waits between its streams) is measured there.
        d.step[key] = gpu ? small->iteration_s : std::max(0.0, small->iteration_s - curve->seconds(4));
        if (!gpu) {
          d.fixed[key] = fixed(*small, 4);
          continue;
        }
        if (const auto full = loop(most)) {
          // Signed: alone, its loop launches the iterations between checks as
          // one graph, which runs its sweeps closer together than a sweep
          // timed by itself (on an H100, 256^2: 3.1 us an iteration, 7.6 us a sweep).
          d.overhead[key] = full->iteration_s - curve->seconds(most);
          d.fixed[key] = fixed(*full, most);
        } else {
          out.skipped.push_back(what + " loop on " + std::to_string(most) + " rows");
        }
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
