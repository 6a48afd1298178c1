// What the CUDA backend measures of a stencil other than poisson5, for
// calibration and the benchmarks: the same figures as cuda_bench.hpp's, on
// slabs of the job's shape (units: rows in 2-D, planes in 3-D).
#pragma once

#include <cstdint>
#include <vector>

#include "devices/cuda/cuda_bench.hpp"
#include "devices/device.hpp"

namespace hetstencil {

/// Robust seconds of one sweep of r units of job's stencil, shape and
/// precision on CUDA device `gpu` for each r in `rows` (one slab of random
/// values, sized for the largest), and with `checks` what folding the
/// residual adds.
std::vector<RateSamples> gpu_stencil_rate_samples(int gpu, const StencilJob& job, const std::vector<std::int64_t>& rows,
                                                  int repetitions, bool checks);

/// One sweep of job's whole grid (job.shape(): nx x ny, or nx x ny x nz) of
/// random values on CUDA device `gpu`, plain and checked, beside a
/// device-to-device copy of its interior's bytes (median of `repetitions`
/// after warm-ups); skipped where the GPU's memory is short.
SweepVsCopy bench_gpu_stencil_sweep(int gpu, const StencilJob& job, int repetitions);

}  // namespace hetstencil
