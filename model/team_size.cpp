#include "model/team_size.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include <spdlog/fmt/fmt.h>

#include "hetstencil/statistics.hpp"

namespace hetstencil {
namespace {

constexpr int kLeastTrialSweeps = 5;
constexpr int kMostTrialSweeps = 400;
constexpr int kEstimateSweeps = 3;

// Adds the mean of `samples` (sweeps of `rows`) a row, and its variance, to t's sums.
void add_slab(TeamTrial& t, double& variance, const std::vector<double>& samples, std::int64_t rows) {
  if (samples.empty()) return;
  const auto n = static_cast<double>(samples.size());
  const double mean = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
  double square = 0.0;
  for (double s : samples) square += (s - mean) * (s - mean);
  const auto r = static_cast<double>(rows);
  t.row_s += mean / r;
  variance += (samples.size() > 1 ? square / (n - 1.0) / n : mean * mean) / (r * r);
}

}  // namespace

std::optional<Tunable> threads_of(const Device& device, const StencilJob& job) {
  for (Tunable& t : device.tunables(job)) {
    if (t.name == "threads") return std::move(t);
  }
  return std::nullopt;
}

std::vector<std::int64_t> team_trial_units(std::int64_t units) {
  std::vector<std::int64_t> out;
  for (std::int64_t part : {16, 4, 1}) {
    const std::int64_t rows = std::max<std::int64_t>(1, units / part);
    if (out.empty() || out.back() != rows) out.push_back(rows);
  }
  return out;
}

std::vector<int> team_trials(const Tunable& threads, int current) {
  const int team = threads.values.empty() ? threads.default_value : threads.values.back();
  std::vector<int> out{current};
  for (int eighths : {8, 7, 6, 4}) {
    const int n = team * eighths / 8;
    const bool taken = std::find(threads.values.begin(), threads.values.end(), n) != threads.values.end();
    if (n >= 1 && taken && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  return out;
}

std::size_t fastest_team(const std::vector<TeamTrial>& trials) {
  if (trials.empty()) return 0;
  const TeamTrial& now = trials.front();
  const auto left_alone = [](const TeamTrial& t) { return t.stolen <= HostLoad::kCrowdingCores; };
  std::optional<std::size_t> best;
  for (std::size_t k = 1; k < trials.size(); ++k) {
    const TeamTrial& t = trials[k];
    if (!(t.row_s > 0.0 && t.row_s + 2.0 * t.error_s < now.row_s - 2.0 * now.error_s)) continue;
    const bool better = !best || (left_alone(t) != left_alone(trials[*best]) ? left_alone(t)
                                                                              : t.row_s < trials[*best].row_s);
    if (better) best = k;
  }
  return best.value_or(0);
}

std::string team_choice_text(const std::string& device, const std::string& slab, const std::vector<TeamTrial>& trials,
                             std::size_t chosen) {
  if (trials.empty()) return device + ": no team timed";
  const auto stolen = [](const TeamTrial& t) { return t.stolen < 0.0 ? std::string("?") : fmt::format("{:.1f}", t.stolen); };
  const TeamTrial& now = trials.front();
  std::string out = fmt::format("{}: {} workers swept {} in {:.3g} us a row (the hypervisor took {} cores' worth)",
                                device, now.workers, slab, now.row_s * 1e6, stolen(now));
  for (std::size_t k = 1; k < trials.size(); ++k) {
    out += fmt::format(", {} in {:.3g} ({})", trials[k].workers, trials[k].row_s * 1e6, stolen(trials[k]));
  }
  return out + fmt::format(": it sweeps with {}", trials[std::min(chosen, trials.size() - 1)].workers);
}

std::vector<TeamTrial> time_teams(Device& device, StencilJob job, std::int64_t units) {
  std::vector<TeamTrial> out;
  const std::optional<Tunable> threads = threads_of(device, job);
  if (!threads) return out;
  for (int workers : team_trials(*threads, tuned_value(job.tuning, *threads))) {
    job.tuning["threads"] = workers;
    device.attach(job, RowRange{1, units});
    TeamTrial t;
    t.workers = workers;
    double variance = 0.0;
    const HostLoad load;
    const std::vector<std::int64_t> slabs = team_trial_units(units);
    for (std::int64_t rows : slabs) {
      const std::vector<double> first = device.measure_sweeps(job, {rows}, kEstimateSweeps, false).front().sweep_s;
      const double estimate = first.empty() ? 0.0 : median(first);
      const int sweeps = estimate > 0.0 ? std::clamp(static_cast<int>(kTeamTrialSeconds / estimate),
                                                     kLeastTrialSweeps, kMostTrialSweeps)
                                        : kLeastTrialSweeps;
      add_slab(t, variance, device.measure_sweeps(job, {rows}, sweeps, false).front().sweep_s, rows);
    }
    const HostLoad::Figures seen = load.since_start();
    device.detach();
    const auto n = static_cast<double>(slabs.size());
    t.row_s /= n;
    t.error_s = std::sqrt(variance) / n;
    t.stolen = seen.others < 0.0 ? -1.0 : seen.stolen;
    out.push_back(t);
  }
  return out;
}

}  // namespace hetstencil
