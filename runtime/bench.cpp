// The benchmarks on the Device interface: each device measured through its own
// backend, one device at a time.
#include "hetstencil/bench.hpp"

#include <cmath>
#include <optional>

#include <spdlog/fmt/fmt.h>

#include "core/dispatch.hpp"
#include "core/source_term.hpp"
#include "core/timing_grid.hpp"
#include "devices/backend.hpp"
#include "devices/slab_memory.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/grid.hpp"
#include "hetstencil/profile.hpp"
#include "core/log.hpp"
#include "model/profile.hpp"
#include "model/tune.hpp"
#include "runtime/sweep_timing.hpp"

namespace hetstencil {
namespace {

// A CPU device's sweep beside a copy, over the whole of a ny x nx timing grid attached to it.
SweepVsCopy time_attached(Device& device, Precision precision, std::int64_t nx, std::int64_t ny, int repetitions) {
  return dispatch(precision, [&](auto zero) {
    using T = decltype(zero);
    StencilJob job;
    job.precision = precision;
    job.nx = nx;
    job.ny = ny;
    const std::uint64_t grid_size = grid_bytes(nx, ny, precision);
    check_memory_for(job, grid_size, {{&device, RowRange{1, ny}}});
    Grid<T> grid = allocating("the host grid", grid_size, [&] { return timing_grid<T>(ny, nx); });
    job.initial = grid.data();
    job.result = grid.data();
    job.spike_row = (ny + 1) / 2;
    job.spike_col = (nx + 1) / 2;
    device.attach(job, RowRange{1, ny});
    const SweepVsCopy t = device.sweep_vs_copy(job, repetitions);
    device.detach();
    return t;
  });
}

SweepTiming timing_of(const Device& device, Precision precision, std::int64_t nx, std::int64_t ny,
                      const SweepVsCopy& t) {
  SweepTiming out;
  out.device = device.info().name;
  out.threads = device.info().threads;
  out.precision = precision;
  out.nx = nx;
  out.ny = ny;
  out.skipped = t.skipped;
  out.streaming_stores = t.streaming_stores;
  out.sweep_s = t.sweep_s;
  out.checked_sweep_s = t.checked_sweep_s;
  out.copy_s = t.copy_s;
  return out;
}

// The profile's prediction of one sweep of a whole grid by one device, from
// its own curve of the stencil (none: 0).
class SweepPredictor {
 public:
  SweepPredictor(const RuntimeOptions& machine, const std::string& profile) {
    try {
      model_.emplace(machine, profile, ProfileModel::Use::Predict);
    } catch (const InvalidArgument&) {
      if (!profile.empty()) throw;  // a profile named on purpose must be usable
    }
  }

  double sweep_s(const std::string& device, const StencilJob& job) const {
    if (!model_) return 0.0;
    Problem p;
    p.precision = job.precision;
    p.stencil = job.stencil;
    p.nx = job.nx;
    p.ny = job.ny;
    p.nz = job.nz;
    p.stop.max_iterations = 1;
    const std::vector<DeviceInfo>& devices = model_->devices();
    std::vector<std::int64_t> rows(devices.size(), 0);
    const auto it = std::find_if(devices.begin(), devices.end(), [&](const DeviceInfo& d) { return d.name == device; });
    if (it == devices.end()) return 0.0;
    rows[static_cast<std::size_t>(it - devices.begin())] = job.units();
    try {
      const Prediction prediction = model_->predict(p, rows);
      if (!prediction.estimated.empty()) return 0.0;  // estimated from other curves, not its own
      for (const DevicePrediction& d : prediction.devices) {
        if (d.name == device) return d.compute_s;
      }
    } catch (const InvalidArgument&) {
      // no curve of this stencil, precision or width for the device
    }
    return 0.0;
  }

 private:
  std::optional<ProfileModel> model_;
};

// The tuned parameters of the profile `path` names ("" this machine's
// default), by device name and tuning_key; none (said once) where the profile
// is another machine's.
class TunedLookup {
 public:
  TunedLookup(const Topology& topology, const std::vector<DeviceInfo>& devices, const std::string& path) {
    if (!topology.this_machine) return;
    const Fingerprint here = fingerprint_of(topology);
    const std::string file = path.empty() ? default_profile_path(here.host) : path;
    const auto stored = load_profile(file, nullptr);
    if (!stored) return;
    if (const std::string why = here.difference(stored->fingerprint); !why.empty()) {
      // This machine's own path: the predictor's reading of it has said so.
      if (!path.empty()) {
        log::warn("the tuned parameters of profile '{}' are for another machine ({}); the defaults run", file, why);
      }
      return;
    }
    named_ = named_for(*stored, devices);
  }

  // The device's tuned values for the job that it accepts.
  Tuning of(const Device& device, const StencilJob& job) const {
    const std::string& name = device.info().name;
    return usable_tuning(name, device.tunables(job), tuned_values(named_, name, job.stencil, job.precision));
  }

 private:
  Profile named_;
};

}  // namespace

void bench_stencil_sweeps(const RuntimeOptions& machine, const StencilBenchOptions& options,
                          const std::function<void(const StencilTiming&)>& each) {
  std::vector<Stencil> stencils = options.stencils;
  if (stencils.empty()) {
    for (const std::string& name : builtin_stencil_names()) stencils.push_back(Stencil::builtin(name));
  }
  for (const Stencil& s : stencils) s.validate();
  const SweepPredictor predictor(machine, options.profile);
  const Topology topology = load_topology(machine.topology);
  MachineDevices devices = make_devices(
      topology, DeviceMapOptions{machine.cpu_devices, machine.threads_per_device, machine.devices, true, {}}, true);
  std::vector<DeviceInfo> infos;
  for (const auto& device : devices.devices) infos.push_back(device->info());
  const TunedLookup tuned(topology, infos, options.profile);
  for (auto& device : devices.devices) {
    const DeviceInfo& info = device->info();
    for (const Stencil& stencil : stencils) {
      for (Precision precision : options.precisions) {
        const std::int64_t fill =
            options.nx > 0 && options.ny > 0 && (stencil.dimension == 2 || options.nz > 0)
                ? 0
                : filling_size(*device, stencil, precision);
        StencilJob job = stencil_job(stencil, precision, options.nx > 0 ? options.nx : fill,
                                     options.ny > 0 ? options.ny : fill, options.nz > 0 ? options.nz : fill);
        StencilTiming t;
        t.device = info.name;
        t.threads = info.threads;
        t.stencil = stencil.name;
        t.dimension = stencil.dimension;
        t.precision = precision;
        t.nx = job.nx;
        t.ny = job.ny;
        t.nz = job.nz;
        if (options.progress) {
          options.progress(fmt::format("{}: {} {} {}x{}{}", info.name, stencil.name, to_string(precision), job.nx,
                                       job.ny, job.nz > 0 ? fmt::format("x{}", job.nz) : ""));
        }
        t.predicted_s = predictor.sweep_s(info.name, job);
        // The sweep with `tuning`, into `row`.
        const auto measure = [&](StencilTiming& row, const Tuning& tuning) {
          job.tuning = tuning;
          const SweepVsCopy measured = time_stencil(*device, job, options.repetitions);
          if (measured.skipped) row.skipped = "not enough memory";
          row.streaming_stores = measured.streaming_stores;
          row.sweep_s = measured.sweep_s;
          row.copy_s = measured.copy_s;
        };
        if (options.tunings.empty()) {
          const Tuning tuning = tuned.of(*device, job);
          measure(t, tuning);
          if (!tuning.empty() && t.skipped.empty()) {
            t.tuning = tuning_text(tuning);
            StencilTiming at_defaults = t;
            measure(at_defaults, {});
            t.default_s = at_defaults.sweep_s;
          }
          each(t);
          continue;
        }
        // The defaults, swept once a set the device takes needs them beside it.
        std::optional<StencilTiming> defaults;
        for (const Tuning& set : options.tunings) {
          StencilTiming row = t;
          row.tuning = tuning_text(set);
          try {
            check_tuning(info.name, device->tunables(job), set);
          } catch (const InvalidArgument& e) {
            row.skipped = e.what();
            each(row);
            continue;
          }
          if (!defaults) {
            defaults = t;
            measure(*defaults, {});
          }
          if (!defaults->skipped.empty()) {
            row.skipped = defaults->skipped;
          } else {
            measure(row, set);
            row.default_s = defaults->sweep_s;
          }
          each(row);
        }
      }
    }
  }
}

void bench_cpu_sweeps(const RuntimeOptions& machine, std::int64_t nx, std::int64_t ny,
                      const std::vector<Precision>& precisions, int repetitions, bool beside_gpus,
                      const SweepTimingCallback& each) {
  for (Precision precision : precisions) grid_bytes(nx, ny, precision);
  const Topology topology = load_topology(machine.topology);
  // Beside GPUs, each GPU's host thread takes its core, as in a real solve.
  MachineDevices devices = make_devices(
      topology, DeviceMapOptions{machine.cpu_devices, machine.threads_per_device, machine.devices, beside_gpus, {}}, true);
  for (auto& device : devices.devices) {
    if (device->info().kind != DeviceKind::Cpu) continue;
    for (Precision precision : precisions) {
      SweepTiming timing = timing_of(*device, precision, nx, ny, time_attached(*device, precision, nx, ny, repetitions));
      if (beside_gpus) {
        std::vector<std::unique_ptr<DeviceLoad>> loads;
        for (const auto& other : devices.devices) {
          if (auto load = other->start_load()) loads.push_back(std::move(load));
        }
        timing.beside_sweep_s = time_attached(*device, precision, nx, ny, repetitions).sweep_s;
        for (const auto& l : loads) timing.load_sweeps += l->sweeps();
      }
      each(timing);
    }
  }
}

void bench_gpu_sweeps(const std::string& selection, const std::vector<std::int64_t>& sizes,
                      const std::vector<Precision>& precisions, int repetitions, const SweepTimingCallback& each) {
  const Topology topology = load_topology();
  MachineDevices devices = make_devices(topology, DeviceMapOptions{0, 0, selection, true, {}}, true);
  for (auto& device : devices.devices) {
    if (device->info().kind != DeviceKind::Gpu) continue;
    for (Precision precision : precisions) {
      for (std::int64_t n : sizes) {
        StencilJob job;
        job.precision = precision;
        job.nx = n;
        job.ny = n;
        each(timing_of(*device, precision, n, n, device->sweep_vs_copy(job, repetitions)));
      }
    }
  }
}

struct VariantSolver::Impl {
  std::unique_ptr<VariantGrid> grid;
};

VariantSolver::VariantSolver(int gpu, const Problem& problem) : impl_(std::make_unique<Impl>()) {
  const Backend* backend = backend_of(DeviceKind::Gpu);
  if (backend) impl_->grid = backend->variant_grid(gpu, problem);
  if (!impl_->grid) HETSTENCIL_THROW(NotCompiled, "this build of hetstencil has no GPU backend that runs the variants");
}

VariantSolver::~VariantSolver() = default;
VariantSolver::VariantSolver(VariantSolver&&) noexcept = default;
VariantSolver& VariantSolver::operator=(VariantSolver&&) noexcept = default;

void VariantSolver::reset() { impl_->grid->reset(); }
double VariantSolver::advance(const VariantChoice& choice, std::int64_t iterations) {
  return impl_->grid->advance(choice, iterations);
}
double VariantSolver::max_relative_error(const VariantSolver& other) const {
  return impl_->grid->max_relative_error(*other.impl_->grid);
}
Solution VariantSolver::download() const { return impl_->grid->download(); }

}  // namespace hetstencil
