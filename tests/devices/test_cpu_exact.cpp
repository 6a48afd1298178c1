// Every split over CPU devices gives the bits of the sequential reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <tuple>

#include "devices/cpu/cpu_device.hpp"
#include "devices/cpu/jacobi_kernels.hpp"
#include "devices/device_map.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/reference.hpp"
#include "hetstencil/runtime.hpp"
#include "runtime/executor.hpp"
#include "tests/test_support.hpp"

namespace hetstencil {
namespace {

struct Size {
  std::int64_t nx, ny;
};

using testing_support::expect_same_bits;

using Case = std::tuple<Size, int, int, Precision, bool>;

class CpuExact : public ::testing::TestWithParam<Case> {};

TEST_P(CpuExact, MatchesReference) {
  const auto [size, devices, threads, precision, tolerance] = GetParam();
  const Problem p = testing_support::exactness_problem(size.nx, size.ny, precision, tolerance);
  Runtime runtime(testing_support::cpu_devices(devices, threads));
  ASSERT_EQ(runtime.devices().size(), static_cast<std::size_t>(devices));
  if (devices > p.ny) {
    EXPECT_THROW(runtime.solve(p), InvalidArgument);
    return;
  }
  expect_same_bits(runtime.solve(p), solve_reference(p));
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const auto [size, devices, threads, precision, tolerance] = info.param;
  return std::to_string(size.nx) + "x" + std::to_string(size.ny) + "_d" + std::to_string(devices) + "_t" +
         std::to_string(threads) + "_" + to_string(precision) + (tolerance ? "_tol" : "_fixed");
}

INSTANTIATE_TEST_SUITE_P(Sizes, CpuExact,
                         ::testing::Combine(::testing::Values(Size{1, 1}, Size{3, 7}, Size{257, 129}, Size{1000, 33}),
                                            ::testing::Values(1, 2, 3, 4), ::testing::Values(1, 2, 3),
                                            ::testing::Values(Precision::Float, Precision::Double),
                                            ::testing::Bool()),
                         case_name);

TEST(CpuExactPlans, UnevenRandomSplitsWithGridAndFunctionSources) {
  std::mt19937 rng(7);
  Runtime runtime(testing_support::cpu_devices(3, 2));
  for (int trial = 0; trial < 12; ++trial) {
    Problem p;
    p.nx = 5 + static_cast<std::int64_t>(rng() % 60);
    p.ny = 3 + static_cast<std::int64_t>(rng() % 50);
    p.precision = trial % 2 ? Precision::Float : Precision::Double;
    p.stop.max_iterations = 1 + static_cast<std::int64_t>(rng() % 30);
    if (trial % 3 == 0) {
      std::vector<double> f(static_cast<std::size_t>(p.nx * p.ny));
      for (auto& v : f) v = std::uniform_real_distribution<double>(-50, 50)(rng);
      p.source = Source::from_grid(f);
    } else if (trial % 3 == 1) {
      p.source = Source::from_function([](double x, double y) { return std::exp(x) * std::cos(3 * y); });
      p.boundary = Boundary::from_function([](double x, double y) { return x * x - y; });
    }
    // Three devices in a random order with random row counts (each >= 1).
    const std::int64_t a = 1 + static_cast<std::int64_t>(rng() % static_cast<unsigned>(p.ny - 2));
    const std::int64_t b = 1 + static_cast<std::int64_t>(rng() % static_cast<unsigned>(p.ny - a - 1));
    std::vector<std::size_t> order{0, 1, 2};
    std::shuffle(order.begin(), order.end(), rng);
    const Plan plan{{{order[0], 1, a}, {order[1], 1 + a, b}, {order[2], 1 + a + b, p.ny - a - b}}};
    SCOPED_TRACE("trial " + std::to_string(trial));
    expect_same_bits(runtime.solve(p, plan), solve_reference(p));
  }
}

// Blocked across devices: K sweeps a round over K-deep ghost zones, K rows
// traded a side; rounds cut short at checks and at the last iteration.
TEST(CpuExactPlans, BlockedAcrossDevicesMatchesReference) {
  std::mt19937 rng(11);
  Runtime runtime(testing_support::cpu_devices(3, 2));
  for (int trial = 0; trial < 24; ++trial) {
    const testing_support::BlockedTrial t = testing_support::random_blocked_trial(rng, trial, 1 + trial % 6, 3, 42, 30, 45);
    SCOPED_TRACE(t.description);
    expect_same_bits(runtime.solve(t.problem, t.plan), solve_reference(t.problem));
  }
}

TEST(CpuExactPlans, ZeroIterationsReturnTheInitialGrid) {
  Problem p;
  p.nx = 6;
  p.ny = 5;
  p.stop.max_iterations = 0;
  p.boundary = Boundary::constant(2.0);
  Runtime runtime(testing_support::cpu_devices(2, 1));
  const Result r = runtime.solve(p);
  EXPECT_EQ(r.report.iterations, 0);
  EXPECT_EQ(r.grid<double>().values(), initial_grid<double>(p).values());
  for (const auto& d : r.report.devices) EXPECT_EQ(d.compute_p90_s, 0.0) << "no rounds, no percentile";
}

// A CPU device times each round: its slow iterations are reported beside its mean.
TEST(CpuExactPlans, ReportsTheNinetiethPercentileOfItsIterations) {
  Problem p;
  p.nx = 256;
  p.ny = 64;
  p.stop.max_iterations = 50;
  Runtime runtime(testing_support::cpu_devices(2, 1));
  const Result r = runtime.solve(p);
  for (const auto& d : r.report.devices) {
    const double mean = d.compute_s / static_cast<double>(r.report.iterations);
    EXPECT_GT(d.compute_p90_s, 0.0) << d.name;
    // A tenth of the iterations take the percentile at least, and they are part of the sum.
    EXPECT_LE(d.compute_p90_s, 10.0 * mean) << d.name << ": one iteration's time, not a sum";
  }
}

TEST(CpuExactPlans, BadPlansAreRejected) {
  Problem p;
  p.nx = 4;
  p.ny = 6;
  Runtime runtime(testing_support::cpu_devices(2, 1));
  const Plan gap{{{0, 1, 2}, {1, 4, 3}}};
  EXPECT_THROW(runtime.solve(p, gap), InvalidArgument);
  const Plan short_plan{{{0, 1, 2}, {1, 3, 3}}};
  EXPECT_THROW(runtime.solve(p, short_plan), InvalidArgument);
  const Plan twice{{{0, 1, 2}, {0, 3, 4}}};
  EXPECT_THROW(runtime.solve(p, twice), InvalidArgument);
  const Plan unknown{{{5, 1, 6}}};
  EXPECT_THROW(runtime.solve(p, unknown), InvalidArgument);
  // The asynchronous variants run on one GPU alone: not on a CPU device, not across devices.
  for (const Plan& variant : {Plan({{0, 1, 6}}, {Variant::Async3, 2}), Plan({{0, 1, 3}, {1, 4, 3}}, {Variant::Async2, 4})}) {
    try {
      runtime.solve(p, variant);
      ADD_FAILURE() << "a " << to_string(variant.variant.variant) << " plan on CPU devices ran";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("one GPU alone"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(runtime.solve(p, Plan({{0, 1, 6}}, {Variant::Blocked, 0})), InvalidArgument);
  // Blocked's K-deep ghost rows come from one neighbour: every device needs K rows.
  try {
    runtime.solve(p, Plan({{0, 1, 2}, {1, 3, 4}}, {Variant::Blocked, 3}));
    ADD_FAILURE() << "a blocked plan with a device of fewer rows than its depth ran";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("has 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_variant("wild"), InvalidArgument);
  EXPECT_EQ(parse_variant(to_string(Variant::Async3)), Variant::Async3);
}

// Slabs larger than the cache are swept with non-temporal stores; a device told
// its cache is one byte takes that path on small grids too.
TEST(CpuExactPlans, StreamingStoresGiveTheSameBits) {
  const Topology topology = load_topology();
  std::vector<std::unique_ptr<CpuDevice>> owned;
  std::vector<Device*> devices;
  for (const auto& spec : map_devices(topology, DeviceMapOptions{2, 2, "", false, {}})) {
    owned.push_back(std::make_unique<CpuDevice>(spec.info, spec.worker_cpus, 1, 50));
    devices.push_back(owned.back().get());
  }
  for (Precision precision : {Precision::Float, Precision::Double}) {
    for (std::int64_t nx : {1, 2, 7, 8, 9, 31, 100}) {
      Problem p;
      p.nx = nx;
      p.ny = 9;
      p.precision = precision;
      p.stop.max_iterations = 15;
      if (nx % 2) p.source = Source::from_function([](double x, double y) { return 30 * x - y; });
      const Plan plan{{{1, 1, 4}, {0, 5, 5}}};
      SCOPED_TRACE(to_string(precision) + " nx " + std::to_string(nx));
      expect_same_bits(execute(p, plan, devices, 50), solve_reference(p));
    }
  }
  EXPECT_TRUE(!kHasStreamingStores || owned[0]->streaming_stores());
}

}  // namespace
}  // namespace hetstencil
