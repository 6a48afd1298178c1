/// \file
/// Benchmarks of the devices, measured side by side in one run (what
/// `hetstencil bench` prints): a sweep beside a plain copy of the same bytes, and
/// the GPU variants stepped to another run's accuracy.
///
/// ```cpp
/// hetstencil::bench_cpu_sweeps({}, 4096, 4096, {hetstencil::Precision::Float}, 20, false,
///                              [](const hetstencil::SweepTiming& t) { /* print t */ });
/// hetstencil::StencilBenchOptions o;
/// o.stencils = {hetstencil::Stencil::builtin("box27")};
/// o.nx = o.ny = o.nz = 256;
/// hetstencil::bench_stencil_sweeps({}, o, [](const hetstencil::StencilTiming& t) { /* print t */ });
/// ```
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hetstencil/export.hpp"
#include "hetstencil/plan.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/report.hpp"
#include "hetstencil/runtime.hpp"
#include "hetstencil/stencil.hpp"

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

/// One device's sweep of one stencil over its whole grid beside a plain copy of
/// the same units by the same device, and the profile's prediction of that
/// sweep. Thread safety: a value.
struct StencilTiming {
  std::string device;   ///< its name: "cpu0", "gpu1"
  int threads = 0;      ///< its worker threads (CPU) or host threads (GPU)
  std::string stencil;  ///< the stencil's name
  int dimension = 2;    ///< the stencil's: 2 or 3
  Precision precision = Precision::Float;  ///< of the values swept
  std::int64_t nx = 0;  ///< interior points of a row
  std::int64_t ny = 0;  ///< interior rows (of a plane, in 3-D)
  std::int64_t nz = 0;  ///< interior planes; 0 in 2-D
  std::string skipped;  ///< why there is no measurement ("" where there is one): not enough memory
  bool streaming_stores = false;  ///< the sweep's stores bypass the cache
  double sweep_s = 0.0;           ///< one sweep, median
  double copy_s = 0.0;            ///< the copy, median
  double predicted_s = 0.0;  ///< one sweep as the profile's curve of this stencil predicts it (0: no such curve)
  /// The kernel parameters the sweep ran with, as the profile's tuning (or a
  /// set of StencilBenchOptions::tunings) gives them ("chunk_values=512
  /// threads=1"); "" where nothing is tuned.
  std::string tuning;
  /// Where `tuning` is set: one sweep at the device's default parameters,
  /// median (0 where nothing is tuned: sweep_s ran at the defaults).
  double default_s = 0.0;

  /// Interior cells swept.
  double cells() const {
    return static_cast<double>(nx) * static_cast<double>(ny) * static_cast<double>(nz > 0 ? nz : 1);
  }
  /// Bytes a sweep moves as counted for GB/s: one value read and one written per cell.
  double bytes() const { return 2.0 * static_cast<double>(value_bytes(precision)) * cells(); }
};

/// What bench_stencil_sweeps measures.
struct StencilBenchOptions {
  std::vector<Stencil> stencils;  ///< empty: every built-in (builtin_stencil_names())
  std::vector<Precision> precisions{Precision::Float, Precision::Double};  ///< each of these
  /// Grid sizes: 0 takes the size that fills each device (half its free memory
  /// for the grids it holds: nx = ny in 2-D, n^3 in 3-D); nz only counts in 3-D.
  std::int64_t nx = 0;
  std::int64_t ny = 0;  ///< see nx
  std::int64_t nz = 0;  ///< see nx
  int repetitions = 10;  ///< timed sweeps and copies after a warm-up of each (the median is kept)
  /// The profile whose curves predict the sweeps ("" this machine's default,
  /// when there is one): a device without a curve of the stencil there gets no prediction.
  std::string profile;
  /// When set, told what is measured next (a device's grid can take seconds to fill).
  std::function<void(const std::string&)> progress;
  /// Kernel parameter sets to measure in place of the profile's tuning, each
  /// beside the device's defaults ({{"warps", 2}, {"lines", 4}}: the names and
  /// values `hetstencil tune` lists); empty: the profile's. A device that does
  /// not take a set (a name it lacks, a value it does not list) has that row
  /// skipped, with the reason.
  std::vector<std::map<std::string, int>> tunings;
};

/// Every device of `machine` (CPU devices and GPUs, chosen by machine.devices),
/// for each stencil and precision of `options`: one sweep of the stencil over
/// the whole grid beside a copy of the same bytes by the same device
/// (StencilTiming), with the kernel parameters the profile's tuning gives the
/// device (`hetstencil tune`) and, where they are not the defaults, again at
/// the defaults; with options.tunings, a timing for each set instead. A device
/// with no kernel for a stencil, or no memory for its grid, is reported
/// skipped with the reason. `each` gets every timing as soon
/// as it is measured, on the caller's thread. Throws InvalidArgument for an
/// invalid stencil or sizes.
HETSTENCIL_API void bench_stencil_sweeps(const RuntimeOptions& machine, const StencilBenchOptions& options,
                                         const std::function<void(const StencilTiming&)>& each);

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
