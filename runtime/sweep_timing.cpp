#include "runtime/sweep_timing.hpp"

#include <algorithm>
#include <cmath>

#include "core/dispatch.hpp"
#include "core/source_term.hpp"
#include "core/timing_grid.hpp"
#include "devices/slab_memory.hpp"
#include "hetstencil/grid.hpp"

namespace hetstencil {
namespace {

// What timing `job` takes from the memory the device's slab comes from: the
// slab, and for a CPU device the host grid it is filled from too.
std::uint64_t timing_bytes(const Device& device, const StencilJob& job) {
  const std::uint64_t slab = device.slab_bytes(job, RowRange{1, job.units()});
  if (device.info().kind != DeviceKind::Cpu) return slab;
  return slab + static_cast<std::uint64_t>(job.shape().values()) * value_bytes(job.precision);
}

}  // namespace

StencilJob stencil_job(const Stencil& stencil, Precision precision, std::int64_t nx, std::int64_t ny,
                       std::int64_t nz) {
  StencilJob job;
  job.precision = precision;
  job.stencil = stencil;
  job.poisson5 = is_poisson5(stencil);
  job.nx = nx;
  job.ny = ny;
  job.nz = stencil.dimension == 3 ? nz : 0;
  const GridShape shape = job.shape();
  const std::int64_t d = shape.depth;
  job.spike_row = (ny + 1) / 2;
  job.spike_col = (nx + 1) / 2;
  const std::int64_t plane = stencil.dimension == 3 ? (job.nz + 1) / 2 - 1 + d : 0;
  job.spike_index = (plane * shape.rows() + job.spike_row - 1 + d) * shape.cols() + job.spike_col - 1 + d;
  return job;
}

std::int64_t filling_size(const Device& device, const Stencil& stencil, Precision precision) {
  const MemoryFigure m = device.memory();
  const std::uint64_t free = m.free > m.reserved ? m.free - m.reserved : 0;
  if (free == 0) return stencil.dimension == 3 ? 256 : 4096;
  const double room = static_cast<double>(free) / 2.0;
  const auto need = [&](std::int64_t n) {
    return static_cast<double>(timing_bytes(device, stencil_job(stencil, precision, n, n, n)));
  };
  // Bytes a cell from two probes: a slab's fixed bytes (a CPU device's gap
  // between its iterates, iterate_pair.hpp) do not count as cells'.
  constexpr std::int64_t probe = 256;
  const auto cells = [&](std::int64_t n) { return std::pow(static_cast<double>(n), stencil.dimension); };
  const double per_cell = (need(2 * probe) - need(probe)) / (cells(2 * probe) - cells(probe));
  auto n = static_cast<std::int64_t>(std::floor(std::pow(room / per_cell, 1.0 / stencil.dimension)));
  n = n / 16 * 16;  // whole cache lines a row, mostly
  while (n > 16 && need(n) > room) n -= 16;
  return std::max<std::int64_t>(n, 16);
}

SweepVsCopy time_stencil(Device& device, StencilJob& job, int repetitions) {
  if (device.info().kind != DeviceKind::Cpu) return device.sweep_vs_copy(job, repetitions);
  return dispatch(job.precision, [&](auto zero) {
    using T = decltype(zero);
    const GridShape shape = job.shape();
    const std::uint64_t bytes = static_cast<std::uint64_t>(shape.values()) * sizeof(T);
    check_memory_for(job, bytes, {{&device, RowRange{1, job.units()}}});
    Grid<T> grid = allocating("the host grid", bytes, [&] { return timing_grid<T>(shape); });
    const CoefficientTerms<T> coefficients =
        allocating("the host's coefficient grids", bytes * (job.stencil.points.size() + 1),
                   [&] { return timing_coefficients<T>(job.stencil, shape); });
    job.initial = grid.data();
    job.result = nullptr;
    job.coefficients = coefficients.values.empty() ? nullptr : coefficients.values.data();
    device.attach(job, RowRange{1, job.units()});
    const SweepVsCopy t = device.sweep_vs_copy(job, repetitions);
    device.detach();
    job.initial = nullptr;
    job.coefficients = nullptr;
    return t;
  });
}

std::vector<double> stencil_sweep_samples(Device& device, StencilJob& job, const void* initial, int repetitions) {
  if (device.info().kind != DeviceKind::Cpu) {
    return device.measure_sweeps(job, {job.units()}, repetitions, false).front().sweep_s;
  }
  return dispatch(job.precision, [&](auto zero) {
    using T = decltype(zero);
    const std::uint64_t bytes = static_cast<std::uint64_t>(job.shape().values()) * sizeof(T);
    const CoefficientTerms<T> coefficients =
        allocating("the host's coefficient grids", bytes * (job.stencil.points.size() + 1),
                   [&] { return timing_coefficients<T>(job.stencil, job.shape()); });
    job.initial = initial;
    job.result = nullptr;
    job.coefficients = coefficients.values.empty() ? nullptr : coefficients.values.data();
    device.attach(job, RowRange{1, job.units()});
    std::vector<double> samples = device.measure_sweeps(job, {job.units()}, repetitions, false).front().sweep_s;
    device.detach();
    job.initial = nullptr;
    job.coefficients = nullptr;
    return samples;
  });
}

}  // namespace hetstencil
