// GPU sweep benchmark: a sweep beside a device-to-device copy of the same bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "hetstencil/plan.hpp"
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

namespace hetstencil {

struct GpuRateSample {
  std::int64_t rows = 0;
  double sweep_s = 0.0;          ///< one sweep
  double checked_sweep_s = 0.0;  ///< one sweep that also folds the residual
};

/// Robust seconds of one sweep of r rows of width nx on CUDA device `gpu`, for
/// each r in `rows` (one slab, sized for the largest; random data); for a tile
/// variant, of one of the sweeps of its pass.
std::vector<GpuRateSample> gpu_rate_samples(int gpu, Precision precision, std::int64_t nx,
                                            const std::vector<std::int64_t>& rows, int repetitions,
                                            const VariantChoice& variant = {});

/// (bytes, seconds) samples of the copies a GPU device makes, timed on the host
/// as the halo exchange sees them (call, copy and synchronization).
struct GpuLinkSamples {
  std::vector<std::pair<double, double>> to_host;    ///< an edge row to pinned host memory
  std::vector<std::pair<double, double>> from_host;  ///< a ghost row from pageable host memory (a CPU slab)
  std::vector<std::vector<std::pair<double, double>>> to_peer;  ///< a row into each GPU of `peers`
};

GpuLinkSamples gpu_link_samples(int gpu, const std::vector<int>& peers, const std::vector<double>& row_sizes,
                                int repetitions);

}  // namespace hetstencil
