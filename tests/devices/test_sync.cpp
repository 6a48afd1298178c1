#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

#include <thread>
#include <vector>

#include "devices/cpu/worker_team.hpp"
#include "devices/sync.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

TEST(Barrier, NoThreadRunsAheadOfAnother) {
  for (int spins : {0, 1000}) {
    constexpr int kThreads = 4, kRounds = 300;
    Barrier barrier(kThreads, spins);
    std::atomic<bool> abort{false};
    std::vector<std::atomic<int>> round(kThreads);
    std::atomic<int> violations{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int r = 0; r < kRounds; ++r) {
          round[t].store(r);
          barrier.wait(abort);
          for (int o = 0; o < kThreads; ++o) {
            if (round[o].load() < r) ++violations;
          }
          barrier.wait(abort);
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(violations.load(), 0) << "spins " << spins;
  }
}

TEST(Counter, WaitReturnsOncePublishedAndThrowsOnAbort) {
  Counter c(0);
  std::atomic<bool> abort{false};
  std::thread publisher([&] { c.advance_to(3); });
  c.wait_at_least(3, abort);
  publisher.join();
  EXPECT_EQ(c.value(), 3);
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    abort.store(true);
  });
  EXPECT_THROW(c.wait_at_least(4, abort), Aborted);
  aborter.join();
}

TEST(WorkerTeam, RunsEveryWorkerAndReportsTheRealFailure) {
  WorkerTeam team("t", {{}, {}, {}}, 0);
  std::vector<int> seen(3, 0);
  team.run([&](int w) { seen[static_cast<std::size_t>(w)] = w + 1; });
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3}));
  // Worker 1 fails while the others wait at the barrier: they must be released
  // and the caller must see worker 1's error, not an Aborted.
  try {
    team.run([&](int w) {
      if (w == 1) throw std::runtime_error("worker one failed");
      team.sync();
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "worker one failed");
  }
  // The team is still usable afterwards.
  team.run([&](int w) { seen[static_cast<std::size_t>(w)] = 0; });
  EXPECT_EQ(seen, (std::vector<int>{0, 0, 0}));
}

TEST(WorkerTeam, UsesTheWorkersItIsGivenAndTheirBarrier) {
  WorkerTeam team("t", {{}, {}, {}}, 0);
  std::vector<int> runs(3, 0);
  std::atomic<int> before{0};
  std::atomic<int> early{0};
  team.use(2);
  // Two workers meet at the barrier: neither passes it before both arrived.
  team.run([&](int w) {
    ++runs[static_cast<std::size_t>(w)];
    before.fetch_add(1);
    team.sync();
    if (before.load() != 2) early.fetch_add(1);
  });
  EXPECT_EQ(runs, (std::vector<int>{1, 1, 0}));
  EXPECT_EQ(early.load(), 0);
  team.use(3);
  team.run([&](int w) {
    ++runs[static_cast<std::size_t>(w)];
    team.sync();
  });
  EXPECT_EQ(runs, (std::vector<int>{2, 2, 1}));
  // A failed run leaves workers' arrivals at the barrier; the next run's
  // barrier forgets them and holds every worker again.
  EXPECT_THROW(team.run([&](int w) {
    if (w == 2) throw std::runtime_error("worker two failed");
    team.sync();
  }),
               std::runtime_error);
  before = 0;
  team.run([&](int) {
    before.fetch_add(1);
    team.sync();
    if (before.load() != 3) early.fetch_add(1);
  });
  EXPECT_EQ(early.load(), 0);
  try {
    team.run([&](int w) {
      if (w == 0) team.use(1);
    });
    FAIL() << "a running team changed its workers";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("t: a team's workers change only between runs"), std::string::npos) << e.what();
  }
  for (int wrong : {0, 4}) {
    try {
      team.use(wrong);
      FAIL() << "a team of 3 used " << wrong;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("t: a team of 3 workers cannot use " + std::to_string(wrong)),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(RunOnThreads, RunsEveryTaskAndReportsTheRealFailure) {
  std::vector<int> seen(4, 0);
  EXPECT_GE(run_on_threads(4, [&](std::size_t k) { seen[k] = static_cast<int>(k) + 1; }), 0.0);
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3, 4}));
  // Task 2 fails; the others wait until on_failure releases them, then leave
  // with an Aborted: the caller sees task 2's error.
  std::atomic<bool> abort{false};
  Counter never(0);
  try {
    run_on_threads(3, [&](std::size_t k) {
      if (k == 2) throw std::runtime_error("task two failed");
      never.wait_at_least(1, abort);
    }, [&] { abort.store(true); });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "task two failed");
  }
}

}  // namespace
}  // namespace hetstencil
