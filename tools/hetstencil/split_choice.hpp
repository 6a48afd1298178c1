// Where a solve's split comes from: this machine's model (calibrated first when
// it has none for the problem), a saved plan, rows or shares forced on the
// command line, or an even split; and what the model predicts for it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hetstencil/runtime.hpp"
#include "model/predict.hpp"
#include "model/profile.hpp"
#include "partition/planner.hpp"

namespace hetstencil::cli {

/// This machine's profile, where it is kept, and what was done to get it.
struct MachineModel {
  std::optional<Profile> profile;  ///< keyed by the runtime's device names (named_for)
  std::string path;
  std::string not_saved;  ///< why a first calibration could not be saved ("" when it was, or none ran)
};

/// The profile of this machine when every device of the runtime has a rate
/// curve for the problem's precision and width in it. Otherwise, with
/// `calibrate`, it calibrates those devices (mapped from `machine`, as the
/// runtime's are; saying so on stderr, and how long it took) and saves the
/// profile (a save that fails is a warning: the calibration is used all the
/// same); without, it returns what there is (possibly nothing). A described
/// machine (--topology/--synthetic) has no profile here.
/// With a variant, the GPUs' curves must be for it (and are calibrated for it).
MachineModel machine_model(const Runtime& runtime, const RuntimeOptions& machine, const Problem& problem,
                           bool calibrate, double budget_s, const VariantChoice& variant = {});

/// Whether the profile has this precision's curve at exactly this width for
/// every device (for a GPU, swept by the variant).
bool covers(const Profile& profile, const std::vector<DeviceInfo>& devices, Precision precision, std::int64_t nx,
            const VariantChoice& variant = {});

/// Rows for devices in order from shares (any non-negative numbers, scaled to
/// add up to 1): largest remainders, so they add up to ny; a device with a
/// positive share gets a row at least. Throws InvalidArgument on bad shares.
std::vector<std::int64_t> rows_of_shares(const std::vector<double>& shares, std::int64_t ny);

/// The plan giving rows[k] to the device named names[k] (skipping zero rows),
/// in this order; names are looked up among the runtime's devices.
Plan plan_of(const std::vector<std::string>& names, const std::vector<std::int64_t>& rows,
             const std::vector<DeviceInfo>& devices);

/// The model's plan for this problem on these devices, GPUs sweeping by the variant.
SplitPlan model_plan(const Profile& profile, const Runtime& runtime, const Problem& problem,
                     const VariantChoice& variant = {});

/// The model's prediction for a plan (its variant too), when the profile covers its devices.
std::optional<Prediction> predict_plan(const Profile& profile, const std::vector<DeviceInfo>& devices, const Plan& plan,
                                       const Problem& problem);

/// A plan saved by `hetstencil plan --json`: its grid, how GPUs sweep, when it
/// stops, and its rows by device (a device with 0 rows is left out).
struct SavedPlan {
  std::int64_t nx = 0;
  std::int64_t ny = 0;
  Precision precision = Precision::Double;
  VariantChoice variant;
  StopRule stop;
  std::vector<std::string> names;
  std::vector<std::int64_t> rows;
};

/// The fields of a saved plan besides its devices and predictions, as
/// read_saved_plan reads them.
nlohmann::json saved_plan_fields(std::int64_t nx, std::int64_t ny, Precision precision, const VariantChoice& variant,
                                 const StopRule& stop);

/// Throws InvalidArgument naming the file and what is wrong with it.
SavedPlan read_saved_plan(const std::string& path);

/// Refuses (InvalidArgument naming `option` and the device) a count below 0 or
/// above ny; rows[k] is for names[k].
void check_row_counts(const std::string& option, const std::vector<std::string>& names,
                      const std::vector<std::int64_t>& rows, std::int64_t ny);

}  // namespace hetstencil::cli
