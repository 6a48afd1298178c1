#include "partition/planner.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <queue>

#include <spdlog/fmt/fmt.h>

#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

constexpr int kAllSubsetsUpTo = 6;   // more devices: leave them out one at a time
constexpr int kAllOrdersUpTo = 4;    // more devices: CPU sockets at the ends, GPUs together

// What is planned for: the grid, its stop rule and how GPUs sweep.
struct Question {
  Precision precision;
  std::int64_t nx;
  std::int64_t ny;
  StopRule stop;
  VariantChoice variant;
  bool cautious;  // CPU devices beside GPUs: see SplitModel
};

struct Evaluated {
  std::vector<std::size_t> order;  // candidate indices
  std::vector<std::int64_t> rows;
  Prediction prediction;
  bool valid = false;
};

bool faster(const Evaluated& a, const Evaluated& b) { return a.prediction.total_s < b.prediction.total_s; }

// Which of `plans` (valid ones) is chosen: of those within kLeastGainOfADevice
// of the fastest, the one with the fewest devices, then the fastest of them.
// One choice over the whole list, so that the winner does not depend on the
// order of the list.
std::size_t chosen_index(const std::vector<Evaluated>& plans) {
  const double fastest = std::min_element(plans.begin(), plans.end(), faster)->prediction.total_s;
  std::size_t pick = plans.size();
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const Evaluated& e = plans[i];
    if (e.prediction.total_s > fastest * (1.0 + kLeastGainOfADevice)) continue;
    if (pick == plans.size() || e.order.size() < plans[pick].order.size() ||
        (e.order.size() == plans[pick].order.size() && faster(e, plans[pick]))) {
      pick = i;
    }
  }
  return pick;
}

// The most rows in [0, cap] whose iteration fits under t. Iteration time grows
// with rows, except on the smallest slabs of a GPU, where edges that no
// interior hides and the loop's overhead can make a few rows slower than many:
// the whole cap is tried first, and the search does not trust its low end.
std::int64_t rows_under(const SplitModel& model, std::size_t k, double t, std::int64_t cap) {
  if (cap < model.min_rows()) return 0;
  if (model.device(k, cap).iteration_s <= t) return cap;
  std::int64_t lo = model.min_rows(), hi = cap - 1;
  if (lo > hi) return 0;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (model.device(k, mid).iteration_s <= t) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return model.device(k, lo).iteration_s <= t ? lo : 0;
}

// One order's model, and each device's most rows (its memory, or the grid).
struct Ordered {
  SplitModel model;
  std::vector<std::int64_t> caps;
};

Ordered ordered(const Profile& profile, const std::vector<Candidate>& candidates, const std::vector<std::size_t>& order,
                const Question& q) {
  std::vector<PlannedDevice> devices;
  std::vector<std::int64_t> caps;
  for (std::size_t c : order) {
    devices.push_back({candidates[c].name, candidates[c].kind, 0});
    caps.push_back(candidates[c].max_rows > 0 ? std::min(candidates[c].max_rows, q.ny) : q.ny);
  }
  return {SplitModel(profile, devices, q.precision, q.nx, q.stop, q.variant, q.cautious), caps};
}

// The bisection balances each device's own iteration; the total also counts
// what couples devices (hand-over chains between neighbours) and set-up. Moving
// rows between two devices, in steps that halve down to one row, while the
// total improves, settles what the balance left.
void refine(const SplitModel& model, const std::vector<std::int64_t>& caps, std::vector<std::int64_t>& rows) {
  const std::size_t n = rows.size();
  if (n < 2) return;
  double best = model.predict(rows).total_s;
  std::int64_t step = 1;
  for (auto r : rows) step = std::max(step, r / 4);
  for (; step >= 1; step /= 2) {
    for (bool moved = true; moved;) {
      moved = false;
      for (std::size_t from = 0; from < n; ++from) {
        for (std::size_t to = 0; to < n; ++to) {
          if (from == to || rows[from] - step < model.min_rows() || rows[to] + step > caps[to]) continue;
          rows[from] -= step;
          rows[to] += step;
          const double total = model.predict(rows).total_s;
          if (total < best) {
            best = total;
            moved = true;
          } else {
            rows[from] += step;
            rows[to] -= step;
          }
        }
      }
    }
  }
}

// Bisection on t: each free device takes the most rows whose iteration fits
// under t, until they cover what the fixed ones (fixed[k] > 0) leave; then the
// excess goes back from the device whose iteration is longest (the one with
// more rows among equals), one row at a time. A device too slow to take any
// row under t keeps 0, or with `keep_all` its fewest rows. Empty when no t
// covers the rows.
std::vector<std::int64_t> bisect(const SplitModel& model, const std::vector<std::int64_t>& caps,
                                 const std::vector<std::int64_t>& fixed, std::int64_t ny, bool keep_all = false) {
  const std::size_t n = caps.size();
  std::int64_t left = ny;
  for (auto f : fixed) left -= std::max<std::int64_t>(f, 0);
  const std::int64_t floor = keep_all ? model.min_rows() : 0;
  auto rows_at = [&](double t) {
    std::vector<std::int64_t> rows(n);
    for (std::size_t k = 0; k < n; ++k) {
      rows[k] = fixed[k] > 0 ? fixed[k] : std::max(floor, rows_under(model, k, t, caps[k]));
    }
    return rows;
  };
  auto free_sum = [&](const std::vector<std::int64_t>& rows) {
    std::int64_t sum = 0;
    for (std::size_t k = 0; k < n; ++k) sum += fixed[k] > 0 ? 0 : rows[k];
    return sum;
  };
  double lo = 0.0, hi = 0.0;
  for (std::size_t k = 0; k < n; ++k) hi = std::max(hi, model.device(k, caps[k]).iteration_s);
  if (left < 1 || !std::isfinite(hi) || free_sum(rows_at(hi)) < left) return {};
  for (int step = 0; step < 64 && hi - lo > 1e-12 * hi; ++step) {
    const double mid = 0.5 * (lo + hi);
    (free_sum(rows_at(mid)) >= left ? hi : lo) = mid;
  }
  std::vector<std::int64_t> rows = rows_at(hi);
  using Slot = std::tuple<double, std::int64_t, std::size_t>;
  std::priority_queue<Slot> slowest;
  for (std::size_t k = 0; k < n; ++k) {
    if (fixed[k] <= 0 && rows[k] > floor) slowest.push({model.device(k, rows[k]).iteration_s, rows[k], k});
  }
  for (std::int64_t excess = free_sum(rows) - left; excess > 0 && !slowest.empty(); --excess) {
    const std::size_t k = std::get<2>(slowest.top());
    slowest.pop();
    if (--rows[k] > floor) slowest.push({model.device(k, rows[k]).iteration_s, rows[k], k});
  }
  return rows;
}

// `rows` over `order`, refined where `thorough`, and priced; invalid unless
// every device has its fewest rows at least and no more than its memory holds.
Evaluated priced(const SplitModel& model, const std::vector<std::int64_t>& caps, std::vector<std::size_t> order,
                 std::vector<std::int64_t> rows, bool thorough) {
  Evaluated e;
  if (rows.empty()) return e;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    if (rows[k] < model.min_rows() || rows[k] > caps[k]) return e;
  }
  if (thorough) refine(model, caps, rows);
  e.order = std::move(order);
  e.rows = std::move(rows);
  e.prediction = model.predict(e.rows);
  e.valid = true;
  return e;
}

// The devices of `order`, each with its fewest rows at least (the iterations
// balanced above that): what a device costs where the balance alone gives it
// none.
Evaluated fed_all(const Profile& profile, const std::vector<Candidate>& candidates, std::vector<std::size_t> order,
                  const Question& q, bool thorough) {
  const auto [model, caps] = ordered(profile, candidates, order, q);
  std::vector<std::int64_t> rows = bisect(model, caps, std::vector<std::int64_t>(order.size(), 0), q.ny, true);
  return priced(model, caps, std::move(order), std::move(rows), thorough);
}

// The rows that finish first for one order. Besides the plain balance, a few
// devices start from a single row each: a device with a high floor can pay as
// a thin bridge between others, a shape the balance alone does not reach.
// `thorough` refines every start. When the plain balance gives some devices
// no rows, the best of: without them (the rest balanced again, their
// neighbours change, so the order of the result may be shorter), every device
// at its fewest rows at least, an even split. Invalid when none covers.
Evaluated balance(const Profile& profile, const std::vector<Candidate>& candidates, std::vector<std::size_t> order,
                  const Question& q, bool thorough) {
  const auto has_zero = [](const std::vector<std::int64_t>& rows) {
    return std::any_of(rows.begin(), rows.end(), [](std::int64_t r) { return r <= 0; });
  };
  std::vector<std::int64_t> plain;
  {
    const auto [model, caps] = ordered(profile, candidates, order, q);
    plain = bisect(model, caps, std::vector<std::int64_t>(order.size(), 0), q.ny);
    if (plain.empty()) return {};
    if (has_zero(plain)) {
      // The balance of iterations starves some devices; their share of the
      // set-up can still pay. The order without them, the order with each
      // device at its fewest rows at least, and an even split are priced.
      std::vector<std::size_t> fed;
      for (std::size_t k = 0; k < order.size(); ++k) {
        if (plain[k] > 0) fed.push_back(order[k]);
      }
      Evaluated best = fed.empty() ? Evaluated{} : balance(profile, candidates, fed, q, thorough);
      for (auto rows : {bisect(model, caps, std::vector<std::int64_t>(order.size(), 0), q.ny, true),
                        even_rows(q.ny, order.size())}) {
        Evaluated e = priced(model, caps, order, std::move(rows), thorough);
        if (e.valid && (!best.valid || faster(e, best))) best = std::move(e);
      }
      return best;
    }
  }
  const auto [model, caps] = ordered(profile, candidates, order, q);
  const std::size_t n = order.size();
  std::vector<std::vector<std::int64_t>> starts{plain};
  if (thorough && n > 1) {
    for (std::size_t k = 0; k < n; ++k) {
      std::vector<std::int64_t> fixed(n, 0);
      fixed[k] = model.min_rows();
      starts.push_back(bisect(model, caps, fixed, q.ny));
    }
  }
  Evaluated e;
  e.order = order;
  for (auto& rows : starts) {
    if (rows.empty() || has_zero(rows)) continue;
    if (thorough) refine(model, caps, rows);
    const Prediction p = model.predict(rows);
    if (!e.valid || p.total_s < e.prediction.total_s) {
      e.rows = rows;
      e.prediction = p;
      e.valid = true;
    }
  }
  return e;
}

// Orders worth trying: all (up to a reversal, which prices the same) for a
// few devices; otherwise CPU sockets first, last, or at both ends around the GPUs.
std::vector<std::vector<std::size_t>> orders_of(const std::vector<Candidate>& candidates, std::vector<std::size_t> set) {
  std::vector<std::vector<std::size_t>> out;
  if (set.size() <= static_cast<std::size_t>(kAllOrdersUpTo)) {
    std::sort(set.begin(), set.end());
    do {
      if (set.front() <= set.back()) out.push_back(set);
    } while (std::next_permutation(set.begin(), set.end()));
    return out;
  }
  std::vector<std::size_t> cpus, gpus;
  for (std::size_t c : set) (candidates[c].kind == DeviceKind::Cpu ? cpus : gpus).push_back(c);
  std::vector<std::size_t> a = cpus, b = gpus;
  a.insert(a.end(), gpus.begin(), gpus.end());
  b.insert(b.end(), cpus.begin(), cpus.end());
  out = {a, b};
  if (cpus.size() >= 2) {
    std::vector<std::size_t> ends(cpus.begin(), cpus.begin() + static_cast<std::ptrdiff_t>(cpus.size() / 2));
    ends.insert(ends.end(), gpus.begin(), gpus.end());
    ends.insert(ends.end(), cpus.begin() + static_cast<std::ptrdiff_t>(cpus.size() / 2), cpus.end());
    out.push_back(ends);
  }
  return out;
}

Evaluated best_for(const Profile& profile, const std::vector<Candidate>& candidates, const std::vector<std::size_t>& set,
                   const Question& q, bool thorough) {
  Evaluated best;
  for (const auto& order : orders_of(candidates, set)) {
    Evaluated e = balance(profile, candidates, order, q, thorough);
    if (e.valid && (!best.valid || faster(e, best))) best = std::move(e);
  }
  return best;
}

// Why candidate c is not in the plan, in one line with the figures: `with`
// is the best plan that has it, `without` the plan chosen.
std::string reason(const Candidate& c, const Evaluated* with, const Evaluated& without, std::int64_t ny) {
  if (!with) {
    return fmt::format("no split of the {} rows has room for it beside the plan's devices (each needs its fewest rows, "
                       "and its memory caps its share)", ny);
  }
  const double with_s = with->prediction.total_s, without_s = without.prediction.total_s;
  std::string share, costs;
  for (std::size_t k = 0; k < with->order.size(); ++k) {
    const DevicePrediction& d = with->prediction.devices[k];
    if (d.name != c.name) continue;
    share = fmt::format("{:.1f}% of the rows", 100.0 * static_cast<double>(d.rows) / static_cast<double>(ny));
    costs = c.kind == DeviceKind::Gpu
                ? fmt::format("copying its slab in and out takes {:.3g} ms, and its halo copies and loop add {:.3g} ms "
                              "to each of its iterations of {:.3g} ms", 1e3 * (d.setup_s + d.teardown_s),
                              1e3 * d.exposed_s, 1e3 * d.iteration_s)
                : fmt::format("its halo hand-overs and loop add {:.3g} ms to each of its iterations of {:.3g} ms",
                              1e3 * d.exposed_s, 1e3 * d.iteration_s);
  }
  if (with_s < without_s * (1 - 1e-9)) {
    // The plan chosen is within kLeastGainOfADevice of every plan found, and
    // one found faster has more devices (chosen_index).
    return fmt::format("{} would save {:.1f}% ({:.6g} s against {:.6g} s): a device joins only to save {:.0f}% (less "
                       "is within the spread of one split run again)",
                       share, 100 * (1 - with_s / without_s), with_s, without_s, 100 * kLeastGainOfADevice);
  }
  if (with_s <= without_s * (1 + 1e-9)) {
    return fmt::format("{} would not shorten the run (predicted {:.6g} s either way)", share, without_s);
  }
  if (with->order.size() == 1) {
    return fmt::format("on its own (all the rows) it would take {:.1f}% longer ({:.6g} s against {:.6g} s), and beside "
                       "others longer still", 100 * (with_s / without_s - 1), with_s, without_s);
  }
  return fmt::format("{} would cost {:.1f}% more ({:.6g} s against {:.6g} s): {}", share,
                     100 * (with_s / without_s - 1), with_s, without_s, costs);
}

}  // namespace

std::vector<Candidate> candidates_of(const std::vector<DeviceInfo>& devices, const Topology& topology,
                                     Precision precision, std::int64_t nx) {
  const auto row = static_cast<double>(row_bytes(nx, precision));
  const double sums = 2.0 * 8.0 * static_cast<double>((nx + 127) / 128);
  std::vector<Candidate> out;
  for (const auto& d : devices) {
    Candidate c{d.name, d.kind, 0};
    if (d.kind == DeviceKind::Gpu && topology.this_machine) {
      const auto index = static_cast<std::size_t>(std::stoi(d.name.substr(3)));
      if (index < topology.gpus.size()) {
        c.max_rows = static_cast<std::int64_t>(0.9 * static_cast<double>(topology.gpus[index].memory_bytes) / (2.0 * row + sums));
      }
    }
    out.push_back(c);
  }
  return out;
}

Plan plan_split(const Profile& profile, const std::vector<Candidate>& candidates, Precision precision,
                std::int64_t nx, std::int64_t ny, const StopRule& stop, const VariantChoice& variant) {
  if (candidates.empty()) HETSTENCIL_THROW(InvalidArgument, "no devices to plan for");
  const auto has = [&](DeviceKind kind) {
    return std::any_of(candidates.begin(), candidates.end(), [&](const Candidate& c) { return c.kind == kind; });
  };
  const Question q{precision, nx, ny, stop, variant, has(DeviceKind::Cpu) && has(DeviceKind::Gpu)};
  if (ny < 1) HETSTENCIL_THROW(InvalidArgument, "no rows to plan for");
  std::int64_t capacity = 0;
  for (const auto& c : candidates) capacity = c.max_rows <= 0 ? ny : std::min(ny, capacity + c.max_rows);
  if (capacity < ny) {
    const auto row = static_cast<double>(row_bytes(nx, precision));
    HETSTENCIL_THROW(InvalidArgument,
                     fmt::format("the devices' memory holds {} of the {} rows: {:.2f} GiB more are needed", capacity, ny,
                                 2.0 * row * static_cast<double>(ny - capacity) / (1024.0 * 1024.0 * 1024.0)));
  }
  const std::size_t n = candidates.size();
  // Few devices: every set, every order, several starts, each refined. Many:
  // the balance alone while searching, the winner refined at the end.
  const bool thorough = n <= static_cast<std::size_t>(kAllSubsetsUpTo);
  std::map<std::size_t, Evaluated> best_with;  // per candidate: the fastest plan that uses it
  std::vector<Evaluated> found;                // each set's fastest plan
  auto consider = [&](const std::vector<std::size_t>& set) {
    const Evaluated e = best_for(profile, candidates, set, q, thorough);
    if (!e.valid) return e;
    for (std::size_t c : e.order) {
      if (!best_with.count(c) || faster(e, best_with[c])) best_with[c] = e;
    }
    found.push_back(e);
    return e;
  };
  // A step of the search over many devices, as the final choice would take it.
  const auto better = [](const Evaluated& next, const Evaluated& current) { return chosen_index({current, next}) == 1; };
  if (n <= static_cast<std::size_t>(kAllSubsetsUpTo)) {
    for (std::size_t mask = 1; mask < (std::size_t(1) << n); ++mask) {
      std::vector<std::size_t> set;
      for (std::size_t c = 0; c < n; ++c) {
        if (mask & (std::size_t(1) << c)) set.push_back(c);
      }
      consider(set);
    }
  } else {
    // Start from the best of every device, the GPUs alone and the CPU devices
    // alone; then leave out one device at a time while that is predicted
    // faster (only a device with a small share is worth trying). Each step
    // drops a device: at most n steps of n balances.
    std::vector<std::size_t> all(n), gpus, cpus;
    for (std::size_t c = 0; c < n; ++c) {
      all[c] = c;
      (candidates[c].kind == DeviceKind::Gpu ? gpus : cpus).push_back(c);
    }
    std::vector<std::size_t> set;
    Evaluated current;
    for (const auto* start : {&all, &gpus, &cpus}) {
      if (start->empty() || (start != &all && start->size() == n)) continue;
      const Evaluated e = consider(*start);
      if (e.valid && (!current.valid || better(e, current))) {
        current = e;
        set = *start;
      }
    }
    for (bool improved = current.valid; improved && current.order.size() > 1;) {
      improved = false;
      for (std::size_t k = 0; k < current.order.size(); ++k) {
        if (current.rows[k] * 4 * static_cast<std::int64_t>(current.order.size()) >= ny) continue;
        std::vector<std::size_t> fewer = set;
        fewer.erase(std::find(fewer.begin(), fewer.end(), current.order[k]));
        const Evaluated e = consider(fewer);
        if (e.valid && better(e, current)) {
          current = e;
          set = std::move(fewer);
          improved = true;
          break;
        }
      }
    }
  }
  if (found.empty()) HETSTENCIL_THROW(InvalidArgument, "no split of " + std::to_string(ny) + " rows fits these devices");
  Evaluated best = found[chosen_index(found)];
  if (!thorough) {
    const auto [model, caps] = ordered(profile, candidates, best.order, q);
    refine(model, caps, best.rows);
    best.prediction = model.predict(best.rows);
  }
  Plan plan;
  plan.variant = variant;
  plan.modelled = true;
  const Ordered chosen = ordered(profile, candidates, best.order, q);
  std::vector<PlannedDevice> planned;
  std::int64_t first = 1;
  for (std::size_t k = 0; k < best.order.size(); ++k) {
    const Candidate& c = candidates[best.order[k]];
    plan.parts.push_back(Assignment{best.order[k], first, best.rows[k]});
    first += best.rows[k];
    planned.push_back({c.name, c.kind, best.rows[k], chosen.model.priced_slower(k)});
  }
  plan.prediction = q.cautious ? predict(profile, planned, precision, nx, stop, variant) : best.prediction;
  for (std::size_t c = 0; c < n; ++c) {
    if (std::find(best.order.begin(), best.order.end(), c) != best.order.end()) continue;
    const Evaluated* with = best_with.count(c) ? &best_with[c] : nullptr;
    Evaluated fed;
    if (!with) {
      // The balance of iterations gave it no rows in every set tried: priced
      // beside the plan's devices at its fewest rows.
      std::vector<std::size_t> order = best.order;
      order.push_back(c);
      fed = fed_all(profile, candidates, order, q, thorough);
      if (fed.valid) with = &fed;
    }
    plan.left_out.push_back({candidates[c].name, reason(candidates[c], with, best, ny)});
  }
  return plan;
}

}  // namespace hetstencil
