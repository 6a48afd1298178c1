#include "devices/cuda/cuda_stencil_bench.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "core/dispatch.hpp"
#include "devices/cuda/cuda_check.hpp"
#include "devices/cuda/cuda_resources.hpp"
#include "devices/cuda/cuda_timing.cuh"
#include "devices/cuda/stencil_kernels.cuh"

namespace hetstencil {
namespace {

constexpr int kSettleMilliseconds = 30;

// A slab of `units` interior units of job's shape and its radius of units
// each side, laid out as a solve's (cuda::StencilSlab), two buffers of random
// values and the residual's sums.
template <class T>
struct BenchSlab {
  BenchSlab(const StencilJob& job, int gpu, std::int64_t units, const std::string& where)
      : slab(cuda::StencilSlab::of(job.shape())),
        code(job.stencil, job.shape(), gpu, cuda::sweep_choice("gpu" + std::to_string(gpu), job, cuda::gpu_stages(gpu))),
        values(static_cast<std::size_t>(slab.buffer_values(units + 2 * job.stencil.radius()))),
        u(values * sizeof(T), where),
        v(values * sizeof(T), where),
        sums(static_cast<std::size_t>(units * slab.lines * slab.segments) * sizeof(double), where),
        maxima(static_cast<std::size_t>(units * slab.lines * slab.segments) * sizeof(double), where),
        stream(where) {
    cuda::fill_random<T><<<1024, 256>>>(u.get<T>(), values);
    cuda::fill_random<T><<<1024, 256>>>(v.get<T>(), values);
    HETSTENCIL_CUDA_CHECK(cudaDeviceSynchronize(), where + " (filling)");
  }

  /// Sweeps interior units 1..units (after the radius of ghost units).
  void sweep(std::int64_t radius, std::int64_t units, bool check) {
    cuda::StencilPass<T> pass;
    pass.in = u.get<T>() + slab.lead;
    pass.out = v.get<T>() + slab.lead;
    pass.unit_begin = radius;
    pass.unit_end = radius + units;
    if (check) {
      pass.check_begin = pass.unit_begin;
      pass.check_end = pass.unit_end;
    }
    pass.segment_sums = sums.get<double>();
    pass.segment_max = maxima.get<double>();
    code.launch(slab, pass, stream);
  }

  /// A GPU idle before (the host filling and uploading a grid) raises its
  /// clocks over its first milliseconds of work: the sweep of `units`,
  /// again and again, until they have.
  void settle(std::int64_t radius, std::int64_t units, const std::string& where) {
    const auto begin = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - begin < std::chrono::milliseconds(kSettleMilliseconds)) {
      for (int i = 0; i < 4; ++i) sweep(radius, units, false);
      HETSTENCIL_CUDA_CHECK(cudaStreamSynchronize(stream), where + " (warming up)");
    }
  }

  cuda::StencilSlab slab;
  cuda::StencilCode<T> code;
  std::size_t values;
  cuda::DeviceMemory u, v, sums, maxima;
  cuda::Stream stream;
};

template <class T>
std::vector<RateSamples> rate_samples(int gpu, const StencilJob& job, const std::vector<std::int64_t>& rows,
                                      int repetitions, bool checks) {
  const std::string where = "gpu" + std::to_string(gpu) + ": calibrating its sweep of the stencil '" + job.stencil.name + "'";
  HETSTENCIL_CUDA_CHECK(cudaSetDevice(gpu), where);
  const std::int64_t radius = job.stencil.radius();
  const std::int64_t most = *std::max_element(rows.begin(), rows.end());
  BenchSlab<T> slab(job, gpu, most, where);
  slab.settle(radius, most, where);
  std::vector<RateSamples> out;
  for (std::int64_t r : rows) {
    std::vector<double> plain, checked;
    for (int rep = 0; rep < repetitions; ++rep) {
      plain.push_back(cuda::median_seconds(where, 1, slab.stream, [&] { slab.sweep(radius, r, false); }));
      if (checks) checked.push_back(cuda::median_seconds(where, 1, slab.stream, [&] { slab.sweep(radius, r, true); }));
    }
    HETSTENCIL_CUDA_CHECK(cudaGetLastError(), where);
    out.push_back(gpu_rate_sample(r, plain, checked));
  }
  return out;
}

template <class T>
SweepVsCopy sweep_vs_copy(int gpu, const StencilJob& job, int repetitions) {
  const GridShape shape = job.shape();
  const std::string where = "gpu" + std::to_string(gpu) + ": benchmarking the stencil '" + job.stencil.name + "' on " +
                            std::to_string(shape.nx) + " x " + std::to_string(shape.ny) +
                            (shape.dimension() == 3 ? " x " + std::to_string(shape.nz) : std::string());
  HETSTENCIL_CUDA_CHECK(cudaSetDevice(gpu), where);
  SweepVsCopy r;
  const std::int64_t units = job.units();
  const cuda::StencilSlab slab = cuda::StencilSlab::of(shape);
  const std::size_t buffer = static_cast<std::size_t>(slab.buffer_values(units + 2 * job.stencil.radius())) * sizeof(T);
  const std::size_t sums = static_cast<std::size_t>(units * slab.lines * slab.segments) * sizeof(double);
  std::size_t free_bytes = 0, total = 0;
  HETSTENCIL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total), where);
  if (2 * buffer + 2 * sums + (std::size_t(1) << 28) > free_bytes) {
    r.skipped = true;
    return r;
  }
  BenchSlab<T> bench(job, gpu, units, where);
  const std::int64_t radius = job.stencil.radius();
  bench.settle(radius, units, where);
  r.sweep_s = cuda::median_seconds(where, repetitions, bench.stream, [&] { bench.sweep(radius, units, false); });
  r.checked_sweep_s = cuda::median_seconds(where, repetitions, bench.stream, [&] { bench.sweep(radius, units, true); });
  // The bytes a sweep reads once and writes once: the interior's values.
  const std::size_t bytes = static_cast<std::size_t>(shape.nx * shape.ny * std::max<std::int64_t>(shape.nz, 1)) * sizeof(T);
  r.copy_s = cuda::median_seconds(where, repetitions, bench.stream, [&] {
    HETSTENCIL_CUDA_CHECK(cudaMemcpyAsync(bench.v.get(), bench.u.get(), bytes, cudaMemcpyDeviceToDevice, bench.stream),
                          where);
  });
  HETSTENCIL_CUDA_CHECK(cudaGetLastError(), where);
  return r;
}

}  // namespace

std::vector<RateSamples> gpu_stencil_rate_samples(int gpu, const StencilJob& job, const std::vector<std::int64_t>& rows,
                                                  int repetitions, bool checks) {
  return dispatch(job.precision,
                  [&](auto zero) { return rate_samples<decltype(zero)>(gpu, job, rows, repetitions, checks); });
}

SweepVsCopy bench_gpu_stencil_sweep(int gpu, const StencilJob& job, int repetitions) {
  return dispatch(job.precision, [&](auto zero) { return sweep_vs_copy<decltype(zero)>(gpu, job, repetitions); });
}

}  // namespace hetstencil
