// What the CUDA backend measures for calibration and the benchmarks.
#pragma once

#include <cstdint>
#include <vector>

#include "devices/device.hpp"
#include "hetstencil/variant.hpp"
#include "hetstencil/problem.hpp"

namespace hetstencil {

/// One sweep of nx x ny random values on CUDA device `gpu` beside a
/// device-to-device copy of the same bytes (warm-up, median of `repetitions`);
/// skipped where the GPU's memory is short.
SweepVsCopy bench_gpu_sweep(int gpu, Precision precision, std::int64_t nx, std::int64_t ny, int repetitions);

}  // namespace hetstencil

namespace hetstencil {

/// Keeps a GPU sweeping an n x n float grid, from a host thread bound to
/// host_cpus that waits as a GPU device's would (spinning on a core of its own,
/// blocking otherwise), until destroyed: the load beside which CPU devices are
/// measured.
class GpuLoad final : public DeviceLoad {
 public:
  GpuLoad(int gpu, std::vector<int> host_cpus, bool own_core, std::int64_t n);
  ~GpuLoad() override;
  GpuLoad(const GpuLoad&) = delete;
  GpuLoad& operator=(const GpuLoad&) = delete;
  std::int64_t sweeps() const override;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace hetstencil

namespace hetstencil {

/// One robust figure of a sweep of `rows` from its timed sweeps `plain`, and
/// what a check adds from `checked`: sweeps that fold the residual, none
/// where checks are not measured.
RateSamples gpu_rate_sample(std::int64_t rows, const std::vector<double>& plain, const std::vector<double>& checked);

/// Robust seconds of one sweep of r rows of width nx on CUDA device `gpu`, for
/// each r in `rows` (one slab, sized for the largest; random data), and with
/// `checks` what a residual check adds; for a tile variant, of one of the
/// sweeps of its pass.
std::vector<RateSamples> gpu_rate_samples(int gpu, Precision precision, std::int64_t nx,
                                          const std::vector<std::int64_t>& rows, int repetitions, bool checks,
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
