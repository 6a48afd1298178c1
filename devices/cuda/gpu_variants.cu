#include "devices/cuda/gpu_variants.hpp"

#include <algorithm>
#include <cstring>
#include <variant>

#include "devices/cuda/cuda_check.hpp"
#include "devices/cuda/cuda_resources.hpp"
#include "devices/cuda/jacobi_kernels.cuh"
#include "devices/cuda/variant_kernels.cuh"
#include "hetstencil/reference.hpp"
#include "core/dispatch.hpp"
#include "core/source_term.hpp"

namespace hetstencil {
namespace {

// max over the interior of |a - b| and of |b|, as the bits of non-negative
// doubles (which order like the numbers), so atomicMax can combine blocks.
template <class T>
__global__ void max_difference_kernel(const T* a, const T* b, cuda::SlabLayout s, std::int64_t ny,
                                      unsigned long long* out) {
  double diff = 0.0, size = 0.0;
  const std::int64_t cells = ny * s.nx;
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < cells;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t at = (1 + k / s.nx) * s.pitch + s.offset + 1 + k % s.nx;
    diff = fmax(diff, fabs(double(a[at]) - double(b[at])));
    size = fmax(size, fabs(double(b[at])));
  }
  for (int d = 16; d >= 1; d /= 2) {
    diff = fmax(diff, __shfl_down_sync(0xffffffffu, diff, d));
    size = fmax(size, __shfl_down_sync(0xffffffffu, size, d));
  }
  if ((threadIdx.x & 31) == 0) {
    atomicMax(out, static_cast<unsigned long long>(__double_as_longlong(diff)));
    atomicMax(out + 1, static_cast<unsigned long long>(__double_as_longlong(size)));
  }
}

}  // namespace

struct GpuVariantSolver::Impl {
  int gpu = 0;
  Problem problem;
  cuda::SlabLayout layout;
  std::size_t value = 0;
  cuda::DeviceMemory initial, u, v, h2f, maxima;
  cuda::Stream stream;
  cuda::Event begin, end;
  std::int64_t spike_row = -1, spike_col = -1;
  int shared_limit = 0;  // bytes of shared memory a block may have
  int multiprocessors = 0;  // the GPU's, for its sweeps' bands

  std::string context(const std::string& doing) const {
    return "gpu" + std::to_string(gpu) + " (CUDA device " + std::to_string(gpu) + "): " + doing;
  }
  void use(const std::string& doing) const { HETSTENCIL_CUDA_CHECK(cudaSetDevice(gpu), context(doing)); }
  std::size_t slab_bytes() const { return static_cast<std::size_t>((problem.ny + 2) * layout.pitch) * value; }
  char* at(const cuda::DeviceMemory& m) const { return m.get<char>() + static_cast<std::size_t>(layout.offset) * value; }

  template <class T>
  void upload() {
    layout = cuda::make_layout<T>(problem.nx);
    value = sizeof(T);
    const Grid<T> grid = initial_grid<T>(problem);
    const SourceTerm<T> source = make_source_term<T>(problem);
    spike_row = source.spike_row;
    spike_col = source.spike_col;
    const std::size_t row_bytes = static_cast<std::size_t>(problem.nx + 2) * sizeof(T);
    auto to_gpu = [&](cuda::DeviceMemory& m, const T* host, const std::string& what) {
      m = cuda::DeviceMemory(slab_bytes(), context("allocating " + what));
      HETSTENCIL_CUDA_CHECK(cudaMemset(m.get(), 0, slab_bytes()), context("clearing " + what));
      HETSTENCIL_CUDA_CHECK(cudaMemcpy2D(at(m), static_cast<std::size_t>(layout.pitch) * sizeof(T), host, row_bytes,
                                         row_bytes, static_cast<std::size_t>(problem.ny + 2), cudaMemcpyHostToDevice),
                            context("copying " + what + " to the GPU"));
    };
    to_gpu(initial, grid.data(), "the initial iterate");
    if (!source.h2f.empty()) to_gpu(h2f, source.h2f.data(), "the right-hand side");
    u = cuda::DeviceMemory(slab_bytes(), context("allocating the iterate"));
    v = cuda::DeviceMemory(slab_bytes(), context("allocating the next iterate"));
    maxima = cuda::DeviceMemory(2 * sizeof(unsigned long long), context("allocating the error's maxima"));
    shared_limit = cuda::allow_tile_shared_memory<T>(gpu, context("allowing the tile kernels their shared memory"));
    multiprocessors = cuda::multiprocessors(context("counting its SMs"));
    // The copies above ran on the legacy stream, which the solver's stream does not wait for.
    HETSTENCIL_CUDA_CHECK(cudaDeviceSynchronize(), context("finishing its set-up"));
  }

  void reset() {
    use("resetting the iterate");
    // On the solver's stream (a non-blocking one): a plain cudaMemcpy between
    // device buffers may still be running when the next kernel starts there.
    HETSTENCIL_CUDA_CHECK(cudaMemcpyAsync(u.get(), initial.get(), slab_bytes(), cudaMemcpyDeviceToDevice, stream),
                          context("resetting the iterate"));
    // v's boundary must hold the boundary values too: sweeps write the interior only.
    HETSTENCIL_CUDA_CHECK(cudaMemcpyAsync(v.get(), initial.get(), slab_bytes(), cudaMemcpyDeviceToDevice, stream),
                          context("resetting the iterate"));
  }

  template <class T>
  void advance_typed(const VariantChoice& c, std::int64_t iterations) {
    const T* f = h2f.get<T>();  // every kernel takes slab pointers (row 0, column offset)
    cuda::TileArgs tiles;
    tiles.layout = layout;
    tiles.ny = problem.ny;
    tiles.spike_row = spike_row;
    tiles.spike_col = spike_col;
    for (std::int64_t done = 0; done < iterations;) {
      if (c.variant == Variant::Sync) {
        cuda::SweepArgs a;
        a.layout = layout;
        a.row_begin = 1;
        a.row_end = problem.ny + 1;
        a.multiprocessors = multiprocessors;
        a.spike_row = spike_row;
        a.spike_col = spike_col;
        cuda::launch_sweep<T, true, false>(u.get<T>(), v.get<T>(), f, a, stream);
        HETSTENCIL_CUDA_CHECK(cudaGetLastError(), context("launching a sweep"));
        std::swap(u, v);
        done += 1;
        continue;
      }
      const int steps = static_cast<int>(std::min<std::int64_t>(c.param, iterations - done));
      if (cuda::launch_tile_pass<T>(c, steps, u.get<T>(), v.get<T>(), f, tiles, shared_limit, stream,
                                    context("running " + to_string(c.variant)))) {
        std::swap(u, v);
      }
      done += steps;
    }
  }
};

GpuVariantSolver::GpuVariantSolver(int gpu, const Problem& problem) : impl_(std::make_unique<Impl>()) {
  problem.validate();
  impl_->gpu = gpu;
  impl_->problem = problem;
  impl_->use("setting up a variant solve");
  impl_->stream = cuda::Stream(impl_->context("creating a stream"));
  impl_->begin = cuda::Event(impl_->context("creating a timing event"), true);
  impl_->end = cuda::Event(impl_->context("creating a timing event"), true);
  dispatch(problem.precision, [&](auto zero) { impl_->upload<decltype(zero)>(); });
  impl_->reset();
}

GpuVariantSolver::~GpuVariantSolver() = default;

void GpuVariantSolver::reset() { impl_->reset(); }

double GpuVariantSolver::advance(const VariantChoice& c, std::int64_t iterations) {
  Impl& m = *impl_;
  m.use("running " + to_string(c.variant));
  HETSTENCIL_CUDA_CHECK(cudaEventRecord(m.begin, m.stream), m.context("timing " + to_string(c.variant)));
  dispatch(m.problem.precision, [&](auto zero) { m.advance_typed<decltype(zero)>(c, iterations); });
  HETSTENCIL_CUDA_CHECK(cudaEventRecord(m.end, m.stream), m.context("timing " + to_string(c.variant)));
  HETSTENCIL_CUDA_CHECK(cudaEventSynchronize(m.end), m.context("running " + to_string(c.variant)));
  float ms = 0.0f;
  HETSTENCIL_CUDA_CHECK(cudaEventElapsedTime(&ms, m.begin, m.end), m.context("timing " + to_string(c.variant)));
  return 1e-3 * static_cast<double>(ms);
}

double GpuVariantSolver::max_relative_error(const VariantGrid& grid) const {
  const auto& other = dynamic_cast<const GpuVariantSolver&>(grid);
  const Impl& m = *impl_;
  m.use("measuring an error");
  HETSTENCIL_CUDA_CHECK(cudaMemsetAsync(m.maxima.get(), 0, 2 * sizeof(unsigned long long), m.stream),
                        m.context("measuring an error"));
  dispatch(m.problem.precision, [&](auto zero) {
    using T = decltype(zero);
    max_difference_kernel<T><<<1024, 256, 0, m.stream>>>(m.u.get<T>(), other.impl_->u.get<T>(), m.layout, m.problem.ny,
                                                          m.maxima.get<unsigned long long>());
  });
  HETSTENCIL_CUDA_CHECK(cudaGetLastError(), m.context("launching the error's maxima"));
  unsigned long long bits[2] = {0, 0};
  HETSTENCIL_CUDA_CHECK(cudaMemcpyAsync(bits, m.maxima.get(), sizeof(bits), cudaMemcpyDeviceToHost, m.stream),
                        m.context("reading the error"));
  HETSTENCIL_CUDA_CHECK(cudaStreamSynchronize(m.stream), m.context("measuring an error"));
  double diff = 0.0, size = 0.0;
  std::memcpy(&diff, &bits[0], sizeof(double));
  std::memcpy(&size, &bits[1], sizeof(double));
  return size > 0.0 ? diff / size : diff;
}

Solution GpuVariantSolver::download() const {
  const Impl& m = *impl_;
  m.use("copying the iterate back");
  return dispatch(m.problem.precision, [&](auto zero) -> Solution {
    using T = decltype(zero);
    Grid<T> grid(m.problem.ny, m.problem.nx);
    const std::size_t row_bytes = static_cast<std::size_t>(m.problem.nx + 2) * sizeof(T);
    HETSTENCIL_CUDA_CHECK(cudaMemcpy2D(grid.data(), row_bytes, m.at(m.u), static_cast<std::size_t>(m.layout.pitch) * sizeof(T),
                                       row_bytes, static_cast<std::size_t>(m.problem.ny + 2), cudaMemcpyDeviceToHost),
                          m.context("copying the iterate back"));
    return grid;
  });
}

}  // namespace hetstencil
