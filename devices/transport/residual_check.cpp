#include "devices/transport/residual_check.hpp"

#include <algorithm>
#include <chrono>

#include "core/residual.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {

ResidualCheck::ResidualCheck(std::vector<RowRange> slabs, const StencilJob& job, double h, Combine combine)
    : slabs_(std::move(slabs)), job_(job), h_(h), combine_(std::move(combine)),
      row_sums_(static_cast<std::size_t>(job.units()), 0.0) {
  std::int64_t first = job.units() + 1;
  std::int64_t end = 1;
  for (const RowRange& slab : slabs_) {
    first = std::min(first, slab.first);
    end = std::max(end, slab.end());
  }
  cover_ = tree_cover(first - 1, end - 1, job.units());
}

CheckOutcome ResidualCheck::join(std::size_t k, std::int64_t t, const double* row_sums, double max_abs,
                                 const std::atomic<bool>& abort) {
  std::unique_lock<std::mutex> lock(mutex_);
  std::copy(row_sums, row_sums + slabs_[k].count, row_sums_.begin() + (slabs_[k].first - 1));
  max_abs_ = std::max(max_abs_, max_abs);
  const std::int64_t generation = completed_;
  if (++arrived_ == slabs_.size()) {
    const std::int64_t n = job_.units();
    std::vector<TreeNode> cover = cover_;
    for (TreeNode& node : cover) node.sum = tree_node_sum(row_sums_.data(), n, node.level, node.index);
    if (combine_) combine_(cover, max_abs_);
    double l2_divisor = 0.0;
    double max_divisor = 0.0;
    residual_divisors(job_.stencil.source_scale, job_.stencil.dimension, h_, l2_divisor, max_divisor);
    const Residual r = residual_norms(tree_root(cover, n), max_abs_, l2_divisor, max_divisor);
    if (t == 0) record_.initial_residual = r;
    last_outcome_ = {r, stops_after_check(job_.stop, t, r, record_.initial_residual)};
    record_.final_residual = r;
    record_.final_iteration = t;
    record_.converged = tolerance_met(job_.stop, t, r, record_.initial_residual);
    arrived_ = 0;
    max_abs_ = 0.0;
    ++completed_;
    done_.notify_all();
    return last_outcome_;
  }
  while (completed_ == generation) {
    if (abort.load()) HETSTENCIL_THROW(Aborted, "stopped: another device of this solve failed");
    done_.wait_for(lock, std::chrono::milliseconds(2));
  }
  return last_outcome_;
}

void ResidualCheck::fill(Progress& p) {
  const std::lock_guard<std::mutex> lock(mutex_);
  p.checked = completed_ > 0;
  p.residual = record_.final_residual;
  p.initial_residual = record_.initial_residual;
}

ExchangeOutcome ResidualCheck::outcome() {
  const std::lock_guard<std::mutex> lock(mutex_);
  return record_;
}

}  // namespace hetstencil
