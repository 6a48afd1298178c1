// What a CUDA GPU device runs a stencil other than poisson5 with (poisson5's
// tuned kernels stay in cuda_device.cu): the device hands such a job's slab,
// its runs and its measurements to this runner. Declared without CUDA types,
// as cuda_device.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "devices/device.hpp"

namespace hetstencil {

/// The Device calls of a job whose stencil is not poisson5, in the sync and
/// blocked variants (the others refused, naming the stencil). The GPU device
/// keeps what does not depend on the stencil: its memory, links and load.
class CudaStencilRunner {
 public:
  virtual ~CudaStencilRunner() = default;
  virtual std::uint64_t slab_bytes(const StencilJob& job, RowRange rows) const = 0;
  virtual void attach(const StencilJob& job, RowRange rows) = 0;
  virtual HaloRows& halo() = 0;
  /// Binds the calling thread near the GPU, then runs the job's stop rule.
  virtual void run(Endpoint& port) = 0;
  virtual void detach() = 0;
  virtual DeviceTimes times() const = 0;
  /// Sweeps of r units of job's shape for each r in `rows`, and with `checks`
  /// what a check adds.
  virtual std::vector<RateSamples> measure_sweeps(const StencilJob& job, const std::vector<std::int64_t>& rows,
                                                  int repetitions, bool checks) = 0;
  /// A sweep of job's whole grid beside a copy of the same bytes.
  virtual SweepVsCopy sweep_vs_copy(const StencilJob& job, int repetitions) = 0;
};

/// The runner on CUDA GPU `gpu` whose host thread binds to `host_cpus`; `name`
/// (the device's) names it in messages.
std::unique_ptr<CudaStencilRunner> make_cuda_stencil_runner(const std::string& name, int gpu,
                                                            const std::vector<int>& host_cpus);

}  // namespace hetstencil
