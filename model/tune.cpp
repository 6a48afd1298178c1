#include "model/tune.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>
#include <utility>

#include <spdlog/fmt/fmt.h>

#include "core/log.hpp"
#include "core/robust.hpp"
#include "hetstencil/statistics.hpp"

namespace hetstencil {
namespace {

using Clock = std::chrono::steady_clock;

// A parameter set's samples: their median and spread.
struct Measured {
  double median_s = 0.0;
  double spread_s = 0.0;
};

Measured of(const std::vector<double>& samples) { return {median(samples), mad(samples)}; }

// Faster beyond the noise of both.
bool beats(const Measured& a, const Measured& b) { return a.median_s + a.spread_s < b.median_s - b.spread_s; }

// Whether `t` changes the sweep where the other parameters are as `tuning`
// has them (Tunable::only_with).
bool matters(const Tunable& t, const std::vector<Tunable>& tunables, const Tuning& tuning) {
  for (const auto& [name, values] : t.only_with) {
    const auto other = std::find_if(tunables.begin(), tunables.end(), [&](const Tunable& o) { return o.name == name; });
    if (other != tunables.end() &&
        std::find(values.begin(), values.end(), tuned_value(tuning, *other)) == values.end()) {
      return false;
    }
  }
  return true;
}

// `tuning` without the values of parameters that change nothing where the
// others are as it has them: a search may set one and then move another that
// it depends on.
Tuning that_matter(const std::vector<Tunable>& tunables, Tuning tuning) {
  for (bool dropped = true; dropped;) {
    dropped = false;
    for (const Tunable& t : tunables) {
      if (tuning.count(t.name) && !matters(t, tunables, tuning)) {
        tuning.erase(t.name);
        dropped = true;
      }
    }
  }
  return tuning;
}

}  // namespace

Tuning not_defaults(const std::vector<Tunable>& tunables, const Tuning& tuning) {
  Tuning out;
  for (const Tunable& t : tunables) {
    const int v = tuned_value(tuning, t);
    if (v != t.default_value) out[t.name] = v;
  }
  return out;
}

std::string tuning_text(const Tuning& tuning) {
  if (tuning.empty()) return "defaults";
  std::string out;
  for (const auto& [name, value] : tuning) out += fmt::format("{}{}={}", out.empty() ? "" : " ", name, value);
  return out;
}

TuneOutcome search_tuning(const std::vector<Tunable>& tunables, const SweepSamples& measure,
                          const TuneSearchOptions& options) {
  const Clock::time_point start = Clock::now();
  const auto used = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  TuneOutcome out;
  double last_cost = 0.0;  // seconds the last measurement took: what the next one will
  const auto timed = [&](const Tuning& tuning) {
    const double before = used();
    const Measured m = of(measure(tuning));
    last_cost = used() - before;
    ++out.candidates;
    if (options.progress) {
      options.progress(fmt::format("{}: {:.3f} ms +- {:.3f}", tuning_text(tuning), m.median_s * 1e3, m.spread_s * 1e3));
    }
    return m;
  };
  const auto prepare = [&](const std::vector<Tuning>& tunings) {
    if (options.prepare && !tunings.empty()) options.prepare(tunings);
  };
  // The searches start from the defaults and from each other value of a
  // parameter that picks a kernel, fastest start first, each with an equal
  // share of the budget left.
  std::vector<Tuning> firsts = {Tuning{}};
  for (const Tunable& t : tunables) {
    if (!t.family) continue;
    for (int v : t.values) {
      if (v != t.default_value) firsts.push_back({{t.name, v}});
    }
  }
  prepare(firsts);
  const Measured defaults = timed({});
  out.default_s = out.tuned_s = defaults.median_s;
  out.spread_s = defaults.spread_s;
  std::vector<std::pair<Tuning, Measured>> starts = {{Tuning{}, defaults}};
  for (std::size_t k = 1; k < firsts.size(); ++k) {
    if (used() + last_cost > options.budget_s) {
      out.out_of_time = true;
      break;
    }
    starts.emplace_back(firsts[k], timed(firsts[k]));
  }
  std::stable_sort(starts.begin(), starts.end(),
                   [](const auto& a, const auto& b) { return a.second.median_s < b.second.median_s; });
  Tuning best;
  Measured best_m = defaults;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const double until = used() + (options.budget_s - used()) / static_cast<double>(starts.size() - i);
    bool cut = false;  // this search's share of the budget ended it
    const auto fits = [&] {
      cut = cut || used() + last_cost > until;
      return !cut;
    };
    auto [start_best, start_m] = starts[i];
    for (int round = 0; round < 2 && !cut; ++round) {
      bool moved = false;
      for (const Tunable& t : tunables) {
        if (t.family || !matters(t, tunables, start_best)) continue;
        const int current = tuned_value(start_best, t);
        std::vector<Tuning> candidates;
        for (int v : t.values) {
          if (v == current) continue;
          candidates.push_back(start_best);
          candidates.back()[t.name] = v;
        }
        if (fits()) prepare(candidates);
        Tuning round_best = start_best;
        for (const Tuning& candidate : candidates) {
          if (!fits()) break;
          const Measured m = timed(candidate);
          if (beats(m, start_m)) {
            start_m = m;
            round_best = candidate;
          }
        }
        moved = moved || round_best != start_best;
        start_best = round_best;
        if (cut) break;
      }
      if (!moved) break;
    }
    out.out_of_time = out.out_of_time || cut;
    if (beats(start_m, best_m)) {
      best_m = start_m;
      best = start_best;
    }
  }
  out.chosen = not_defaults(tunables, that_matter(tunables, best));
  if (out.chosen.empty()) return out;
  // Again beside the defaults, one after the other, so that a slower spell of
  // the machine during the search does not crown a parameter set.
  const Measured again_default = timed({});
  const Measured again_best = timed(out.chosen);
  out.default_s = again_default.median_s;
  out.spread_s = again_default.spread_s;
  if (beats(again_best, again_default)) {
    out.tuned_s = again_best.median_s;
  } else {
    out.chosen.clear();
    out.tuned_s = out.default_s;
  }
  return out;
}

Tuning tuned_values(const Profile& named, const std::string& device, const Stencil& stencil, Precision precision) {
  const auto d = named.devices.find(device);
  if (d == named.devices.end()) return {};
  const auto t = d->second.tuned.find(tuning_key(stencil, precision));
  return t == d->second.tuned.end() ? Tuning{} : t->second.values;
}

Tuning usable_tuning(const std::string& device, const std::vector<Tunable>& tunables, const Tuning& tuning) {
  static std::mutex mutex;
  static std::set<std::pair<std::string, std::string>> warned;
  Tuning out;
  for (const auto& [name, value] : tuning) {
    try {
      check_tuning(device, tunables, {{name, value}});
      out[name] = value;
    } catch (const InvalidArgument& e) {
      const std::lock_guard<std::mutex> lock(mutex);
      if (warned.insert({device, name}).second) {
        log::warn("the profile's tuned value is not used ({}); hetstencil tune measures it again", e.what());
      }
    }
  }
  return out;
}

}  // namespace hetstencil
