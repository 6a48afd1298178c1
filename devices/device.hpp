// The Device interface: one CPU socket or one GPU that owns a slab of rows.
//
// A device owns interior rows [first, first + count) of the grid plus ghost rows
// above and below: one each for a sync solve; K on a side with a neighbour for
// a blocked one, which sweeps K times between exchanges (the ghost zone shrinks
// by a row a sweep, so the owned rows stay exact) and trades K rows at a time.
// "Rows" are the units of the split axis (StencilJob): planes in 3-D, and a
// stencil of radius r needs r of them per sweep where this says one.
// It runs the iterations itself (its own threads, its own overlap of exchange
// and compute) and talks to its neighbours only through its Endpoint of the
// solve's Transport (devices/transport/), which moves rows between their
// memories. Devices never see each other's type or memory: the algorithm is the
// same for a CPU socket and a GPU.
#pragma once

#include <cstdint>
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "devices/memory.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/device_info.hpp"
#include "hetstencil/variant.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/stencil.hpp"
#include "hetstencil/progress.hpp"

namespace hetstencil {

class Endpoint;
class HaloRows;

/// Rows above (Top, smaller row index) or below (Bottom) a slab.
enum class Side { Top = 0, Bottom = 1 };
inline Side opposite(Side s) { return s == Side::Top ? Side::Bottom : Side::Top; }

/// Interior rows [first, first + count), 1-based (row 0 is the boundary).
struct RowRange {
  std::int64_t first = 1;
  std::int64_t count = 0;
  std::int64_t end() const { return first + count; }
};

/// A kernel parameter a device can tune for a job (Device::tunables): its
/// name, the values it may take, and the one it takes untuned. No value
/// changes a bit of a result, only how fast it comes.
struct Tunable {
  std::string name;
  std::vector<int> values;
  int default_value = 0;
  /// Whether its values pick different kernels, each with its own best values
  /// of the other parameters: the tuner searches from each of them.
  bool family = false;
  /// The values (any of them) other parameters must have for this one to
  /// change the sweep (empty: any): elsewhere the tuner leaves it at what it
  /// is, and keeps no value of it.
  std::map<std::string, std::vector<int>> only_with = {};
};

/// Kernel parameter values by Tunable::name; a parameter not named takes its default.
using Tuning = std::map<std::string, int>;

/// The value `tuning` gives `parameter`, else its default.
inline int tuned_value(const Tuning& tuning, const Tunable& parameter) {
  const auto it = tuning.find(parameter.name);
  return it == tuning.end() ? parameter.default_value : it->second;
}

/// The value `tuning` gives the parameter of `tunables` called `name`, else
/// its default. A device reads only what it lists: a name it does not list is
/// a bug (std::logic_error).
inline int tuned_value(const Tuning& tuning, const std::vector<Tunable>& tunables, const std::string& name) {
  const auto it = std::find_if(tunables.begin(), tunables.end(), [&](const Tunable& t) { return t.name == name; });
  if (it == tunables.end()) throw std::logic_error("no kernel parameter '" + name + "' is listed for this job");
  return tuned_value(tuning, *it);
}

/// Throws InvalidArgument, naming `device`, the parameter and what it may
/// take, unless every value of `tuning` is one of `tunables`' values.
inline void check_tuning(const std::string& device, const std::vector<Tunable>& tunables, const Tuning& tuning) {
  for (const auto& entry : tuning) {
    const std::string& name = entry.first;
    const int value = entry.second;
    const auto it = std::find_if(tunables.begin(), tunables.end(), [&](const Tunable& t) { return t.name == name; });
    if (it == tunables.end()) {
      std::string names;
      for (const Tunable& t : tunables) names += (names.empty() ? "" : ", ") + t.name;
      HETSTENCIL_THROW(InvalidArgument, device + " has no kernel parameter '" + name + "' for this job (it tunes: " +
                                            (names.empty() ? "none" : names) + ")");
    }
    if (std::find(it->values.begin(), it->values.end(), value) == it->values.end()) {
      std::string values;
      for (int v : it->values) values += (values.empty() ? "" : ", ") + std::to_string(v);
      HETSTENCIL_THROW(InvalidArgument, device + ": the kernel parameter '" + name + "' takes " + values + ", not " +
                                            std::to_string(value));
    }
  }
}

/// What a device needs to know of the problem, independent of precision: the
/// pointers refer to values of the problem's precision. The grid is split
/// along its slowest axis into units (rows in 2-D, planes in 3-D): a device
/// owns units, and its ghost units are the stencil's radius deep per sweep
/// between exchanges. With poisson5 a unit is a row of nx + 2 values and the
/// ghosts one row a sweep.
struct StencilJob {
  Precision precision = Precision::Double;
  std::int64_t nx = 0;
  std::int64_t ny = 0;
  std::int64_t nz = 0;            ///< interior planes of a 3-D grid; 0 in 2-D
  Stencil stencil = Stencil::builtin("poisson5");
  bool poisson5 = true;           ///< the stencil is poisson5 (by value): the tuned kernels run it
  const void* initial = nullptr;  ///< shape().values() initial iterate, dense
  void* result = nullptr;         ///< shape().values() solution, filled by detach(); none when null
  const void* h2f = nullptr;      ///< shape().values() s*f, or nullptr when the source is the spike
  bool grid_source = false;       ///< the right-hand side is a grid (h2f), even before h2f is set
  /// A variable stencil's weights per cell (core/source_term.hpp CoefficientTerms):
  /// stencil.points.size() + 1 grids of shape().values() (a_k, then D), or nullptr.
  const void* coefficients = nullptr;
  std::int64_t spike_row = -1;    ///< the spike's cell (s*f = 1 there), -1 when none
  std::int64_t spike_col = -1;
  std::int64_t spike_index = -1;  ///< the spike's index in the grid's values, -1 when none
  StopRule stop;
  VariantChoice variant;  ///< how a GPU sweeps; anything but sync runs on a single GPU alone
  /// The kernel parameters of the device the job is attached to (its
  /// tunables()); empty: the defaults. Each device of a solve gets its own.
  Tuning tuning;

  /// The grid's sizes, its ring as deep as the stencil's radius.
  GridShape shape() const { return GridShape{stencil.dimension == 3 ? nz : 0, ny, nx, stencil.radius()}; }
  std::int64_t cols() const { return nx + 2 * stencil.radius(); }
  std::size_t row_bytes() const { return hetstencil::row_bytes(nx, precision); }
  /// Interior units of the split axis: ny rows in 2-D, nz planes in 3-D.
  std::int64_t units() const { return stencil.dimension == 3 ? nz : ny; }
  /// Values of one unit, its ring included: a row, or a plane of rows.
  std::int64_t unit_values() const { return stencil.dimension == 3 ? shape().rows() * cols() : cols(); }
  /// Bytes of one unit, dense as in the grid.
  std::size_t unit_bytes() const { return static_cast<std::size_t>(unit_values()) * value_bytes(precision); }
  /// Lines of one unit, as the transport moves it: a plane's rows in 3-D (a
  /// device may keep them a pitch apart), the row itself in 2-D.
  std::int64_t unit_lines() const { return stencil.dimension == 3 ? shape().rows() : 1; }
  /// Bytes of one of those lines.
  std::size_t line_bytes() const { return unit_bytes() / static_cast<std::size_t>(unit_lines()); }
  /// Sweeps between exchanges.
  int halo_depth() const { return hetstencil::halo_depth(variant); }
  /// Ghost units on a side with a neighbour: the stencil's radius per sweep
  /// between exchanges; what an exchange moves.
  std::int64_t ghost_units() const { return static_cast<std::int64_t>(halo_depth()) * stencil.radius(); }
  /// Where the round of sweeps from iterate t ends: halo_depth() sweeps later,
  /// or sooner at a residual check (rounds never step over one).
  std::int64_t round_end(std::int64_t t) const { return std::min(t + halo_depth(), stop.next_check(t)); }
  /// Ghost units above (Top) or below a slab of these units: ghost_units()
  /// where a neighbour owns them, the boundary ring's radius at the grid's edge.
  std::int64_t ghost_rows(Side side, RowRange rows) const {
    const bool edge = side == Side::Top ? rows.first == 1 : rows.end() == units() + 1;
    return edge ? stencil.radius() : ghost_units();
  }
};

/// Per-device timings of the last run.
struct DeviceTimes {
  double compute_s = 0.0;
  double exchange_s = 0.0;
  double check_s = 0.0;
  double total_s = 0.0;
  double compute_p90_s = 0.0;  // per iteration, over its rounds; 0 where not measured
};

class Device;

// What calibration and `hetstencil bench` measure on any device.

/// Samples of sweeps of one row count; robust_time() of each list is its figure.
struct RateSamples {
  std::int64_t rows = 0;
  std::vector<double> sweep_s;  ///< one sweep
  std::vector<double> check_s;  ///< what a residual check adds to an iteration (empty where not asked for)
};

/// (bytes, seconds) of rows sent from one device to another as the halo exchange sends them.
struct LinkSamples {
  const Device* from = nullptr;
  const Device* to = nullptr;
  std::vector<std::pair<double, double>> samples;
};

/// A sweep beside a plain copy of the same bytes (one value read and one written per cell).
struct SweepVsCopy {
  bool skipped = false;          ///< not enough memory on the device
  double sweep_s = 0.0;          ///< median
  double checked_sweep_s = 0.0;  ///< a sweep that also folds the residual, median (0: not measured)
  double copy_s = 0.0;           ///< median
  bool streaming_stores = false; ///< the sweep's stores bypass the cache
};

/// Work a device keeps doing in the background, as in a solve, until destroyed.
class DeviceLoad {
 public:
  virtual ~DeviceLoad() = default;
  /// Sweeps completed so far.
  virtual std::int64_t sweeps() const = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;

  /// The bytes attach(job, rows) will allocate, and the memory they come from:
  /// checked before anything is allocated (check_memory).
  virtual std::uint64_t slab_bytes(const StencilJob& job, RowRange rows) const = 0;
  virtual MemoryFigure memory() const = 0;

  /// Allocates the slab for `rows` and copies the initial values in, ghost rows
  /// included (the set-up transfer). The job outlives the attachment.
  virtual void attach(const StencilJob& job, RowRange rows) = 0;
  /// Where the attached slab keeps the rows its transport moves, and how they
  /// are copied in and out; valid until detach().
  virtual HaloRows& halo() = 0;
  /// Runs the job's stop rule, exchanging ghost rows through `port`.
  virtual void run(Endpoint& port) = 0;
  /// Copies the owned rows of the final iterate into job.result (unless it is
  /// null); frees the slab.
  virtual void detach() = 0;

  virtual DeviceTimes times() const = 0;

  /// The kernel parameters this device can tune for `job` (its stencil,
  /// precision and sizes), which attach() then reads from job.tuning,
  /// refusing values not listed (check_tuning). None by default.
  virtual std::vector<Tunable> tunables(const StencilJob& job) const {
    (void)job;
    return {};
  }
  /// Makes ready, ahead of their timing, what sweeps of `job` with each of
  /// `tunings` need that takes long to make: a GPU compiles their generated
  /// kernels side by side on the host's cores. Nothing by default; a sweep
  /// makes what is not ready itself.
  virtual void prepare_sweeps(const StencilJob& job, const std::vector<Tuning>& tunings) const {
    (void)job;
    (void)tunings;
  }

  // Measurement: calibration and the benchmarks measure every device through
  // these. A device whose slab lives in host memory (DeviceKind::Cpu) is
  // measured on its attached slab, together with the other such devices as in a
  // solve; a device with memory of its own (DeviceKind::Gpu) alone, on buffers
  // of its own.

  /// Sweeps of width job.nx in job.precision, as job.variant sweeps, for each
  /// count in `rows`: `repetitions` samples after a warm-up (a device may reduce
  /// them to one robust figure itself), and with `checks` what a residual check
  /// adds. A CPU device sweeps the slab attached with `job` (rows counted from
  /// its first) and calls `before_each`, when given, from one of its threads
  /// before each sweep, the warm-up too, while its others wait: to start several
  /// devices' sweeps together.
  virtual std::vector<RateSamples> measure_sweeps(const StencilJob& job, const std::vector<std::int64_t>& rows,
                                                  int repetitions, bool checks,
                                                  const std::function<void()>& before_each = {}) = 0;
  /// The links between this device and `others` that it measures, rows of each
  /// of `sizes` bytes: a CPU device its rows to other CPU devices, one link at a
  /// time; a GPU its rows to and from host memory (every CPU device) and to
  /// other GPUs, meant to be measured with every GPU copying at once.
  virtual std::vector<LinkSamples> measure_links(const std::vector<const Device*>& others,
                                                 const std::vector<double>& sizes, int repetitions) const = 0;
  /// Keeps the device sweeping in the background as in a solve (its host
  /// thread waiting as it would), once the load is on; nullptr for a device
  /// whose load is not measured apart (the CPU devices are measured together).
  virtual std::unique_ptr<DeviceLoad> start_load() const { return nullptr; }
  /// A sweep beside a copy of the same bytes, median of `repetitions`: a CPU
  /// device on the slab attached with `job`, a GPU on job.nx x job.ny values of
  /// its own (skipped where its memory is short).
  virtual SweepVsCopy sweep_vs_copy(const StencilJob& job, int repetitions) = 0;
};

}  // namespace hetstencil
