// What the steps of a calibration share (model/calibrate.cpp, cpu_curves.cpp):
// the budget they take their time from, the devices and timing jobs they
// measure, and the profile entries they fill.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/log.hpp"
#include "devices/device.hpp"
#include "devices/device_map.hpp"
#include "model/calibrate.hpp"

namespace hetstencil {

/// The seconds since `t`.
double seconds_since(std::chrono::steady_clock::time_point t);

/// The time a calibration may take, and where it went.
class Budget {
 public:
  explicit Budget(double seconds) : start_(std::chrono::steady_clock::now()), seconds_(seconds) {}
  bool allows(double more) const { return seconds_since(start_) + more <= seconds_; }
  double used() const { return seconds_since(start_); }
  double left() const { return seconds_ - used(); }
  /// Logs (with -v) where the time goes: `what` took the time since the last mark.
  void mark(const std::string& what) {
    const double now = used();
    log::debug("calibration: {} took {:.2f} s, {:.2f} s in all", what, now - marked_, now);
    marked_ = now;
  }
  /// The same budget less `reserve` seconds kept for what comes after.
  Budget leaving(double reserve) const {
    Budget b = *this;
    b.seconds_ -= reserve;
    return b;
  }

 private:
  std::chrono::steady_clock::time_point start_;
  double seconds_;
  double marked_ = 0.0;
};

/// The device's entry in the profile: under what it is (device_key), named as in this run.
DeviceProfile& entry_of(Profile& profile, const DeviceInfo& info);
/// The device for `spec`, from its backend, its threads spinning as a device of its size alone would.
std::unique_ptr<Device> device_for(const Topology& topology, const DeviceSpec& spec);
/// The tuned parameters of `device` for `job` that it takes (o.tuned's).
Tuning tuning_of(const CalibrationOptions& o, const Device& device, const StencilJob& job);
/// A timing job of `units` units (rows, or planes of o.ny rows) of the stencil.
StencilJob timing_job(const CalibrationOptions& o, Precision precision, std::int64_t units);
/// The problem whose curves `o` measures (its key: stencil_rate_key).
Problem problem_of(const CalibrationOptions& o, Precision precision);
/// Rows doubling from 4 up to `most`, and any `extra` counts below it.
std::vector<std::int64_t> row_counts(std::int64_t most, const std::vector<std::int64_t>& extra = {});
/// The row count halfway between the two neighbouring points of a curve
/// (`rows` ascending, `seconds` each one's time) where the upper one's time
/// exceeds the lower one's pace a row most, in seconds, by more than
/// kEdgePaceRise of it and kEdgeLeastExcess of the slowest point's time:
/// where a cache's edge lies between them, and the interpolation smears its
/// step; 0 where no rise is that large or the two are too close to split
/// (kEdgeLeastSpan, or no row count between them). Times that are not
/// positive and finite are points not measured.
std::int64_t edge_point(const std::vector<std::int64_t>& rows, const std::vector<double>& seconds);
/// `seconds` (each point's time, `rows` ascending) with every point that
/// edge_point added no faster a row than the point below the step it split
/// (`below`: the added point's rows and that point's rows). Past the sweep's
/// fixed costs, where edge_point splits, more rows never sweep faster a row
/// than fewer: such a point sampled a fast moment of the host, and a share
/// priced by it sweeps slower than predicted (docs/model.md, "Where the curve
/// steps": 1536 rows of 8192 doubles at 0.63 us a row beside 0.89 for 1024,
/// and a share of 1585 rows 23% slower than its prediction).
std::vector<double> no_faster_than_below(const std::vector<std::int64_t>& rows, std::vector<double> seconds,
                                         const std::map<std::int64_t, std::int64_t>& below);
/// The least rise of the time a row that edge_point splits: past the spread
/// of one point measured twice (a few percent), short of the cache's step
/// (20% and more on the H200 guests).
inline constexpr double kEdgePaceRise = 0.08;
/// The least rise edge_point splits, of the slowest point's time: less is
/// the spread of the few rows' short sweeps (on an H200 guest, 512 rows of
/// 8192 doubles 9% slower a row than 256, 0.4% of 8192 rows' time), and
/// changes a split of the whole grid by too little to matter.
inline constexpr double kEdgeLeastExcess = 0.01;
/// The least ratio of two neighbours' rows that edge_point splits.
inline constexpr double kEdgeLeastSpan = 1.125;

}  // namespace hetstencil
