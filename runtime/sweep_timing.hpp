// Timing one device's sweep of a whole grid of any stencil, as the
// benchmarks and the auto-tuner do it.
#pragma once

#include <cstdint>
#include <vector>

#include "devices/device.hpp"

namespace hetstencil {

/// A timing job of `stencil` on a grid of these sizes (nz only in 3-D), the
/// spike at its centre.
StencilJob stencil_job(const Stencil& stencil, Precision precision, std::int64_t nx, std::int64_t ny,
                       std::int64_t nz);

/// The n (nx = ny = n, and nz = n in 3-D) whose timing fills half the device's
/// free memory; a fixed size where its memory is not known.
std::int64_t filling_size(const Device& device, const Stencil& stencil, Precision precision);

/// One sweep of the job's grid beside a copy on `device`: a CPU device's grid
/// filled from a host grid, a GPU's from its own values.
SweepVsCopy time_stencil(Device& device, StencilJob& job, int repetitions);

/// Samples of one sweep of the job's whole grid on `device` (job.tuning's
/// parameters), `repetitions` after a warm-up: a CPU device's slab attached
/// from `initial` (the job's grid of values, kept by the caller) for them.
std::vector<double> stencil_sweep_samples(Device& device, StencilJob& job, const void* initial, int repetitions);

}  // namespace hetstencil
