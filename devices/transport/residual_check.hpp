// The residual check of one solve among threads of one process: each device
// hands in its rows' squared-residual sums, the last to arrive adds them as
// the residual's tree (core/tree_sum.hpp: the bits do not depend on the split)
// and all leave with the same outcome. Where the solve spans processes, the
// last to arrive sends the nodes of the tree that this process's rows cover and
// receives the other processes' (Combine), so that every process finds the
// same root: the same bits for any number of processes.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "core/tree_sum.hpp"
#include "devices/device.hpp"
#include "devices/transport/transport.hpp"

namespace hetstencil {

class ResidualCheck {
 public:
  /// Replaces the tree's nodes over this process's rows (tree_cover's, with
  /// their sums) with every process's, in row order, and `max_abs` with the
  /// largest over the processes.
  using Combine = std::function<void(std::vector<TreeNode>& cover, double& max_abs)>;

  /// `slabs`: the rows of each device taking part, in any order that covers
  /// 1..ny, or this process's part of them where `combine` fetches the rest.
  ResidualCheck(std::vector<RowRange> slabs, const StencilJob& job, double h, Combine combine = {});
  ResidualCheck(const ResidualCheck&) = delete;
  ResidualCheck& operator=(const ResidualCheck&) = delete;

  /// Device k's part of the check at iterate t (see Endpoint::check); returns
  /// once every device has handed in its part. Throws Aborted once `abort` is
  /// set while it waits.
  CheckOutcome join(std::size_t k, std::int64_t t, const double* row_sums, double max_abs,
                    const std::atomic<bool>& abort);
  /// The checks' part of a progress report (checked, residuals); safe from any thread.
  void fill(Progress& p);
  ExchangeOutcome outcome();

 private:
  std::vector<RowRange> slabs_;
  const StencilJob& job_;
  double h_;
  Combine combine_;
  std::vector<TreeNode> cover_;  // the tree's nodes over the rows of every slab
  std::mutex mutex_;
  std::condition_variable done_;
  std::vector<double> row_sums_;
  double max_abs_ = 0.0;
  std::size_t arrived_ = 0;
  std::int64_t completed_ = 0;
  CheckOutcome last_outcome_;
  ExchangeOutcome record_;
};

}  // namespace hetstencil
