/// \file
/// A plan: which device owns which interior rows, what the model predicts for
/// it, and which devices it leaves out and why.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hetstencil/export.hpp"
#include "hetstencil/device_info.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/variant.hpp"

namespace hetstencil {

/// Interior rows [first_row, first_row + rows) of the grid (1-based: row 0 is the
/// boundary) given to device `device` (an index into Runtime::devices(), or
/// into ProfileModel::devices() for a plan made from a profile).
struct Assignment {
  std::size_t device = 0;     ///< index into the devices planned for
  std::int64_t first_row = 1;  ///< its first interior row (1-based)
  std::int64_t rows = 0;       ///< how many rows it owns
};

/// What the model predicts for one part of a plan (seconds).
struct DevicePrediction {
  std::string name;       ///< the device's name ("cpu0", "gpu1")
  std::int64_t rows = 0;  ///< rows it owns
  double compute_s = 0.0;    ///< one sweep of its rows
  double exchange_s = 0.0;   ///< its ghost rows' trips from the neighbours (and its edges' to host neighbours)
  double exposed_s = 0.0;    ///< the part of the exchange not hidden behind its interior sweep
  double iteration_s = 0.0;  ///< compute + exposed
  double check_s = 0.0;      ///< what one residual check adds
  double setup_s = 0.0;      ///< attaching its slab (allocation, first touch or the copy to a GPU)
  double teardown_s = 0.0;   ///< detaching it (the copy back into the solution)
  double sized_slower = 1.0;  ///< its rows were sized as if it swept this much slower than its curve
  /// A CPU device whose rows its curve sweeps at least 1.5 times faster a row
  /// than more rows (they fit a cache that those outgrow): one sweep of them
  /// at that slower pace, which a cache shared with other programs or guests
  /// (a virtual machine's L3) may leave a solve (0: its rows are not so;
  /// plan, predict, solve and sweep show it).
  double uncached_compute_s = 0.0;
};

/// What the model predicts for a whole run (seconds).
struct Prediction {
  std::vector<DevicePrediction> devices;  ///< in row order: a plan's parts[k] is devices[k]
  std::int64_t iterations = 0;  ///< iterations predicted for
  std::int64_t checks = 0;   ///< residual checks (every device takes part in each)
  double iteration_s = 0.0;  ///< the slowest device's: neighbours wait for each other
  double check_s = 0.0;      ///< the slowest device's check
  double setup_s = 0.0;      ///< devices are set up in parallel: the slowest
  double teardown_s = 0.0;   ///< devices are torn down in parallel: the slowest
  /// A solve's time besides its iterations and checks (starting the devices'
  /// threads, first launches, last waits): the slowest device's.
  double fixed_s = 0.0;
  double total_s = 0.0;      ///< set-up + fixed + iterations x iteration + checks x check + tear-down
  /// The iteration where each device with an uncached_compute_s sweeps at
  /// that pace (0: no device's rows fit a cache in its curve).
  double uncached_iteration_s = 0.0;
  /// What the model could not find and assumed, and what a reader of the
  /// prediction should know besides (a second pace, tuned parameters).
  std::vector<std::string> notes;
  /// The devices whose curves the model estimates from another stencil's,
  /// and from which ("" where each device has its own; also among the notes).
  std::string estimated;
};

/// A device a plan does not use, and why (in words, with the predicted times).
struct LeftOut {
  std::string name;    ///< the device's name
  std::string reason;  ///< why, in words: what it would cost or save
};

/// Assignments in row order; together they cover rows 1..ny exactly once.
/// Neighbouring assignments exchange ghost rows every iteration (every K with blocked).
/// Thread safety: a value, safe to copy across threads.
///
/// ```cpp
/// const hetstencil::Plan plan = runtime.plan(problem);
/// for (const auto& part : plan.parts)
///   std::printf("%s: rows %lld..%lld\n", runtime.devices()[part.device].name.c_str(),
///               (long long)part.first_row, (long long)(part.first_row + part.rows - 1));
/// if (plan.prediction) std::printf("predicted %.3f s\n", plan.prediction->total_s);
/// for (const auto& l : plan.left_out) std::printf("%s left out: %s\n", l.name.c_str(), l.reason.c_str());
/// ```
struct Plan {
  /// A plan of these parts (in row order), GPUs sweeping by `variant_in`; no prediction.
  Plan(std::vector<Assignment> parts_in = {}, VariantChoice variant_in = {})
      : parts(std::move(parts_in)), variant(variant_in) {}

  std::vector<Assignment> parts;  ///< in row order
  VariantChoice variant;          ///< how GPUs sweep
  /// The model's figures for these parts and this variant, where a profile has them.
  std::optional<Prediction> prediction;
  /// The devices it could have used but does not, each with the reason.
  std::vector<LeftOut> left_out;
  /// Whether the model chose the split (else evenly, or as given).
  bool modelled = false;
  /// Where the split comes from, in words ("planned from ~/.cache/hetstencil/host.json").
  std::string origin;
};

/// "cpu0 sized for sweeps 50% slower than its curve (as slow as it swept
/// beside GPUs in solves)" for each device whose learnt slowdown sized its
/// share, joined by "; " ("" for none).
HETSTENCIL_API std::string caution_of(const Prediction& prediction);

/// `ny` rows cut into `devices` equal shares in order, differing by at most
/// one row (the larger last); a share is 0 where there are more devices than rows.
HETSTENCIL_API std::vector<std::int64_t> even_rows(std::int64_t ny, std::size_t devices);

/// Rows for devices in order from shares (any non-negative numbers, scaled to
/// add up to 1): largest remainders, so they add up to ny; a device with a
/// positive share gets a row at least. Throws InvalidArgument on bad shares.
HETSTENCIL_API std::vector<std::int64_t> rows_of_shares(const std::vector<double>& shares, std::int64_t ny);

/// The plan giving rows[k] to the device named names[k] (skipping zero rows),
/// in this order; names are looked up among `devices` (a Runtime's). Throws
/// InvalidArgument for a name not among them.
HETSTENCIL_API Plan plan_of(const std::vector<std::string>& names, const std::vector<std::int64_t>& rows,
             const std::vector<DeviceInfo>& devices);

/// A plan saved by to_json(plan, problem) (`hetstencil plan --json`): its
/// grid, how GPUs sweep, when it stops, and its rows by device (a device with 0
/// rows is left out).
struct SavedPlan {
  std::int64_t nx = 0;                      ///< the grid's interior points along a row
  std::int64_t ny = 0;                      ///< the grid's interior rows
  Precision precision = Precision::Double;  ///< of the grid's values
  VariantChoice variant;                    ///< how GPUs sweep
  StopRule stop;                            ///< when the solve stops
  std::vector<std::string> names;           ///< the devices, in row order
  std::vector<std::int64_t> rows;           ///< rows[k]: rows of names[k]
};

/// Throws InvalidArgument naming the file and what is wrong with it.
HETSTENCIL_API SavedPlan read_saved_plan(const std::string& path);

/// The plan with its prediction (needed: it names the devices) as one JSON
/// object that read_saved_plan reads: the problem's grid, precision and stop
/// rule, the variant, the devices with their rows and predicted times, the
/// devices left out, and the run's predicted totals.
HETSTENCIL_API std::string to_json(const Plan& plan, const Problem& problem, int indent = 2);

}  // namespace hetstencil
