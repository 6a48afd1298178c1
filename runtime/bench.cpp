// The benchmarks on the Device interface: each device measured through its own
// backend, one device at a time.
#include "hetstencil/bench.hpp"

#include "core/dispatch.hpp"
#include "core/timing_grid.hpp"
#include "devices/backend.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/grid.hpp"
#include "runtime/executor.hpp"

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

}  // namespace

void bench_cpu_sweeps(const RuntimeOptions& machine, std::int64_t nx, std::int64_t ny,
                      const std::vector<Precision>& precisions, int repetitions, bool beside_gpus,
                      const SweepTimingCallback& each) {
  for (Precision precision : precisions) grid_bytes(nx, ny, precision);
  const Topology topology = load_topology(machine.topology);
  // Beside GPUs, each GPU's host thread takes its core, as in a real solve.
  MachineDevices devices = make_devices(
      topology, DeviceMapOptions{machine.cpu_devices, machine.threads_per_device, machine.devices, beside_gpus}, true);
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
  MachineDevices devices = make_devices(topology, DeviceMapOptions{0, 0, selection, true}, true);
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
