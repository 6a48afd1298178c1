// Progress of a solve in flight: reported from the runtime's own thread while
// the devices iterate, never after solve() returns, and without changing a bit.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "hetstencil/reference.hpp"
#include "hetstencil/runtime.hpp"
#include "tests/test_support.hpp"

namespace hetstencil {
namespace {

TEST(Progress, ReportsIterationsAndChecksWhileTheSolveRuns) {
  Runtime rt(testing_support::cpu_devices(2, 1));
  Problem p;
  p.nx = p.ny = 192;
  p.stop.max_iterations = 6000;
  p.stop.tolerance = 1e-30;  // never met: every check runs
  p.stop.check_every = 50;

  std::mutex mutex;
  std::vector<Progress> seen;
  const Result r = rt.solve(p, rt.even_plan(p), [&](const Progress& pr) {
    const std::lock_guard<std::mutex> lock(mutex);
    seen.push_back(pr);
  }, 0.002);
  std::size_t after_return = 0;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    after_return = seen.size();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(seen.size(), after_return) << "called after solve() returned";

  ASSERT_FALSE(seen.empty()) << "a solve of " << r.report.solve_s << " s reported no progress";
  for (std::size_t k = 0; k < seen.size(); ++k) {
    EXPECT_EQ(seen[k].max_iterations, 6000);
    EXPECT_GE(seen[k].iteration, 0);
    EXPECT_LE(seen[k].iteration, 6000);
    if (k > 0) {
      EXPECT_GE(seen[k].iteration, seen[k - 1].iteration);
      EXPECT_GE(seen[k].elapsed_s, seen[k - 1].elapsed_s);
    }
    if (seen[k].checked) {
      EXPECT_GT(seen[k].residual.l2, 0.0);
      EXPECT_GT(seen[k].initial_residual.l2, 0.0);
    }
  }

  // Watching changes nothing.
  const Result unwatched = rt.solve(p, rt.even_plan(p));
  EXPECT_EQ(unwatched.grid<double>().values(), r.grid<double>().values());
  EXPECT_EQ(unwatched.report.residual.l2, r.report.residual.l2);
}

TEST(Progress, AFailingCallbackDoesNotFailTheSolve) {
  Runtime rt(testing_support::cpu_devices(1, 1));
  Problem p;
  p.nx = p.ny = 128;
  p.stop.max_iterations = 3000;
  std::atomic<int> calls{0};
  const Result r = rt.solve(p, rt.even_plan(p), [&](const Progress&) {
    ++calls;
    throw std::runtime_error("display gone");
  }, 0.001);
  EXPECT_LE(calls.load(), 1) << "called again after it threw";
  EXPECT_EQ(r.grid<double>().values(), solve_reference(p).grid<double>().values());
}

}  // namespace
}  // namespace hetstencil
