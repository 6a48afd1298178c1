// What the steps of a calibration share (model/calibrate.cpp, cpu_curves.cpp):
// the budget they take their time from, the devices and timing jobs they
// measure, and the profile entries they fill.
#pragma once

#include <chrono>
#include <cstdint>
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

}  // namespace hetstencil
