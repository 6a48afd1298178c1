/// \file
/// Benchmarks of the devices, measured side by side in one run (what
/// `hetstencil bench` prints): a sweep beside a plain copy of the same bytes, and
/// the GPU variants stepped to another run's accuracy.
///
/// ```cpp
/// hetstencil::bench_cpu_sweeps({}, 4096, 4096, {hetstencil::Precision::Float}, 20, false,
///                              [](const hetstencil::SweepTiming& t) { /* print t */ });
/// ```
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hetstencil/export.hpp"
#include "hetstencil/plan.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/report.hpp"
#include "hetstencil/runtime.hpp"

namespace hetstencil {

/// One device's sweep beside a plain copy of the same bytes (one value read and
/// one written per cell). Thread safety: a value.
struct SweepTiming {
  std::string device;  ///< its name: "cpu0", "gpu1"
  int threads = 0;     ///< its worker threads (CPU) or host threads (GPU)
  Precision precision = Precision::Float;  ///< of the values swept
  std::int64_t nx = 0;                     ///< interior points of a row swept
  std::int64_t ny = 0;                     ///< rows swept
  bool skipped = false;           ///< not enough memory on the device
  bool streaming_stores = false;  ///< the sweep's stores bypass the cache
  double sweep_s = 0.0;           ///< one sweep, median
  double checked_sweep_s = 0.0;   ///< one sweep that also folds the residual, median (GPU)
  double copy_s = 0.0;            ///< the copy, median
  double beside_sweep_s = 0.0;    ///< the sweep again while every GPU sweeps (0: not measured)
  std::int64_t load_sweeps = 0;   ///< sweeps the GPUs made meanwhile
};

/// Called with each timing as soon as it is measured, on the caller's thread.
using SweepTimingCallback = std::function<void(const SweepTiming&)>;

/// Each CPU device of `machine`, in each precision: a sweep of its ny x nx slab
/// beside a copy by the same threads on the same NUMA node, medians of
/// `repetitions`; with `beside_gpus`,
/// again while every GPU of this machine sweeps, each GPU's host thread on the
/// core it takes in a solve. `each` gets every timing as soon as it is measured.
HETSTENCIL_API void bench_cpu_sweeps(const RuntimeOptions& machine, std::int64_t nx, std::int64_t ny,
                      const std::vector<Precision>& precisions, int repetitions, bool beside_gpus,
                      const SweepTimingCallback& each);

/// Each GPU of this machine named by `devices` ("" or "all": every one), for each
/// precision and each n of `sizes`: a sweep of n x n random values beside a
/// device-to-device copy of the same bytes, medians of `repetitions`.
HETSTENCIL_API void bench_gpu_sweeps(const std::string& devices, const std::vector<std::int64_t>& sizes,
                      const std::vector<Precision>& precisions, int repetitions, const SweepTimingCallback& each);

/// One problem's grid on one GPU, advanced by any variant (the original study's
/// chapter V): the iterate stays on the GPU between calls, so that a benchmark
/// can step a variant until it is as accurate as another run.
/// Thread safety: one thread at a time.
class HETSTENCIL_API VariantSolver {
 public:
  /// Copies the problem's initial iterate to GPU `gpu` of this machine; throws
  /// NotCompiled where this build has no GPU backend.
  VariantSolver(int gpu, const Problem& problem);
  /// Frees the GPU's memory.
  ~VariantSolver();
  /// Takes over the GPU's grid.
  VariantSolver(VariantSolver&& other) noexcept;
  /// Takes over the GPU's grid.
  VariantSolver& operator=(VariantSolver&& other) noexcept;

  /// Back to the initial iterate.
  void reset();
  /// Advances by `iterations` sweeps of the variant; returns the GPU time they took.
  double advance(const VariantChoice& choice, std::int64_t iterations);
  /// max |u - other| / max |other| over the grid, both on the same GPU.
  double max_relative_error(const VariantSolver& other) const;
  /// The current iterate, boundary included.
  Solution download() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hetstencil
