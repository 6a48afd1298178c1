// GPU sweep benchmark: a sweep beside a device-to-device copy of the same bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "hetstencil/problem.hpp"

namespace hetstencil {

struct GpuSweepTiming {
  Precision precision = Precision::Float;
  std::int64_t n = 0;            ///< nx = ny
  bool skipped = false;          ///< not enough GPU memory
  double sweep_s = 0.0;          ///< one sweep, median
  double sweep_residual_s = 0.0; ///< one sweep that also folds the residual, median
  double copy_s = 0.0;           ///< cudaMemcpy of nx*ny values, device to device, median
};

/// Times sweeps of n x n grids on CUDA device `gpu` (random data, warm-up, median of `repetitions`).
std::vector<GpuSweepTiming> bench_gpu_sweeps(int gpu, const std::vector<std::int64_t>& sizes,
                                             const std::vector<Precision>& precisions, int repetitions);

}  // namespace hetstencil

namespace hetstencil {

/// Keeps a GPU sweeping an n x n float grid, from a host thread bound to
/// host_cpus that waits as a GPU device's would (spinning on a core of its own,
/// blocking otherwise), until destroyed: the load beside which CPU devices are
/// measured.
class GpuLoad {
 public:
  GpuLoad(int gpu, std::vector<int> host_cpus, bool own_core, std::int64_t n);
  ~GpuLoad();
  GpuLoad(const GpuLoad&) = delete;
  GpuLoad& operator=(const GpuLoad&) = delete;
  /// Sweeps completed so far.
  std::int64_t sweeps() const;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace hetstencil
