#include "partition/policy.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <spdlog/fmt/fmt.h>

#include "core/even_split.hpp"
#include "hetstencil/error.hpp"
#include "model/predict.hpp"
#include "partition/planner.hpp"

namespace hetstencil {
namespace {

std::size_t index_of(const std::string& name, const std::vector<DeviceInfo>& devices) {
  const auto it = std::find_if(devices.begin(), devices.end(), [&](const DeviceInfo& d) { return d.name == name; });
  if (it == devices.end()) {
    HETSTENCIL_THROW(InvalidArgument, "the split names " + name + ", which this run does not have (see --devices)");
  }
  return static_cast<std::size_t>(it - devices.begin());
}

}  // namespace

bool covers(const Profile& named, const std::vector<DeviceInfo>& devices, Precision precision, std::int64_t nx,
            const VariantChoice& variant) {
  return std::all_of(devices.begin(), devices.end(), [&](const DeviceInfo& d) {
    const auto it = named.devices.find(d.name);
    return it != named.devices.end() && it->second.rates.count(rate_key(precision, nx, swept_by(d.kind, variant))) > 0;
  });
}

std::vector<std::int64_t> rows_of_shares(const std::vector<double>& shares, std::int64_t ny) {
  double total = 0.0;
  for (double s : shares) {
    if (!(s >= 0.0) || !std::isfinite(s)) HETSTENCIL_THROW(InvalidArgument, "shares must be finite and >= 0");
    total += s;
  }
  if (!(total > 0.0)) HETSTENCIL_THROW(InvalidArgument, "the shares add up to 0: give some device rows");
  const auto positive = std::count_if(shares.begin(), shares.end(), [](double s) { return s > 0.0; });
  if (positive > ny) {
    HETSTENCIL_THROW(InvalidArgument, std::to_string(positive) + " devices with a share but only " +
                                          std::to_string(ny) + " rows");
  }
  // Largest remainders, then a row for any positive share left without one,
  // taken from the device with the most.
  std::vector<std::int64_t> rows(shares.size(), 0);
  std::vector<double> remainder(shares.size(), 0.0);
  std::int64_t given = 0;
  for (std::size_t k = 0; k < shares.size(); ++k) {
    const double exact = static_cast<double>(ny) * shares[k] / total;
    rows[k] = static_cast<std::int64_t>(std::floor(exact));
    remainder[k] = exact - std::floor(exact);
    given += rows[k];
  }
  std::vector<std::size_t> order(shares.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return remainder[a] > remainder[b]; });
  for (std::size_t k = 0; given < ny; k = (k + 1) % order.size(), ++given) ++rows[order[k]];
  for (std::size_t k = 0; k < shares.size(); ++k) {
    if (shares[k] > 0.0 && rows[k] == 0) {
      --*std::max_element(rows.begin(), rows.end());
      rows[k] = 1;
    }
  }
  return rows;
}

Plan plan_of(const std::vector<std::string>& names, const std::vector<std::int64_t>& rows,
             const std::vector<DeviceInfo>& devices) {
  Plan plan;
  std::int64_t first = 1;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (rows[k] == 0) continue;
    plan.parts.push_back(Assignment{index_of(names[k], devices), first, rows[k]});
    first += rows[k];
  }
  return plan;
}

std::string caution_of(const Prediction& prediction) {
  std::string out;
  for (const auto& d : prediction.devices) {
    if (d.sized_slower <= 1.0) continue;
    out += fmt::format("{}{} sized for sweeps {:.0f}% slower than its curve (as slow as it swept beside GPUs in "
                       "solves)", out.empty() ? "" : "; ", d.name, 100.0 * (d.sized_slower - 1.0));
  }
  return out;
}

Plan model_plan(const Profile& named, const std::vector<DeviceInfo>& devices, const Topology& topology,
                const Problem& problem, const VariantChoice& variant) {
  // One candidate a device, in order: the plan's parts index both.
  return plan_split(named, candidates_of(devices, topology, problem.precision, problem.nx), problem.precision,
                    problem.nx, problem.ny, problem.stop, variant);
}

std::optional<Prediction> predict_plan(const Profile& named, const std::vector<DeviceInfo>& devices, const Plan& plan,
                                       const Problem& problem) {
  std::vector<PlannedDevice> planned;
  for (const auto& part : plan.parts) {
    const DeviceInfo& d = devices.at(part.device);
    if (!named.rate(d.name, problem.precision, problem.nx, plan.variant)) return std::nullopt;
    planned.push_back(PlannedDevice{d.name, d.kind, part.rows});
  }
  return predict(named, planned, problem.precision, problem.nx, problem.stop, plan.variant);
}

std::vector<std::int64_t> even_rows(std::int64_t ny, std::size_t devices) {
  const auto n = static_cast<std::int64_t>(devices);
  std::vector<std::int64_t> rows;
  for (std::int64_t k = 0; k < n; ++k) rows.push_back(even_block(ny, n, k).size());
  return rows;
}

Plan even_plan(const std::vector<DeviceInfo>& devices, const Problem& problem) {
  problem.validate();
  const auto n = static_cast<std::int64_t>(devices.size());
  const std::int64_t units = problem.units();
  if (n > units) {
    HETSTENCIL_THROW(InvalidArgument, "more devices (" + std::to_string(n) + ") than " +
                                          (problem.dimension() == 3 ? "planes (" : "rows (") + std::to_string(units) +
                                          "): use fewer devices or a larger grid");
  }
  Plan plan;
  std::int64_t first = 1;
  for (std::int64_t rows : even_rows(units, devices.size())) {
    plan.parts.push_back(Assignment{plan.parts.size(), first, rows});
    first += rows;
  }
  return plan;
}

}  // namespace hetstencil
