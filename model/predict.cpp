#include "model/predict.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <spdlog/fmt/fmt.h>

#include "hetstencil/error.hpp"

namespace hetstencil {

std::int64_t residual_checks(const StopRule& stop, std::int64_t iterations) {
  if (iterations < 0) return 0;
  if (!stop.uses_tolerance() || stop.check_every < 1) return 1;
  // Iterates 0, e, 2e, ... up to `iterations`, and the last one when it is no multiple of e.
  const std::int64_t multiples = iterations / stop.check_every;
  const std::int64_t last = iterations % stop.check_every != 0 ? 1 : 0;
  if (multiples > std::numeric_limits<std::int64_t>::max() - 1 - last) return std::numeric_limits<std::int64_t>::max();
  return multiples + 1 + last;
}

double run_total_s(const Prediction& p) {
  return p.setup_s + p.fixed_s + static_cast<double>(p.iterations) * p.iteration_s +
         static_cast<double>(p.checks) * p.check_s + p.teardown_s;
}

SplitModel::SplitModel(const Profile& profile, const std::vector<PlannedDevice>& devices, Precision precision,
                       std::int64_t nx, const StopRule& stop, const VariantChoice& variant, bool cautious)
    : variant_(variant),
      row_bytes_(static_cast<double>(row_bytes(nx, precision))),
      iterations_(stop.max_iterations),
      checks_(residual_checks(stop, stop.max_iterations)) {
  // A trip of the rows a round exchanges.
  auto link = [&](const std::string& from, const std::string& to) {
    const auto it = profile.links.find(link_key(from, to));
    if (it != profile.links.end()) return it->second.seconds(row_bytes_ * static_cast<double>(depth()));
    notes_.push_back("no figure for the link " + link_key(from, to) + ": taken as free");
    return 0.0;
  };
  for (std::size_t k = 0; k < devices.size(); ++k) {
    const PlannedDevice& d = devices[k];
    const auto rate = profile.rate(d.name, precision, nx, variant);
    if (!rate) {
      HETSTENCIL_THROW(InvalidArgument, "the profile has no " + to_string(precision) + " rate curve for " + d.name +
                                            (variant.variant == Variant::Sync || d.kind == DeviceKind::Cpu
                                                 ? std::string()
                                                 : " running " + to_string(variant.variant)) +
                                            " (run hetstencil calibrate)");
    }
    Entry e;
    e.device = d;
    e.rate = *rate;
    e.check = profile.check(d.name, precision, nx, variant);
    if (!e.check) notes_.push_back("no check figures for " + d.name + ": checks taken as free");
    const auto dev = profile.devices.find(d.name);
    if (const auto rest = d.kind == DeviceKind::Cpu ? profile.rest(d.name, precision, nx) : std::nullopt) {
      e.rest = rest->first;
      e.rest_rows = rest->second;
    }
    if (cautious && d.kind == DeviceKind::Cpu && dev != profile.devices.end()) {
      e.priced_slower = dev->second.slowdown_beside_gpus;
    }
    const std::string key = rate_key(precision, nx, swept_by(d.kind, variant));
    if (dev != profile.devices.end() && dev->second.step.count(key)) {
      e.step = dev->second.step.at(key);
    } else {
      notes_.push_back("no loop figure for " + d.name + ": its loop taken as free");
    }
    if (dev != profile.devices.end() && dev->second.fixed.count(key)) {
      e.fixed = dev->second.fixed.at(key);
    } else {
      notes_.push_back("no fixed-time figure for " + d.name + ": a solve's start and end taken as free");
    }
    if (d.kind == DeviceKind::Gpu) {
      if (dev != profile.devices.end() && dev->second.overhead.count(key)) {
        e.overhead = dev->second.overhead.at(key);
      } else {
        notes_.push_back("no overhead figure for " + d.name + ": its iterations priced at their sweep or its loop");
      }
    }
    for (std::size_t nb : {k - 1, k + 1}) {
      if (nb >= devices.size()) continue;  // k - 1 wraps for k == 0
      e.exchange += link(devices[nb].name, d.name);
      if (d.kind == DeviceKind::Gpu && devices[nb].kind == DeviceKind::Cpu) e.exchange += link(d.name, devices[nb].name);
    }
    if (k + 1 < devices.size()) {
      e.to_next = link(d.name, devices[k + 1].name);
      e.from_next = link(devices[k + 1].name, d.name);
    }
    if (dev != profile.devices.end() && !dev->second.setup_in.empty()) {
      e.setup_in = dev->second.setup_in;
      e.setup_out = dev->second.setup_out;
    } else {
      notes_.push_back("no set-up figures for " + d.name + ": taken as free");
    }
    entries_.push_back(std::move(e));
  }
  std::sort(notes_.begin(), notes_.end());
  notes_.erase(std::unique(notes_.begin(), notes_.end()), notes_.end());
}

DevicePrediction SplitModel::device(std::size_t k, std::int64_t rows) const {
  const Entry& e = entries_[k];
  DevicePrediction p;
  p.name = e.device.name;
  p.rows = rows;
  p.sized_slower = e.device.sized_slower;
  if (rows < min_rows()) {
    p.iteration_s = std::numeric_limits<double>::infinity();  // a plan the executor refuses
    return p;
  }
  const int neighbours = (k > 0 ? 1 : 0) + (k + 1 < entries_.size() ? 1 : 0);
  const std::int64_t swept = swept_rows(k, rows);
  p.compute_s = e.rate.seconds(swept) * e.priced_slower;
  p.exchange_s = e.exchange / static_cast<double>(depth());
  if (e.device.kind == DeviceKind::Gpu) {
    // The edge rows first (a sync sweep's first and last, a blocked round's K
    // a side with a neighbour), then the exchange runs while the interior sweeps:
    // only what outlasts it shows, and the GPU's own overhead. The host's loop
    // bounds the iteration from below. Per iteration, as a round's K sweeps
    // and its one exchange are.
    const std::int64_t edge_rows = std::min<std::int64_t>(rows, depth() > 1 ? neighbours * depth() : 2);
    const double edges = e.rate.seconds(edge_rows);
    const double interior = e.rate.seconds(rows - edge_rows);
    // Alone, its iterations between checks are one graph: the overhead
    // measured that way may be negative. With neighbours each is launched.
    const double overhead = neighbours > 0 ? std::max(0.0, e.overhead) : e.overhead;
    const double overlapped = p.compute_s + overhead + std::max(0.0, edges + p.exchange_s - interior);
    p.exposed_s = std::max(overlapped, e.step) - p.compute_s;
  } else if (depth() > 1 && neighbours > 0) {
    p.exposed_s = e.step + p.exchange_s;  // rounds: K sweeps, then the exchange, waited for
  } else {
    p.exposed_s = e.exchange + e.step;  // after the sweep, behind a barrier
  }
  if (!e.setup_in.empty()) {
    p.setup_s = e.setup_in.seconds(row_bytes_ * static_cast<double>(swept + 2));
    p.teardown_s = e.setup_out.seconds(row_bytes_ * static_cast<double>(rows));
  }
  p.iteration_s = p.compute_s + p.exposed_s;
  p.check_s = e.check ? e.check->seconds(rows) : 0.0;
  return p;
}

void SplitModel::share_memory(std::vector<DevicePrediction>& devices) const {
  std::vector<std::size_t> sharing;
  std::vector<std::int64_t> swept(entries_.size(), 0);
  std::int64_t all = 0;
  for (std::size_t k = 0; k < entries_.size(); ++k) {
    if (!entries_[k].rest || !std::isfinite(devices[k].compute_s)) continue;
    swept[k] = swept_rows(k, devices[k].rows);
    all += swept[k];
    sharing.push_back(k);
  }
  if (sharing.size() < 2) return;
  const auto others = static_cast<double>(sharing.size() - 1);
  for (std::size_t k : sharing) {
    const Entry& e = entries_[k];
    // The rows the others sweep meanwhile, against what each curve was measured beside.
    const auto r = static_cast<double>(swept[k]);
    const double beside_curve = others * r;
    const double beside_rest = static_cast<double>(e.rest_rows) - r;
    if (std::abs(beside_rest - beside_curve) < 1.0) continue;
    // Near an equal split both curves are measured beside about as many rows:
    // the curve, with more samples, counts, and the rest curve more as the
    // two conditions part (fully once they differ by half the rows).
    const double apart = std::min(1.0, std::abs(beside_rest - beside_curve) / (0.5 * static_cast<double>(e.rest_rows)));
    const double w =
        apart * std::clamp((static_cast<double>(all - swept[k]) - beside_curve) / (beside_rest - beside_curve), 0.0, 1.0);
    DevicePrediction& d = devices[k];
    const double priced = d.compute_s + w * (e.rest->seconds(swept[k]) * e.priced_slower - d.compute_s);
    d.iteration_s += priced - d.compute_s;
    d.compute_s = priced;
  }
}

std::int64_t SplitModel::swept_rows(std::size_t k, std::int64_t rows) const {
  const int neighbours = (k > 0 ? 1 : 0) + (k + 1 < entries_.size() ? 1 : 0);
  return rows_swept(rows, neighbours, variant_);
}

double SplitModel::iteration_s(const std::vector<DevicePrediction>& devices, const std::vector<std::int64_t>& rows) const {
  // From having its ghost rows to publishing its edge rows (in a round).
  std::vector<double> ready(entries_.size(), 0.0);
  double iteration = 0.0;
  for (std::size_t k = 0; k < entries_.size(); ++k) {
    const DevicePrediction& p = devices[k];
    const Entry& e = entries_[k];
    if (depth() > 1) {
      ready[k] = static_cast<double>(depth()) * (p.iteration_s - p.exchange_s);
    } else {
      ready[k] = e.device.kind == DeviceKind::Gpu ? e.rate.seconds(std::min<std::int64_t>(rows[k], 2))
                                                  : p.compute_s + e.step;
    }
    iteration = std::max(iteration, p.iteration_s);
  }
  // Neighbours A and B each need the other's last iterate: over two rounds
  // the chain runs A's work, the trip to B, B's work, the trip back.
  for (std::size_t k = 0; k + 1 < entries_.size(); ++k) {
    const double chain = ready[k] + ready[k + 1] + entries_[k].to_next + entries_[k].from_next;
    iteration = std::max(iteration, 0.5 * chain / static_cast<double>(depth()));
  }
  return iteration;
}

void SplitModel::price_uncached(const std::vector<std::int64_t>& rows, Prediction& out) const {
  std::vector<DevicePrediction> uncached = out.devices;
  bool any = false;
  for (std::size_t k = 0; k < entries_.size(); ++k) {
    DevicePrediction& d = out.devices[k];
    const Entry& e = entries_[k];
    if (e.device.kind != DeviceKind::Cpu || !(d.compute_s > 0.0) || !std::isfinite(d.compute_s)) continue;
    const std::int64_t swept = swept_rows(k, rows[k]);
    const double slower = e.rate.slowest_row_s(swept) * static_cast<double>(swept) * e.priced_slower;
    if (slower < kCacheStep * d.compute_s) continue;
    d.uncached_compute_s = slower;
    uncached[k].iteration_s += slower - d.compute_s;
    uncached[k].compute_s = slower;
    any = true;
    out.notes.push_back(fmt::format(
        "{}'s {} rows are priced at {:.3g} ms a sweep, and its curve sweeps more rows {:.1f} times slower a row: "
        "they fit a cache, and where other programs or guests share it (a virtual machine's L3) a solve may sweep "
        "them at up to that pace, {:.3g} ms",
        d.name, d.rows, d.compute_s * 1e3, slower / d.compute_s, slower * 1e3));
  }
  if (any) out.uncached_iteration_s = iteration_s(uncached, rows);
}

Prediction SplitModel::predict(const std::vector<std::int64_t>& rows) const {
  Prediction out;
  out.iterations = iterations_;
  out.checks = checks_;
  out.notes = notes_;
  for (std::size_t k = 0; k < entries_.size(); ++k) out.devices.push_back(device(k, rows[k]));
  share_memory(out.devices);
  out.iteration_s = iteration_s(out.devices, rows);
  for (std::size_t k = 0; k < entries_.size(); ++k) {
    const DevicePrediction& p = out.devices[k];
    out.check_s = std::max(out.check_s, p.check_s);
    out.setup_s = std::max(out.setup_s, p.setup_s);
    out.teardown_s = std::max(out.teardown_s, p.teardown_s);
    if (rows[k] > 0) out.fixed_s = std::max(out.fixed_s, entries_[k].fixed);
  }
  out.total_s = run_total_s(out);
  price_uncached(rows, out);
  return out;
}

Prediction predict(const Profile& profile, const std::vector<PlannedDevice>& devices, Precision precision,
                   std::int64_t nx, const StopRule& stop, const VariantChoice& variant) {
  // A device with no rows takes no part in the run (its neighbours meet).
  std::vector<PlannedDevice> taking_part;
  std::vector<std::int64_t> rows;
  for (const auto& d : devices) {
    if (d.rows < 0) {
      HETSTENCIL_THROW(InvalidArgument, d.name + " is given " + std::to_string(d.rows) + " rows: a device takes 0 or more");
    }
    if (d.rows == 0) continue;
    taking_part.push_back(d);
    rows.push_back(d.rows);
  }
  if (taking_part.empty()) HETSTENCIL_THROW(InvalidArgument, "no device is given rows to predict for");
  return SplitModel(profile, taking_part, precision, nx, stop, variant).predict(rows);
}

}  // namespace hetstencil
