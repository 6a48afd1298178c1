// The planning policy: whether a profile can plan a problem on a set of
// devices, the model's plan for them as a Plan (who takes which rows, who is
// left out and why), and its prediction for any other plan.
#pragma once

#include <optional>
#include <vector>

#include "hetstencil/device_info.hpp"
#include "hetstencil/plan.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/topology.hpp"
#include "model/profile.hpp"

namespace hetstencil {

/// Whether `named` (a profile keyed by the devices' names) has this
/// precision's curve at exactly this width for every device (for a GPU, swept
/// by the variant): the model is measured at the problem's own width, since a
/// curve scaled from another misses how rows fill a GPU and a slab a cache.
bool covers(const Profile& named, const std::vector<DeviceInfo>& devices, Precision precision, std::int64_t nx,
            const VariantChoice& variant = {});

/// The split that finishes first (plan_split) of the problem on `devices`,
/// GPUs sweeping by the variant; its parts index `devices`, its prediction is
/// the planner's, its left_out the devices it does not use with the reason.
/// A GPU's rows are bounded by its memory where `topology` knows it.
Plan model_plan(const Profile& named, const std::vector<DeviceInfo>& devices, const Topology& topology,
                const Problem& problem, const VariantChoice& variant = {});

/// The model's prediction for a plan (its variant too), when `named` has a
/// curve for each of its devices.
std::optional<Prediction> predict_plan(const Profile& named, const std::vector<DeviceInfo>& devices, const Plan& plan,
                                       const Problem& problem);

/// Every device an equal share of rows (shares differ by at most one row);
/// throws InvalidArgument when there are more devices than rows.
Plan even_plan(const std::vector<DeviceInfo>& devices, const Problem& problem);

}  // namespace hetstencil
