#include "devices/halo_port.hpp"

#include <algorithm>
#include <chrono>

#include "hetstencil/error.hpp"
#include "core/residual.hpp"

namespace hetstencil {

bool HaloPort::has_neighbour(Side side) const {
  return side == Side::Top ? index_ > 0 : index_ + 1 < exchange_->devices_.size();
}

const Device* HaloPort::neighbour(Side side) const {
  if (!has_neighbour(side)) return nullptr;
  return exchange_->devices_[side == Side::Top ? index_ - 1 : index_ + 1];
}

void HaloPort::wait_neighbours(std::int64_t t) {
  for (Side side : {Side::Top, Side::Bottom}) {
    if (!has_neighbour(side)) continue;
    const std::size_t k = side == Side::Top ? index_ - 1 : index_ + 1;
    exchange_->published_[k]->wait_at_least(t, exchange_->aborted_);
  }
}

EdgeRows HaloPort::neighbour_edge(Side side, std::int64_t t) const {
  const std::size_t k = side == Side::Top ? index_ - 1 : index_ + 1;
  return exchange_->devices_[k]->edge_rows(opposite(side), t);
}

void HaloPort::publish(std::int64_t t) { exchange_->published_[index_]->advance_to(t); }

CheckOutcome HaloPort::check(std::int64_t t, const double* row_sums, double max_abs) {
  return exchange_->check(index_, t, row_sums, max_abs);
}

std::atomic<bool>& HaloPort::abort_flag() { return exchange_->aborted_; }

Exchange::Exchange(std::vector<Device*> devices, std::vector<RowRange> rows, const StencilJob& job, double h,
                   int spins)
    : devices_(std::move(devices)),
      rows_(std::move(rows)),
      job_(job),
      h_(h),
      ports_(devices_.size()),
      row_sums_(static_cast<std::size_t>(job.ny), 0.0) {
  for (std::size_t k = 0; k < devices_.size(); ++k) {
    ports_[k].exchange_ = this;
    ports_[k].index_ = k;
    published_.push_back(std::make_unique<Counter>(spins));
  }
}

Progress Exchange::progress() {
  Progress p;
  p.max_iterations = job_.stop.max_iterations;
  p.iteration = p.max_iterations;
  for (const auto& c : published_) p.iteration = std::min(p.iteration, c->value());
  const std::lock_guard<std::mutex> lock(check_mutex_);
  p.checked = checks_completed_ > 0;
  p.residual = last_;
  p.initial_residual = initial_;
  return p;
}

CheckOutcome Exchange::check(std::size_t k, std::int64_t t, const double* row_sums, double max_abs) {
  std::unique_lock<std::mutex> lock(check_mutex_);
  std::copy(row_sums, row_sums + rows_[k].count, row_sums_.begin() + (rows_[k].first - 1));
  max_abs_ = std::max(max_abs_, max_abs);
  const std::int64_t generation = checks_completed_;
  if (++arrived_ == devices_.size()) {
    const Residual r = finish_residual(row_sums_.data(), job_.ny, max_abs_, h_);
    if (t == 0) initial_ = r;
    outcome_ = {r, stops_after_check(job_.stop, t, r, initial_)};
    last_ = r;
    last_t_ = t;
    converged_ = tolerance_met(job_.stop, t, r, initial_);
    arrived_ = 0;
    max_abs_ = 0.0;
    ++checks_completed_;
    check_done_.notify_all();
    return outcome_;
  }
  while (checks_completed_ == generation) {
    if (aborted_.load()) HETSTENCIL_THROW(Aborted, "stopped: another device of this solve failed");
    check_done_.wait_for(lock, std::chrono::milliseconds(2));
  }
  return outcome_;
}

}  // namespace hetstencil
