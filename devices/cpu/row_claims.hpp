// The rows of a sweep cut into chunks that a team's workers claim as they go:
// each worker its own share first (the rows it first-touched, still in its
// caches where they fit), then what is left of the others' shares. A worker
// the host slows down (a vCPU the hypervisor deschedules, a core another
// process shares) then holds the team up by a chunk at most, not by its whole
// share. Any order of rows gives the same bits: a sweep reads one buffer and
// writes the other, and a residual keeps a sum per row and takes a maximum.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>

#include "core/even_split.hpp"

namespace hetstencil {

class RowClaims {
 public:
  /// Chunks a worker's share is cut into: enough that a worker slowed down
  /// hands most of its share to the others, few enough that a claim (one
  /// atomic operation) costs nothing beside a chunk's sweep.
  static constexpr std::int64_t kChunksPerShare = 16;

  /// For a team of `workers`; every share unclaimed.
  explicit RowClaims(int workers) { reset(workers); }

  /// Forgets the sweeps before: the team's sweeps are numbered from 1 again.
  /// Only while no worker sweeps.
  void reset(int workers) {
    shares_ = std::make_unique<Share[]>(static_cast<std::size_t>(workers));
  }

  /// Calls sweep(Block) for each chunk `worker` claims of rows [begin, end),
  /// which the first `active` workers share; a chunk is a whole number of
  /// `unit_rows` from its share's first row (its share's last may be
  /// shorter). Returns when no chunk is left unclaimed. Every active worker
  /// calls it once a sweep, with the same arguments but `worker`.
  template <class Sweep>
  void sweep(int worker, int active, std::int64_t begin, std::int64_t end, std::int64_t unit_rows, Sweep&& sweep) {
    Share& own = shares_[static_cast<std::size_t>(worker)];
    const std::uint64_t sweep_number = ++own.sweeps;
    for (int k = 0; k < active; ++k) {
      const int owner = (worker + k) % active;
      const Block share = even_block(end - begin, active, owner);
      const std::int64_t rows = share.end - share.begin;
      if (rows <= 0) continue;
      const std::int64_t units = (rows + unit_rows - 1) / unit_rows;
      const std::int64_t chunk = (units + kChunksPerShare - 1) / kChunksPerShare * unit_rows;
      const auto chunks = static_cast<std::uint64_t>((rows + chunk - 1) / chunk);
      for (std::uint64_t c; claim(shares_[static_cast<std::size_t>(owner)].next, sweep_number, chunks, c);) {
        const std::int64_t first = begin + share.begin + static_cast<std::int64_t>(c) * chunk;
        sweep(Block{first, std::min(first + chunk, begin + share.end)});
      }
    }
  }

 private:
  // A share's next chunk: the sweep's number (high bits) and the chunk's
  // index (low kIndexBits). Whoever claims first in a sweep opens the share.
  static constexpr int kIndexBits = 24;
  static constexpr std::uint64_t kIndexMask = (std::uint64_t(1) << kIndexBits) - 1;

  static bool claim(std::atomic<std::uint64_t>& next, std::uint64_t sweep_number, std::uint64_t chunks,
                    std::uint64_t& chunk) {
    std::uint64_t seen = next.load(std::memory_order_relaxed);
    for (;;) {
      const std::uint64_t number = seen >> kIndexBits;
      std::uint64_t after = 0;
      if (number < sweep_number) {
        chunk = 0;
        after = (sweep_number << kIndexBits) | 1;
      } else if (number == sweep_number && (seen & kIndexMask) < chunks) {
        chunk = seen & kIndexMask;
        after = seen + 1;
      } else {
        return false;
      }
      if (next.compare_exchange_weak(seen, after, std::memory_order_relaxed)) return true;
    }
  }

  // A worker's share and its count of sweeps, a cache line of their own.
  struct alignas(64) Share {
    std::atomic<std::uint64_t> next{0};
    std::uint64_t sweeps = 0;  // written by its worker alone
  };

  std::unique_ptr<Share[]> shares_;
};

}  // namespace hetstencil
