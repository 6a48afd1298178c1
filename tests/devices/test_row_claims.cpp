#include "devices/cpu/row_claims.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace hetstencil {
namespace {

// A count of sweeps for each row of [0, rows).
struct Sweeps {
  explicit Sweeps(std::int64_t rows) : count(static_cast<std::size_t>(rows)) {}
  void add(Block b) {
    for (std::int64_t r = b.begin; r < b.end; ++r) count[static_cast<std::size_t>(r)].fetch_add(1);
  }
  std::vector<std::atomic<int>> count;
};

// One sweep of rows [begin, end) by `workers` (indices of the `active`
// sharing them), each on a thread of its own, chunks of `least_rows` at least.
void sweep_together(RowClaims& claims, const std::vector<int>& workers, int active, std::int64_t begin,
                    std::int64_t end, Sweeps& sweeps, std::int64_t least_rows = 1) {
  std::vector<std::thread> threads;
  for (int w : workers) {
    threads.emplace_back([&, w] { claims.sweep(w, active, begin, end, least_rows, [&](Block b) { sweeps.add(b); }); });
  }
  for (std::thread& t : threads) t.join();
}

std::vector<int> first(int n) {
  std::vector<int> out;
  for (int w = 0; w < n; ++w) out.push_back(w);
  return out;
}

TEST(RowClaims, EveryRowIsSweptOnceInEverySweepWhateverTheTeam) {
  for (int active : {1, 2, 3, 7}) {
    RowClaims claims(active);
    for (auto [begin, end] : {std::pair<std::int64_t, std::int64_t>{0, 1}, {5, 6}, {3, 40}, {1, 1000}, {0, 5}}) {
      for (int round = 0; round < 4; ++round) {
        Sweeps sweeps(end + 1);
        sweep_together(claims, first(active), active, begin, end, sweeps, round < 2 ? 1 : 5);
        for (std::int64_t r = 0; r <= end; ++r) {
          EXPECT_EQ(sweeps.count[static_cast<std::size_t>(r)].load(), r >= begin && r < end ? 1 : 0)
              << "row " << r << " of [" << begin << ", " << end << "), " << active << " workers, sweep " << round;
        }
      }
    }
  }
}

TEST(RowClaims, AWorkerThatComesLateFindsItsShareSweptByTheOthers) {
  RowClaims claims(4);
  Sweeps sweeps(100);
  sweep_together(claims, {0, 1, 2}, 4, 0, 100, sweeps);
  for (std::int64_t r = 0; r < 100; ++r) EXPECT_EQ(sweeps.count[static_cast<std::size_t>(r)].load(), 1) << "row " << r;
  int late = 0;
  claims.sweep(3, 4, 0, 100, 1, [&](Block) { ++late; });
  EXPECT_EQ(late, 0);
  // The next sweep, with all four on time, is shared as before.
  Sweeps next(100);
  sweep_together(claims, first(4), 4, 0, 100, next);
  for (std::int64_t r = 0; r < 100; ++r) EXPECT_EQ(next.count[static_cast<std::size_t>(r)].load(), 1) << "row " << r;
}

TEST(RowClaims, AWorkerStartsOnItsOwnShare) {
  RowClaims claims(2);
  std::vector<Block> taken;
  claims.sweep(1, 2, 10, 74, 1, [&](Block b) { taken.push_back(b); });
  ASSERT_FALSE(taken.empty());
  EXPECT_EQ(taken.front().begin, 10 + even_block(64, 2, 1).begin);
  // Alone, it sweeps its share in chunks, then the other's.
  EXPECT_EQ(taken.size(), 2 * static_cast<std::size_t>(RowClaims::kChunksPerShare));
  EXPECT_EQ(taken.back().end, 10 + even_block(64, 2, 0).end);
}

TEST(RowClaims, ChunksAreWholeUnitsFromTheirSharesFirstRow) {
  RowClaims claims(2);
  std::vector<Block> taken;
  claims.sweep(0, 2, 0, 64, 10, [&](Block b) { taken.push_back(b); });
  const std::vector<Block> chunks = {{0, 10}, {10, 20}, {20, 30}, {30, 32}, {32, 42}, {42, 52}, {52, 62}, {62, 64}};
  ASSERT_EQ(taken.size(), chunks.size());
  for (std::size_t k = 0; k < chunks.size(); ++k) {
    EXPECT_EQ(taken[k].begin, chunks[k].begin) << "chunk " << k;
    EXPECT_EQ(taken[k].end, chunks[k].end) << "chunk " << k;
  }
}

}  // namespace
}  // namespace hetstencil
