// One Runtime shared by threads: its solves take turns, each returns the
// sequential reference's bits, and nothing hangs or crashes.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "hetstencil/error.hpp"
#include "hetstencil/reference.hpp"
#include "hetstencil/runtime.hpp"
#include "tests/test_support.hpp"

namespace hetstencil {
namespace {

Problem problem_of(std::int64_t n, std::int64_t iterations) {
  Problem p;
  p.nx = p.ny = n;
  p.boundary = Boundary::constant(0.5);
  p.stop.max_iterations = iterations;
  return p;
}

TEST(RuntimeThreads, SolvesFromSeveralThreadsTakeTurnsAndAreExact) {
  Runtime rt(testing_support::cpu_devices(2, 2));
  constexpr int kThreads = 4;
  std::vector<Problem> problems;
  for (int k = 0; k < kThreads; ++k) problems.push_back(problem_of(48 + 8 * k, 200 + 50 * k));
  std::vector<Result> results(kThreads);
  std::vector<std::string> errors(kThreads);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k) {
    threads.emplace_back([&, k] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();
      try {
        for (int round = 0; round < 3; ++round) results[k] = rt.solve(problems[k]);
      } catch (const std::exception& e) {
        errors[k] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int k = 0; k < kThreads; ++k) {
    ASSERT_EQ(errors[k], "") << "thread " << k;
    const Result expected = solve_reference(problems[k]);
    EXPECT_EQ(results[k].grid<double>().values(), expected.grid<double>().values()) << "thread " << k;
    EXPECT_EQ(results[k].report.iterations, problems[k].stop.max_iterations) << "thread " << k;
  }
}

// The callback runs while the solve holds the Runtime: a solve started there
// could never begin, so it is refused.
TEST(RuntimeThreads, ASolveFromItsOwnProgressCallbackIsRefused) {
  Runtime rt(testing_support::cpu_devices(2, 1));
  const Problem p = problem_of(96, 16000);
  std::atomic<bool> called{false};
  std::string error;
  rt.solve(p, rt.even_plan(p), [&](const Progress&) {
    if (called.exchange(true)) return;
    try {
      rt.solve(problem_of(8, 1));
    } catch (const InvalidArgument& e) {
      error = e.what();
    }
  }, 0.001);
  ASSERT_TRUE(called) << "no progress was reported";
  EXPECT_NE(error.find("Runtime::solve called from the progress callback of a solve on the same Runtime"),
            std::string::npos) << error;
}

}  // namespace
}  // namespace hetstencil
