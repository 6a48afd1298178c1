// What a split will cost, from a profile: per device and in total.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hetstencil/device_info.hpp"
#include "hetstencil/plan.hpp"
#include "hetstencil/problem.hpp"
#include "model/profile.hpp"

namespace hetstencil {

/// A device and its rows, in row order (neighbours exchange ghost rows).
struct PlannedDevice {
  std::string name;
  DeviceKind kind = DeviceKind::Cpu;
  std::int64_t rows = 0;
  double sized_slower = 1.0;  ///< a planner sized its share as if it swept this much slower than its curve
};

/// The model of one device order for one problem: curves and links are looked
/// up once, so that a planner can price many row counts quickly.
class SplitModel {
 public:
  /// `devices`' rows are ignored; throws InvalidArgument when a device has no
  /// rate curve for the precision (and for a GPU, the variant). `cautious`:
  /// CPU devices' sweeps priced as slow as they swept in solves beside GPUs
  /// (their profile's slowdown_beside_gpus), as a planner sizes them there.
  SplitModel(const Profile& profile, const std::vector<PlannedDevice>& devices, Precision precision, std::int64_t nx,
             const StopRule& stop, const VariantChoice& variant = {}, bool cautious = false);

  std::size_t size() const { return entries_.size(); }
  /// The fewest rows a device may have: a blocked split's depth (its
  /// neighbours' ghost rows come from it), else 1.
  std::int64_t min_rows() const { return entries_.size() > 1 ? depth() : 1; }
  /// Device k with `rows` rows (its neighbours as in the order).
  DevicePrediction device(std::size_t k, std::int64_t rows) const;
  /// The whole run with these rows per device, in order.
  Prediction predict(const std::vector<std::int64_t>& rows) const;
  /// How much slower than its curve device k's sweeps are priced.
  double priced_slower(std::size_t k) const { return entries_[k].priced_slower; }

 private:
  struct Entry {
    PlannedDevice device;
    RateCurve rate;
    std::optional<RateCurve> check;
    std::optional<RateCurve> rest;  // DeviceProfile::rest: beside the others sweeping the rest of rest_rows
    std::int64_t rest_rows = 0;
    double priced_slower = 1.0;
    double step = 0.0;        // its own loop
    double overhead = 0.0;    // a GPU's: an iteration of a full slab beyond its sweep
    double fixed = 0.0;       // a solve's time besides its iterations and checks
    double exchange = 0.0;    // its ghost rows' trips (and its edges' to host neighbours)
    double to_next = 0.0;     // a row's trip to the next device, and back
    double from_next = 0.0;
    TransferCurve setup_in, setup_out;
  };
  // CPU devices calibrated together share the memory's bandwidth and cache:
  // each one's sweep is priced by what the others sweep at the same time,
  // between its curve (the others sweeping as many rows) and its rest curve
  // (the others sweeping the rest of rest_rows) (see docs/model.md).
  void share_memory(std::vector<DevicePrediction>& devices) const;
  // Sweeps between exchanges, and rows a side exchanged.
  std::int64_t depth() const { return halo_depth(variant_); }
  // Device k's rows, and the ghost rows but the outermost on a side with a neighbour.
  std::int64_t swept_rows(std::size_t k, std::int64_t rows) const;
  // The iteration of devices priced so: the slowest device's, or a chain of
  // neighbours handing their edges over, where that is longer.
  double iteration_s(const std::vector<DevicePrediction>& devices, const std::vector<std::int64_t>& rows) const;
  // A CPU device whose rows its curve sweeps kCacheStep times faster a row
  // than more rows (they fit a cache) gets the pace past that cache too
  // (DevicePrediction::uncached_compute_s), and the run its iteration at it.
  void price_uncached(const std::vector<std::int64_t>& rows, Prediction& out) const;

  std::vector<Entry> entries_;
  VariantChoice variant_;
  double row_bytes_ = 0.0;
  std::int64_t iterations_ = 0;
  std::int64_t checks_ = 0;
  std::vector<std::string> notes_;
};

/// The residual checks of a run of `stop` that ends after `iterations`
/// iterations: the last iterate's and, with a tolerance, iterate 0's and every
/// check_every-th. Counted arithmetically (no work per iteration); saturates at
/// INT64_MAX.
std::int64_t residual_checks(const StopRule& stop, std::int64_t iterations);

/// A run's time: set-up + fixed + iterations x iteration + checks x check +
/// tear-down (Prediction::total_s, from its other figures).
double run_total_s(const Prediction& p);

/// The whole run of `stop` (all max_iterations: a tolerance may end it
/// sooner). A CPU device exchanges after its sweep (the exchange is exposed); a
/// GPU sweeps its edge rows first and exchanges while the interior runs, so only
/// the excess over the interior sweep is exposed, besides its overhead (what
/// an iteration of a full slab costs beyond its sweep), its loop a floor. A
/// blocked split sweeps its ghost zones too (K - 1 rows a side with a
/// neighbour) and exchanges K rows every K iterations, exposed. A device with
/// 0 rows is left out. Throws InvalidArgument when a device has no rate curve
/// for the precision, or negative rows, or when no device has rows.
Prediction predict(const Profile& profile, const std::vector<PlannedDevice>& devices, Precision precision,
                   std::int64_t nx, const StopRule& stop, const VariantChoice& variant = {});

}  // namespace hetstencil
