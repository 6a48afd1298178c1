#include "devices/cuda/cuda_bench.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <string>
#include <thread>

#include "core/log.hpp"
#include "devices/affinity.hpp"
#include "devices/cuda/cuda_check.hpp"
#include "devices/cuda/cuda_resources.hpp"
#include "devices/cuda/cuda_timing.cuh"
#include "devices/cuda/jacobi_kernels.cuh"
#include "devices/cuda/peer_access.hpp"
#include "devices/cuda/variant_kernels.cuh"
#include "core/robust.hpp"
#include "core/dispatch.hpp"

namespace hetstencil {
namespace {

using cuda::fill_random;
using cuda::median_seconds;

template <class T>
SweepVsCopy time_sweep(int gpu, std::int64_t nx, std::int64_t ny, int repetitions) {
  const std::string where =
      "gpu" + std::to_string(gpu) + ": benchmarking " + std::to_string(nx) + " x " + std::to_string(ny);
  SweepVsCopy r;
  const cuda::SlabLayout layout = cuda::make_layout<T>(nx);
  const std::size_t slab = static_cast<std::size_t>((ny + 2) * layout.pitch) * sizeof(T);
  const std::size_t sums = static_cast<std::size_t>(ny * layout.groups) * sizeof(double);
  std::size_t free_bytes = 0, total = 0;
  HETSTENCIL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total), where);
  if (2 * slab + 2 * sums + (std::size_t(1) << 28) > free_bytes) {
    r.skipped = true;
    return r;
  }
  cuda::DeviceMemory u(slab, where), v(slab, where), group_sums(sums, where), group_max(sums, where);
  fill_random<T><<<1024, 256>>>(u.get<T>(), slab / sizeof(T));
  fill_random<T><<<1024, 256>>>(v.get<T>(), slab / sizeof(T));
  HETSTENCIL_CUDA_CHECK(cudaDeviceSynchronize(), where + " (filling)");
  cuda::Stream stream(where);
  cuda::SweepArgs a;
  a.layout = layout;
  a.row_begin = 1;
  a.row_end = ny + 1;
  a.multiprocessors = cuda::multiprocessors(where);
  a.group_sums = group_sums.get<double>();
  a.group_max = group_max.get<double>();
  r.sweep_s = median_seconds(where, repetitions, stream, [&] {
    cuda::launch_sweep<T, true, false>(u.get<T>(), v.get<T>(), nullptr, a, stream);
  });
  r.checked_sweep_s = median_seconds(where, repetitions, stream, [&] {
    cuda::launch_sweep<T, true, true>(u.get<T>(), v.get<T>(), nullptr, a, stream);
  });
  const std::size_t bytes = static_cast<std::size_t>(nx) * static_cast<std::size_t>(ny) * sizeof(T);
  r.copy_s = median_seconds(where, repetitions, stream, [&] {
    HETSTENCIL_CUDA_CHECK(cudaMemcpyAsync(v.get(), u.get(), bytes, cudaMemcpyDeviceToDevice, stream), where);
  });
  HETSTENCIL_CUDA_CHECK(cudaGetLastError(), where);
  return r;
}

}  // namespace

SweepVsCopy bench_gpu_sweep(int gpu, Precision precision, std::int64_t nx, std::int64_t ny, int repetitions) {
  HETSTENCIL_CUDA_CHECK(cudaSetDevice(gpu), "gpu" + std::to_string(gpu) + ": selecting the GPU");
  return dispatch(precision, [&](auto zero) { return time_sweep<decltype(zero)>(gpu, nx, ny, repetitions); });
}

struct GpuLoad::Impl {
  std::atomic<bool> stop{false};
  std::atomic<bool> failed{false};
  std::atomic<std::int64_t> sweeps{0};
  std::exception_ptr error;
  std::thread thread;
};

GpuLoad::GpuLoad(int gpu, std::vector<int> host_cpus, bool own_core, std::int64_t n) : impl_(new Impl) {
  impl_->thread = std::thread([this, gpu, host_cpus, own_core, n] {
    try {
      const std::string where = "gpu" + std::to_string(gpu) + ": running a load";
      bind_current_thread(where, host_cpus);
      HETSTENCIL_CUDA_CHECK(cudaSetDevice(gpu), where);
      const cudaError_t rc = cudaSetDeviceFlags(own_core ? cudaDeviceScheduleSpin : cudaDeviceScheduleBlockingSync);
      if (rc == cudaErrorSetOnActiveProcess) (void)cudaGetLastError();
      const cuda::SlabLayout layout = cuda::make_layout<float>(n);
      const std::size_t slab = static_cast<std::size_t>((n + 2) * layout.pitch) * sizeof(float);
      cuda::DeviceMemory u(slab, where), v(slab, where);
      fill_random<float><<<1024, 256>>>(u.get<float>(), slab / sizeof(float));
      cuda::Stream stream(where);
      cuda::SweepArgs a;
      a.layout = layout;
      a.row_begin = 1;
      a.row_end = n + 1;
      a.multiprocessors = cuda::multiprocessors(where);
      while (!impl_->stop.load()) {
        cuda::launch_sweep<float, true, false>(u.get<float>(), v.get<float>(), nullptr, a, stream);
        HETSTENCIL_CUDA_CHECK(cudaStreamSynchronize(stream), where);  // waits as a device's host thread does
        impl_->sweeps.fetch_add(1);
      }
    } catch (...) {
      impl_->error = std::current_exception();
      impl_->failed.store(true);
    }
  });
  // The load is on once the GPU has swept (a fresh context takes a fraction of
  // a second: what is measured before would be measured alone).
  while (impl_->sweeps.load() == 0 && !impl_->failed.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (impl_->failed.load()) {
    impl_->thread.join();
    const std::exception_ptr error = impl_->error;
    delete impl_;
    std::rethrow_exception(error);
  }
}

GpuLoad::~GpuLoad() {
  impl_->stop.store(true);
  impl_->thread.join();
  if (impl_->error) {
    try {
      std::rethrow_exception(impl_->error);
    } catch (const std::exception& e) {
      log::error("the GPU load failed: {}", e.what());
    }
  }
  delete impl_;
}

std::int64_t GpuLoad::sweeps() const { return impl_->sweeps.load(); }

RateSamples gpu_rate_sample(std::int64_t rows, const std::vector<double>& plain, const std::vector<double>& checked) {
  RateSamples out{rows, {robust_time(plain)}, {}};
  if (!checked.empty()) out.check_s.push_back(std::max(0.0, robust_time(checked) - out.sweep_s.front()));
  return out;
}

std::vector<RateSamples> gpu_rate_samples(int gpu, Precision precision, std::int64_t nx,
                                          const std::vector<std::int64_t>& rows, int repetitions, bool checks,
                                          const VariantChoice& variant) {
  const std::string where = "gpu" + std::to_string(gpu) + ": calibrating its sweep";
  HETSTENCIL_CUDA_CHECK(cudaSetDevice(gpu), where);
  return dispatch(precision, [&](auto zero) {
    using T = decltype(zero);
    const std::int64_t most = *std::max_element(rows.begin(), rows.end());
    const cuda::SlabLayout layout = cuda::make_layout<T>(nx);
    const std::size_t slab = static_cast<std::size_t>((most + 2) * layout.pitch) * sizeof(T);
    const std::size_t sums = static_cast<std::size_t>(most * layout.groups) * sizeof(double);
    cuda::DeviceMemory u(slab, where), v(slab, where), group_sums(sums, where), group_max(sums, where);
    fill_random<T><<<1024, 256>>>(u.get<T>(), slab / sizeof(T));
    HETSTENCIL_CUDA_CHECK(cudaDeviceSynchronize(), where);
    // The legacy stream: its kernels, launched one by one, leave the process's
    // later graphs as fast as in a fresh one, where a few on a stream of their
    // own would not (docs/model.md, "a process's fifth solve"); the loops that
    // calibration times next run a slab alone as graphs.
    const cudaStream_t stream = cudaStreamLegacy;
    const bool tiles = variant.variant != Variant::Sync;
    const int limit = tiles ? cuda::allow_tile_shared_memory<T>(gpu, where) : 0;
    const int multiprocessors = cuda::multiprocessors(where);
    std::vector<RateSamples> out;
    for (std::int64_t r : rows) {
      cuda::SweepArgs a;
      a.layout = layout;
      a.row_begin = 1;
      a.row_end = r + 1;
      a.multiprocessors = multiprocessors;
      a.group_sums = group_sums.get<double>();
      a.group_max = group_max.get<double>();
      cuda::TileArgs t;
      t.layout = layout;
      t.ny = r;
      std::vector<double> plain, checked;
      for (int rep = 0; rep < repetitions; ++rep) {
        if (tiles) {
          // An iteration of a tile variant: a pass of its K or alpha sweeps,
          // shared; a check is a residual pass of its own.
          plain.push_back(median_seconds(where, 1, stream, [&] {
            cuda::launch_tile_pass<T>(variant, variant.param, u.get<T>(), v.get<T>(), nullptr, t, limit, stream, where);
          }) / variant.param);
          if (!checks) continue;
          checked.push_back(plain.back() + median_seconds(where, 1, stream, [&] {
            cuda::launch_sweep<T, false, true>(u.get<T>(), nullptr, nullptr, a, stream);
          }));
        } else {
          plain.push_back(median_seconds(where, 1, stream, [&] {
            cuda::launch_sweep<T, true, false>(u.get<T>(), v.get<T>(), nullptr, a, stream);
          }));
          if (!checks) continue;
          checked.push_back(median_seconds(where, 1, stream, [&] {
            cuda::launch_sweep<T, true, true>(u.get<T>(), v.get<T>(), nullptr, a, stream);
          }));
        }
      }
      out.push_back(gpu_rate_sample(r, plain, checked));
    }
    return out;
  });
}

GpuLinkSamples gpu_link_samples(int gpu, const std::vector<int>& peers, const std::vector<double>& row_sizes,
                                int repetitions) {
  const std::string where = "gpu" + std::to_string(gpu) + ": calibrating its links";
  HETSTENCIL_CUDA_CHECK(cudaSetDevice(gpu), where);
  const auto row_bytes = static_cast<std::size_t>(*std::max_element(row_sizes.begin(), row_sizes.end()));
  cuda::DeviceMemory device(row_bytes, where);
  cuda::PinnedMemory pinned(row_bytes, where);
  std::vector<char> pageable(row_bytes, 1);
  cuda::Stream stream(where);
  using Clock = std::chrono::steady_clock;
  // Host-timed, as the exchange sees a copy: issue, transfer, synchronize.
  auto timed = [&](auto&& copy) {
    std::vector<double> samples;
    for (int rep = -2; rep < repetitions; ++rep) {
      const auto begin = Clock::now();
      copy();
      HETSTENCIL_CUDA_CHECK(cudaStreamSynchronize(stream), where);
      if (rep >= 0) samples.push_back(std::chrono::duration<double>(Clock::now() - begin).count());
    }
    return robust_time(samples);
  };
  GpuLinkSamples out;
  for (double b : row_sizes) {
    const auto n = static_cast<std::size_t>(b);
    out.to_host.push_back({b, timed([&] {
                             HETSTENCIL_CUDA_CHECK(cudaMemcpyAsync(pinned.get(), device.get(), n, cudaMemcpyDeviceToHost, stream), where);
                           })});
    out.from_host.push_back({b, timed([&] {
                               HETSTENCIL_CUDA_CHECK(cudaMemcpyAsync(device.get(), pageable.data(), n, cudaMemcpyHostToDevice, stream), where);
                             })});
  }
  for (int peer : peers) {
    std::vector<std::pair<double, double>> samples;
    HETSTENCIL_CUDA_CHECK(cudaSetDevice(peer), where);
    cuda::DeviceMemory remote(row_bytes, where);
    HETSTENCIL_CUDA_CHECK(cudaSetDevice(gpu), where);
    int can = 0;
    HETSTENCIL_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, gpu, peer), where);
    if (can) enable_peer_access(gpu, peer, where);
    for (double b : row_sizes) {
      samples.push_back({b, timed([&] {
                           HETSTENCIL_CUDA_CHECK(cudaMemcpyPeerAsync(remote.get(), peer, device.get(), gpu,
                                                                     static_cast<std::size_t>(b), stream), where);
                         })});
    }
    out.to_peer.push_back(samples);
  }
  return out;
}

}  // namespace hetstencil
