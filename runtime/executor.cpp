#include "runtime/executor.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "core/log.hpp"
#include "devices/memory.hpp"
#include "devices/sync.hpp"
#include "devices/transport/transport.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/reference.hpp"
#include "core/dispatch.hpp"
#include "core/source_term.hpp"

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

template <class T>
Result execute_typed(const Problem& problem, const Plan& plan, const std::vector<Device*>& all, int spins,
                     const ProgressWatch& watch) {
  const std::uint64_t grid_size = grid_bytes(problem.shape(), problem.precision);
  const SourceTerm<T> source =
      allocating("the host's right-hand side", grid_size, [&] { return make_source_term<T>(problem); });
  // One grid holds the initial iterate for attach() and receives the solution
  // in detach(); the devices hold their own slabs in between.
  Grid<T> grid = allocating("the host's grid", grid_size, [&] { return initial_grid<T>(problem); });
  StencilJob job = job_of(problem, plan);
  job.initial = grid.data();
  job.result = grid.data();
  job.h2f = source.h2f.empty() ? nullptr : source.h2f.data();
  job.spike_row = source.spike_row;
  job.spike_col = source.spike_col;
  job.spike_index = source.spike_index;

  std::vector<Device*> devices;
  std::vector<RowRange> rows;
  for (const auto& part : plan.parts) {
    devices.push_back(all[part.device]);
    rows.push_back(RowRange{part.first_row, part.rows});
  }
  const std::size_t n = devices.size();
  const auto host_thread = [&](std::size_t k) { return devices[k]->info().name + "'s host thread"; };

  Report report;
  report.setup_s = run_on_threads(n, [&](std::size_t k) { devices[k]->attach(job, rows[k]); }, {}, host_thread);
  const std::unique_ptr<Transport> transport = make_transport(devices, rows, job, problem.h(), spins);
  report.setup_s += run_on_threads(n, [&](std::size_t k) { transport->connect(k); }, {}, host_thread);
  log::debug("running {} iterations at most on {} devices", problem.stop.max_iterations, n);
  {
    ProgressMonitor monitor(watch, *transport);
    report.solve_s = run_on_threads(n, [&](std::size_t k) { devices[k]->run(transport->endpoint(k)); },
                                    [&] { transport->abort(); }, host_thread);
  }
  report.teardown_s = run_on_threads(n, [&](std::size_t k) { devices[k]->detach(); }, {}, host_thread);

  report.nx = problem.nx;
  report.ny = problem.ny;
  report.precision = problem.precision;
  const ExchangeOutcome outcome = transport->outcome();
  report.iterations = outcome.final_iteration;
  report.converged = outcome.converged;
  report.residual = outcome.final_residual;
  report.initial_residual = outcome.initial_residual;
  report.gcells_per_s = report.solve_s > 0.0 ? static_cast<double>(problem.cells()) *
                                                   static_cast<double>(report.iterations) / report.solve_s / 1e9
                                             : 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    const DeviceTimes t = devices[k]->times();
    report.devices.push_back(DeviceReport{devices[k]->info().name, rows[k].first, rows[k].count, t.compute_s,
                                          t.exchange_s, t.check_s, t.total_s, t.compute_p90_s});
  }
  return Result{report, std::move(grid)};
}

}  // namespace

void validate_plan(const Plan& plan, const Problem& problem, std::size_t device_count) {
  const std::int64_t units = problem.dimension() == 3 ? problem.nz : problem.ny;
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

bool runs_stencil(const DeviceInfo& device, const Stencil& stencil) {
  return device.kind == DeviceKind::Cpu || is_poisson5(stencil);
}

void require_modelled_stencil(const Problem& problem) {
  if (is_poisson5(problem.stencil)) return;
  HETSTENCIL_THROW(InvalidArgument, "the model has no curves for the stencil '" + problem.stencil.name +
                                        "' yet (it models poisson5); solve it on an even split of the CPU devices");
}

void require_device_stencil(const Problem& problem, const Plan& plan, const std::vector<Device*>& devices) {
  for (const auto& part : plan.parts) {
    if (!devices[part.device]) continue;  // another process's device: that process checks it
    const DeviceInfo& d = devices[part.device]->info();
    if (runs_stencil(d, problem.stencil)) continue;
    HETSTENCIL_THROW(InvalidArgument, d.name + " has no kernel for the stencil '" + problem.stencil.name +
                                          "' yet (GPUs solve poisson5): give its units to the CPU devices");
  }
}

Result execute(const Problem& problem, const Plan& plan, const std::vector<Device*>& devices, int spins,
               const ProgressWatch& watch) {
  problem.validate();
  validate_plan(plan, problem, devices.size());
  require_device_stencil(problem, plan, devices);
  if (plan.variant.variant != Variant::Sync) {
    if (plan.variant.param < 1 || plan.variant.param > max_sweeps(plan.variant.variant)) {
      HETSTENCIL_THROW(InvalidArgument, to_string(plan.variant.variant) + " needs " +
                                            (plan.variant.variant == Variant::Blocked ? "a depth" : "an alpha") +
                                            " of 1.." + std::to_string(max_sweeps(plan.variant.variant)) + ", not " +
                                            std::to_string(plan.variant.param));
    }
    const Device& d = *devices[plan.parts.front().device];
    if (plan.variant.variant == Variant::Blocked) {
    } else if (plan.parts.size() != 1 || d.info().kind != DeviceKind::Gpu) {
      HETSTENCIL_THROW(InvalidArgument, "the " + to_string(plan.variant.variant) +
                                            " variant runs on one GPU alone; this plan has " +
                                            std::to_string(plan.parts.size()) + " device(s), the first " + d.info().name);
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
                           (devices[part.device] ? devices[part.device]->info().name
                                                 : "device " + std::to_string(part.device)) +
                           " has " + std::to_string(part.rows));
    }
  }
  // Before anything is allocated: the host's grids (the iterate, and h*h*f
  // where the source is a grid) and every device's slab.
  const StencilJob job = job_of(problem, plan);
  std::vector<Slab> slabs;
  for (const auto& part : plan.parts) slabs.push_back({devices[part.device], RowRange{part.first_row, part.rows}});
  check_memory_for(job, (job.grid_source ? 2 : 1) * grid_bytes(problem.shape(), problem.precision), slabs);
  return dispatch(problem.precision,
                  [&](auto zero) { return execute_typed<decltype(zero)>(problem, plan, devices, spins, watch); });
}

double solve_seconds(const Problem& problem, const Plan& plan, Device& device, int spins) {
  return execute(problem, plan, {&device}, spins).report.solve_s;
}

}  // namespace hetstencil
