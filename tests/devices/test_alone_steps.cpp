// How a GPU slab without neighbours walks its iterations
// (devices/cuda/alone_steps.hpp), a plain function: tested here without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "devices/cuda/alone_steps.hpp"

namespace hetstencil::cuda {
namespace {

struct Walk {
  struct Stretch {
    std::int64_t t, steps;
    bool last;
  };
  struct Check {
    std::int64_t t;
    bool step;
  };
  std::vector<Stretch> sweeps;
  std::vector<Check> checks;
  std::vector<std::int64_t> posts;
  std::vector<std::int64_t> order;  // the iterates swept, in order, by stretches and checks alike
  std::int64_t kept = -1;
};

// The walk of `stop`, the solve stopping at the check of iterate `stop_at` (-1: at none).
Walk walk(const StopRule& stop, std::int64_t stop_at = -1) {
  Walk w;
  w.kept = iterate_alone(
      stop,
      [&](std::int64_t t, bool step) {
        w.checks.push_back({t, step});
        if (step) w.order.push_back(t);
        return t == stop_at;
      },
      [&](std::int64_t t, std::int64_t steps, bool last) {
        w.sweeps.push_back({t, steps, last});
        for (std::int64_t s = t; s < t + steps; ++s) w.order.push_back(s);
      },
      [&](std::int64_t t) { w.posts.push_back(t); });
  return w;
}

StopRule rule(std::int64_t iterations, double tolerance, std::int64_t every) {
  StopRule s;
  s.max_iterations = iterations;
  s.tolerance = tolerance;
  s.check_every = every;
  return s;
}

// Every iterate before the last is swept once, in order; each stretch stops
// short of a check and makes at most kMostGraphSteps; only the one that ends
// the iterations is the last; every iterate reached is posted, in order.
void expect_whole(const StopRule& stop, const Walk& w) {
  ASSERT_EQ(static_cast<std::int64_t>(w.order.size()), stop.max_iterations);
  for (std::int64_t t = 0; t < stop.max_iterations; ++t) EXPECT_EQ(w.order[static_cast<std::size_t>(t)], t);
  for (const auto& s : w.sweeps) {
    EXPECT_LE(s.steps, kMostGraphSteps);
    EXPECT_EQ(s.last, s.t + s.steps == stop.max_iterations);
    for (std::int64_t t = s.t; t < s.t + s.steps; ++t) EXPECT_FALSE(stop.checks_at(t)) << t;
  }
  ASSERT_FALSE(w.posts.empty());
  for (std::size_t k = 1; k < w.posts.size(); ++k) EXPECT_LT(w.posts[k - 1], w.posts[k]);
  EXPECT_EQ(w.posts.back(), stop.max_iterations);
  EXPECT_EQ(w.kept, stop.max_iterations);
}

TEST(AloneSteps, WithoutATolerance) {
  for (std::int64_t iterations : {1, 63, 64, 65, 200, 953}) {
    const StopRule stop = rule(iterations, 0.0, 100);
    const Walk w = walk(stop);
    expect_whole(stop, w);
    ASSERT_EQ(w.checks.size(), 1u);  // only the last iterate's, which sweeps nothing
    EXPECT_EQ(w.checks[0].t, iterations);
    EXPECT_FALSE(w.checks[0].step);
  }
}

TEST(AloneSteps, WithATolerance) {
  for (std::int64_t every : {1, 7, 30, 64, 100}) {
    const StopRule stop = rule(250, 1e-9, every);
    const Walk w = walk(stop);
    expect_whole(stop, w);
    std::vector<std::int64_t> checked;
    for (const auto& c : w.checks) {
      checked.push_back(c.t);
      EXPECT_EQ(c.step, c.t < stop.max_iterations);
    }
    std::vector<std::int64_t> expected;
    for (std::int64_t t = 0; t <= stop.max_iterations; ++t) {
      if (stop.checks_at(t)) expected.push_back(t);
    }
    EXPECT_EQ(checked, expected) << "every " << every;
  }
}

TEST(AloneSteps, AStopAtACheckKeepsThatIterateAndSweepsNoFurther) {
  const StopRule stop = rule(250, 1e-9, 30);
  const Walk w = walk(stop, 60);
  EXPECT_EQ(w.kept, 60);
  EXPECT_EQ(w.checks.back().t, 60);
  EXPECT_EQ(w.order.back(), 60);  // the check's own sweep, whose iterate 61 is not kept
  EXPECT_EQ(w.posts.back(), 60);
  for (const auto& s : w.sweeps) EXPECT_LT(s.t + s.steps, 61);
}

}  // namespace
}  // namespace hetstencil::cuda
