#include "model/cpu_curves.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>

#include <spdlog/fmt/fmt.h>

#include "core/dispatch.hpp"
#include "core/robust.hpp"
#include "core/source_term.hpp"
#include "core/timing_grid.hpp"
#include "devices/slab_memory.hpp"
#include "devices/sync.hpp"
#include "hetstencil/grid.hpp"
#include "hetstencil/statistics.hpp"
#include "model/team_size.hpp"
#include "model/tune.hpp"

namespace hetstencil {
namespace {

// A point's sweeps: about 20 ms' worth (at most 101) over four passes
// (cpu_curves), after each run's settling sweeps (settling_sweeps).
constexpr double kCpuPointSeconds = 0.02;
constexpr int kCpuPasses = 4;
constexpr int kRestRepetitions = 2;  // a pass, at each point, for each device's rest curve
constexpr int kMostCpuRepetitions = 101;
constexpr double kSettlingSeconds = 0.01;
constexpr double kRestSettlingSeconds = 0.04;  // where the devices sweep unequal rows: settling_sweeps
constexpr int kLeastSettlingSweeps = 2;
constexpr int kMostSettlingSweeps = 20;
constexpr int kEdgePoints = 3;  // points added where the time a row steps up (edge_point)

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
// The first sweeps of each run, `seconds`' worth and at least 2, are dropped:
// 10 ms where every device sweeps the point's rows; 40 ms where one sweeps the
// point's rows and the others the rest (the rest curves), an unequal share of
// the cache the devices share, which settles more slowly. On the 2-core VM
// (two CPU devices, 2048 doubles a row) solves of 1638 rows beside 410 swept
// at 2.9-3.1 ms an iteration over 16 iterations, 2.5-2.9 over 64 and 2.6-2.7
// over 500; settled for 10 ms, three calibrations' rest curves priced them at
// 3.3-4.4 ms and the sweeps' points of 20% of the rows 7-47% slow, settled for
// 40 ms within 3.6%.
int settling_sweeps(double estimate, double seconds = kSettlingSeconds) {
  if (!(estimate > 0.0)) return kLeastSettlingSweeps;
  return std::clamp(static_cast<int>(std::ceil(seconds / estimate)), kLeastSettlingSweeps, kMostSettlingSweeps);
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
// the CPU device sweeps 500 / 1000 / 2000 rows of 16384 floats in 0.311 /
// 0.709 / 2.531 ms alone and 6%, 1% and 7% slower beside the GPU (bench cpu
// --beside-gpus, median of 21): a curve measured alone would price its
// shares beside GPUs short.
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
  std::vector<std::int64_t> rows = row_counts(most, cache_edges(cpus, timing_job(o, precision, most)));
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
  // The points added where the time a row steps up, each with the rows of
  // the point below the step it split (no_faster_than_below).
  std::map<std::int64_t, std::int64_t> below;
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
    // Point i's sweeps of one pass; false where the budget has no room for them.
    const auto measure_point = [&](std::size_t i, int pass) {
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
      if (!budget.allows(estimate * (reps + settling + 1) * runs)) return false;
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
      const int rest_settling = settling_sweeps(std::max(estimate, others_s), kRestSettlingSeconds);
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
      return true;
    };
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!measure_point(i, 0)) {
        skipped.push_back("CPU devices, " + to_string(precision) + ", from " + std::to_string(rows[i]) + " rows");
        break;
      }
      measured = i + 1;
    }
    // Where the time a row steps up between two points (a cache's edge, which
    // a guest's neighbours move from the size the cache has), points halving
    // the step: on an H200 guest 1024 and 2048 rows of 8192 doubles took 1.00
    // and 1.22 us a row, and shares of 1229 and 1638 rows in solves 0.95-1.0,
    // which the interpolation priced 7-23% slower. Only after a whole first
    // pass: the passes after it need the budget left for the points it has.
    for (int added = 0; measured == rows.size() && added < kEdgePoints; ++added) {
      std::vector<double> times(measured);
      for (std::size_t i = 0; i < measured; ++i) times[i] = seconds_at(i);
      const std::int64_t r = edge_point({rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(measured)}, times);
      if (r == 0) break;
      const auto at = static_cast<std::size_t>(std::lower_bound(rows.begin(), rows.end(), r) - rows.begin());
      below[r] = rows[at - 1];
      rows.insert(rows.begin() + static_cast<std::ptrdiff_t>(at), r);
      for (std::size_t k = 0; k < devices.size(); ++k) {
        sweeps[k].emplace(sweeps[k].begin() + static_cast<std::ptrdiff_t>(at));
        checks[k].emplace(checks[k].begin() + static_cast<std::ptrdiff_t>(at));
      }
      ++measured;
      if (!measure_point(at, 0)) {
        log::debug("calibration: no time left for a CPU point at {} rows, where the time a row steps up", r);
        rows.erase(rows.begin() + static_cast<std::ptrdiff_t>(at));
        below.erase(r);
        for (std::size_t k = 0; k < devices.size(); ++k) {
          sweeps[k].erase(sweeps[k].begin() + static_cast<std::ptrdiff_t>(at));
          checks[k].erase(checks[k].begin() + static_cast<std::ptrdiff_t>(at));
        }
        --measured;
        break;
      }
      log::debug("calibration: a CPU point at {} rows, where the time a row steps up", r);
    }
    log::debug("calibration: CPU pass 0 done at {:.2f} s", budget.used());
    for (int pass = 1; pass < kCpuPasses; ++pass) {
      for (std::size_t i = 0; i < measured; ++i) {
        if (!measure_point(i, pass)) break;
      }
      log::debug("calibration: CPU pass {} done at {:.2f} s", pass, budget.used());
    }
    for (auto& d : devices) d->detach();
  });
  for (std::size_t k = 0; k < cpus.size(); ++k) {
    if (measured == 0) continue;
    std::vector<RateCurve::Point> points, check_points, rest_points;
    std::vector<double> sweep_s, check_s;
    for (std::size_t i = 0; i < measured; ++i) {
      sweep_s.push_back(robust_time(sweeps[k][i]));
      check_s.push_back(robust_time(checks[k][i]));
    }
    const std::vector<std::int64_t> measured_rows(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(measured));
    sweep_s = no_faster_than_below(measured_rows, sweep_s, below);
    check_s = no_faster_than_below(measured_rows, check_s, below);
    for (std::size_t i = 0; i < measured; ++i) {
      points.push_back({rows[i], sweep_s[i]});
      check_points.push_back({rows[i], check_s[i]});
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

}  // namespace

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

// The CPU curves; where the hypervisor took cores from the workers meanwhile,
// the devices' teams sized (size_teams) and the curves measured again with
// the teams kept, where the budget has room for both.
void sized_cpu_curves(const Topology& topology, const std::vector<const DeviceSpec*>& cpus,
                      const std::vector<const DeviceSpec*>& gpus, Precision precision, CalibrationOptions& o,
                      std::int64_t most, const Budget& budget, Profile& profile, std::vector<std::string>& skipped) {
  if (cpus.empty()) return;
  const HostLoad load;
  const std::chrono::steady_clock::time_point begin = std::chrono::steady_clock::now();
  const CpuCurves measured = cpu_curves(topology, cpus, gpus, precision, o, most, budget, profile, skipped);
  const double curves_s = seconds_since(begin);
  const HostLoad::Figures seen = load.since_start();
  if (!(seen.stolen > HostLoad::kCrowdingCores)) return;
  // The trials, then the curves again with the teams kept.
  const double needed = static_cast<double>(cpus.size()) * kTeamTrialsSeconds + curves_s;
  if (!budget.allows(needed)) {
    skipped.push_back(fmt::format("CPU devices' team sizes, {} ({}; the trials and the curves again need {:.0f} s more)",
                                  to_string(precision), seen.describe(), std::ceil(needed - budget.left())));
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

}  // namespace hetstencil
