#include "runtime/executor.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/log.hpp"
#include "devices/memory.hpp"
#include "devices/slab_memory.hpp"
#include "devices/sync.hpp"
#include "devices/transport/transport.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/reference.hpp"
#include "core/dispatch.hpp"
#include "core/source_term.hpp"
#include "model/tune.hpp"
#include "runtime/processes.hpp"

namespace hetstencil {
namespace {

using Clock = std::chrono::steady_clock;

// Calls the watcher every few tenths of a second from a thread of its own while
// the devices iterate; it reads the transport's counters and never makes a
// device wait. Stops (without a last call) when destroyed.
class ProgressMonitor {
 public:
  ProgressMonitor(const ProgressWatch& watch, Transport& transport) {
    if (!watch.callback) return;
    thread_ = start_thread("the progress thread", [this, watch, &transport] {
      const Clock::time_point start = Clock::now();
      const auto every = std::chrono::duration<double>(std::max(watch.every_s, 0.01));
      std::unique_lock<std::mutex> lock(mutex_);
      while (!wake_.wait_for(lock, every, [this] { return done_; })) {
        Progress p = transport.progress();
        p.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
        lock.unlock();
        try {
          watch.callback(p);
        } catch (const std::exception& e) {
          log::warn("the progress callback failed: {}; no more progress is reported", e.what());
          return;
        }
        lock.lock();
      }
    });
  }
  ProgressMonitor(const ProgressMonitor&) = delete;
  ProgressMonitor& operator=(const ProgressMonitor&) = delete;
  ~ProgressMonitor() {
    if (!thread_.joinable()) return;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

// The host's grids: the iterate, and s*f where the source is a grid.
std::uint64_t host_grid_bytes(const Problem& problem) {
  const std::uint64_t grids = problem.source.kind != Source::Kind::Spike ? 2 : 1;
  return grids * grid_bytes(problem.shape(), problem.precision);
}

// The job without its grids: what the devices' slabs are sized by.
StencilJob job_of(const Problem& problem, const Plan& plan) {
  StencilJob job;
  job.precision = problem.precision;
  job.nx = problem.nx;
  job.ny = problem.ny;
  job.nz = problem.dimension() == 3 ? problem.nz : 0;
  job.stencil = problem.stencil;
  job.poisson5 = is_poisson5(problem.stencil);
  job.grid_source = problem.source.kind != Source::Kind::Spike;
  job.stop = problem.stop;
  job.variant = plan.variant;
  return job;
}

// Each process's rows: the plan gives each a block of consecutive rows, in
// rank order. Throws InvalidArgument otherwise.
std::vector<RowRange> rows_of_ranks(const Plan& plan, const Spread& spread) {
  const int size = spread.processes->size();
  std::vector<RowRange> ranks(static_cast<std::size_t>(size), RowRange{1, 0});
  int previous = 0;
  for (const auto& part : plan.parts) {
    const int r = spread.owner[part.device];
    if (r < previous) {
      HETSTENCIL_THROW(InvalidArgument, "the plan gives rank " + std::to_string(r) + " rows below rank " +
                                            std::to_string(previous) + "'s: each process's devices take consecutive "
                                            "rows, in rank order");
    }
    RowRange& block = ranks[static_cast<std::size_t>(r)];
    if (block.count == 0) block.first = part.first_row;
    block.count += part.rows;
    previous = r;
  }
  for (int r = 0; r < size; ++r) {
    if (ranks[static_cast<std::size_t>(r)].count == 0) {
      HETSTENCIL_THROW(InvalidArgument, "the plan gives no rows to rank " + std::to_string(r) +
                                            ": every process of a solve takes part in it");
    }
  }
  return ranks;
}

// Every process's report rows and phases, gathered: the devices in row order,
// each phase the slowest process's.
void gather_reports(Processes& processes, Report& report) {
  nlohmann::json mine = {{"setup_s", report.setup_s}, {"solve_s", report.solve_s},
                         {"teardown_s", report.teardown_s}, {"devices", nlohmann::json::array()}};
  for (const DeviceReport& d : report.devices) {
    mine["devices"].push_back({d.name, d.first_row, d.rows, d.compute_s, d.exchange_s, d.check_s, d.total_s,
                               d.compute_p90_s, d.tuning});
  }
  report.devices.clear();
  for (const std::string& text : processes.all_gather(mine.dump())) {
    const nlohmann::json theirs = nlohmann::json::parse(text);
    report.setup_s = std::max(report.setup_s, theirs.at("setup_s").get<double>());
    report.solve_s = std::max(report.solve_s, theirs.at("solve_s").get<double>());
    report.teardown_s = std::max(report.teardown_s, theirs.at("teardown_s").get<double>());
    for (const auto& d : theirs.at("devices")) {
      report.devices.push_back(DeviceReport{d[0].get<std::string>(), d[1].get<std::int64_t>(), d[2].get<std::int64_t>(),
                                            d[3].get<double>(), d[4].get<double>(), d[5].get<double>(),
                                            d[6].get<double>(), d[7].get<double>(),
                                            d.at(8).get<std::map<std::string, int>>()});
    }
  }
}

template <class T>
Result execute_typed(const Problem& problem, const Plan& plan, const std::vector<Device*>& all, int spins,
                     const ProgressWatch& watch, const Spread* spread, const TuningOf& tuning) {
  const std::uint64_t grid_size = grid_bytes(problem.shape(), problem.precision);
  const SourceTerm<T> source =
      allocating("the host's right-hand side", grid_size, [&] { return make_source_term<T>(problem); });
  // One grid holds the initial iterate for attach() and receives the solution
  // in detach(); the devices hold their own slabs in between.
  Grid<T> grid = allocating("the host's grid", grid_size, [&] { return initial_grid<T>(problem); });
  const CoefficientTerms<T> coefficients = allocating(
      "the host's coefficient grids", problem.stencil.variable ? grid_size * (problem.stencil.points.size() + 1) : 0,
      [&] { return make_coefficient_terms<T>(problem); });
  StencilJob job = job_of(problem, plan);
  job.initial = grid.data();
  job.result = grid.data();
  job.h2f = source.h2f.empty() ? nullptr : source.h2f.data();
  job.coefficients = coefficients.values.empty() ? nullptr : coefficients.values.data();
  job.spike_row = source.spike_row;
  job.spike_col = source.spike_col;
  job.spike_index = source.spike_index;

  // This process's parts (all of them without a spread).
  std::vector<Device*> devices;
  std::vector<RowRange> rows;
  std::vector<std::string> names;
  for (const auto& part : plan.parts) {
    if (!all[part.device]) continue;
    devices.push_back(all[part.device]);
    rows.push_back(RowRange{part.first_row, part.rows});
    names.push_back(spread ? spread->names[part.device] : all[part.device]->info().name);
  }
  std::optional<ProcessLinks> links;
  if (spread) {
    const int rank = spread->processes->rank();
    links = ProcessLinks{spread->processes, rank - 1, rank + 1 < spread->processes->size() ? rank + 1 : -1,
                         rows_of_ranks(plan, *spread), kSilenceLimitS, spread->gpu_transport};
  }
  const std::size_t n = devices.size();
  const auto host_thread = [&](std::size_t k) { return devices[k]->info().name + "'s host thread"; };

  Report report;
  // Each device's own job: the same problem, its own kernel parameters.
  std::vector<StencilJob> jobs(n, job);
  if (tuning) {
    for (std::size_t k = 0; k < n; ++k) {
      jobs[k].tuning = usable_tuning(names[k], devices[k]->tunables(jobs[k]), tuning(*devices[k]));
    }
  }
  report.setup_s = run_on_threads(n, [&](std::size_t k) { devices[k]->attach(jobs[k], rows[k]); }, {}, host_thread);
  const std::unique_ptr<Transport> transport =
      make_transport(devices, rows, job, problem.h(), spins, links ? &*links : nullptr);
  report.setup_s += run_on_threads(n, [&](std::size_t k) { transport->connect(k); }, {}, host_thread);
  if (spread) {
    // Every process starts its iterations and its clock together: one whose
    // set-up ended first would otherwise count the others' in its solve time.
    const std::atomic<bool> never{false};
    const auto begin = std::chrono::steady_clock::now();
    spread->processes->barrier(never, kSilenceLimitS);
    report.setup_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  }
  log::debug("running {} iterations at most on {} devices", problem.stop.max_iterations, n);
  {
    ProgressMonitor monitor(watch, *transport);
    const HostLoad load;
    report.solve_s = run_on_threads(n, [&](std::size_t k) { devices[k]->run(transport->endpoint(k)); },
                                    [&] { transport->abort(); }, host_thread);
    // Over processes, the others on this node would count as other load.
    if (!spread) report.host.load = load.since_start();
  }
  const auto finishing = std::chrono::steady_clock::now();
  transport->finish();
  report.teardown_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - finishing).count();
  report.teardown_s += run_on_threads(n, [&](std::size_t k) { devices[k]->detach(); }, {}, host_thread);
  for (std::size_t k = 0; k < n; ++k) {
    const DeviceTimes t = devices[k]->times();
    report.devices.push_back(DeviceReport{names[k], rows[k].first, rows[k].count, t.compute_s, t.exchange_s,
                                          t.check_s, t.total_s, t.compute_p90_s,
                                          not_defaults(devices[k]->tunables(jobs[k]), jobs[k].tuning)});
  }
  if (spread) {
    // Unit i (from 1) lies at i - 1 + radius in the grid, whose ring is radius deep.
    char* unit_zero = reinterpret_cast<char*>(grid.data()) +
                      static_cast<std::size_t>(job.stencil.radius() - 1) * job.unit_bytes();
    spread->processes->gather_rows(unit_zero, job.unit_bytes(), links->ranks);
    gather_reports(*spread->processes, report);
  }

  report.nx = problem.nx;
  report.ny = problem.ny;
  report.nz = problem.dimension() == 3 ? problem.nz : 0;
  report.precision = problem.precision;
  const ExchangeOutcome outcome = transport->outcome();
  report.iterations = outcome.final_iteration;
  report.converged = outcome.converged;
  report.residual = outcome.final_residual;
  report.initial_residual = outcome.initial_residual;
  if (!outcome.links.empty()) report.split = "ghost rows between processes: " + outcome.links;
  report.gcells_per_s = report.solve_s > 0.0 ? static_cast<double>(problem.cells()) *
                                                   static_cast<double>(report.iterations) / report.solve_s / 1e9
                                             : 0.0;
  return Result{report, std::move(grid)};
}

}  // namespace

void check_host_grids(const Problem& problem) {
  check_host_memory_for(host_grid_bytes(problem));
}

void validate_plan(const Plan& plan, const Problem& problem, std::size_t device_count) {
  const std::int64_t units = problem.units();
  const char* unit = problem.dimension() == 3 ? "planes" : "rows";
  if (plan.parts.empty()) HETSTENCIL_THROW(InvalidArgument, std::string("the plan gives ") + unit + " to no device");
  std::vector<bool> used(device_count, false);
  std::int64_t next = 1;
  for (const auto& part : plan.parts) {
    if (part.device >= device_count) {
      HETSTENCIL_THROW(InvalidArgument, "the plan names device " + std::to_string(part.device) + " but there are " +
                                            std::to_string(device_count));
    }
    if (used[part.device]) {
      HETSTENCIL_THROW(InvalidArgument, "the plan gives device " + std::to_string(part.device) + " two ranges of " + unit);
    }
    used[part.device] = true;
    if (part.rows < 1 || part.first_row != next) {
      HETSTENCIL_THROW(InvalidArgument, std::string("the plan's ranges of ") + unit + " must be non-empty and follow each other from 1; "
                                        "device " + std::to_string(part.device) + " starts at " +
                                            std::to_string(part.first_row) + " with " + std::to_string(part.rows) +
                                            " " + unit + ", expected a start at " + std::to_string(next));
    }
    if (part.rows > units) {
      HETSTENCIL_THROW(InvalidArgument, "the plan gives device " + std::to_string(part.device) + " " +
                                            std::to_string(part.rows) + " " + unit + ", more than the grid's " +
                                            std::to_string(units));
    }
    next += part.rows;  // at most (devices + 1) x 2^30: no overflow
  }
  if (next != units + 1) {
    HETSTENCIL_THROW(InvalidArgument, std::string("the plan covers ") + unit + " 1.." + std::to_string(next - 1) +
                                          " of " + std::to_string(units));
  }
}

namespace {

// What execute() refuses before it allocates anything: a plan that does not
// fit the problem, the variant or the processes, and slabs or host grids that
// do not fit in memory (this process's).
void check_solve(const Problem& problem, const Plan& plan, const std::vector<Device*>& devices, const Spread* spread) {
  problem.validate();
  validate_plan(plan, problem, devices.size());
  if (spread) rows_of_ranks(plan, *spread);
  const auto name_of = [&](std::size_t device) {
    return spread ? spread->names[device] : devices[device]->info().name;
  };
  if (plan.variant.variant != Variant::Sync) {
    // The asynchronous variants' kernels are poisson5's own; sync and blocked run any stencil.
    if (plan.variant.variant != Variant::Blocked && !is_poisson5(problem.stencil)) {
      HETSTENCIL_THROW(InvalidArgument, "the " + to_string(plan.variant.variant) + " variant runs poisson5 only; the stencil '" +
                                            problem.stencil.name + "' runs sync or blocked");
    }
    if (plan.variant.param < 1 || plan.variant.param > max_sweeps(plan.variant.variant)) {
      HETSTENCIL_THROW(InvalidArgument, to_string(plan.variant.variant) + " needs " +
                                            (plan.variant.variant == Variant::Blocked ? "a depth" : "an alpha") +
                                            " of 1.." + std::to_string(max_sweeps(plan.variant.variant)) + ", not " +
                                            std::to_string(plan.variant.param));
    }
    const bool one_gpu = plan.parts.size() == 1 && devices[plan.parts.front().device] &&
                         devices[plan.parts.front().device]->info().kind == DeviceKind::Gpu;
    if (plan.variant.variant != Variant::Blocked && !one_gpu) {
      HETSTENCIL_THROW(InvalidArgument, "the " + to_string(plan.variant.variant) +
                                            " variant runs on one GPU alone; this plan has " +
                                            std::to_string(plan.parts.size()) + " device(s), the first " +
                                            name_of(plan.parts.front().device));
    }
  }
  // A neighbour's ghost units come from one device: the stencil's radius of
  // them per sweep between exchanges.
  const std::int64_t ghosts = static_cast<std::int64_t>(halo_depth(plan.variant)) * problem.stencil.radius();
  for (const auto& part : plan.parts) {
    if (plan.parts.size() > 1 && part.rows < ghosts) {
      const std::string unit = problem.dimension() == 3 ? "planes" : "rows";
      HETSTENCIL_THROW(InvalidArgument,
                       "the stencil '" + problem.stencil.name + "' of radius " + std::to_string(problem.stencil.radius()) +
                           (plan.variant.variant == Variant::Blocked
                                ? " blocked with depth " + std::to_string(plan.variant.param)
                                : std::string()) +
                           " needs at least " + std::to_string(ghosts) + " " + unit + " a device; " +
                           name_of(part.device) + " has " + std::to_string(part.rows));
    }
  }
  // Before anything is allocated: the host's grids (the iterate, and h*h*f
  // where the source is a grid) and every device's slab.
  const StencilJob job = job_of(problem, plan);
  std::vector<Slab> slabs;
  for (const auto& part : plan.parts) {
    if (devices[part.device]) slabs.push_back({devices[part.device], RowRange{part.first_row, part.rows}});
  }
  check_memory_for(job, host_grid_bytes(problem), slabs);
}

}  // namespace

Result execute(const Problem& problem, const Plan& plan, const std::vector<Device*>& devices, int spins,
               const ProgressWatch& watch, const Spread* spread, const TuningOf& tuning) {
  const auto checks = [&] { check_solve(problem, plan, devices, spread); };
  const auto solve = [&] {
    return dispatch(problem.precision, [&](auto zero) {
      return execute_typed<decltype(zero)>(problem, plan, devices, spins, watch, spread, tuning);
    });
  };
  if (!spread) {
    checks();
    return solve();
  }
  // Every process learns whether any cannot take its part before they begin
  // to exchange; once they have, a failure can only end them all.
  agree(*spread->processes, checks);
  std::optional<Result> result;
  try {
    result = solve();
  } catch (const std::exception& e) {
    spread->processes->abort(e.what(), 1);
  }
  return std::move(*result);
}

double solve_seconds(const Problem& problem, const Plan& plan, Device& device, int spins, const Tuning& tuning) {
  const TuningOf tuning_of = [&](const Device&) { return tuning; };
  return execute(problem, plan, {&device}, spins, {}, nullptr, tuning_of).report.solve_s;
}

}  // namespace hetstencil
