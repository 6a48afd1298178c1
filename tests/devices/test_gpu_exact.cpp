// GPU devices alone and beside CPU devices give the bits of the sequential
// reference. Skipped where there is no GPU (or not enough of them).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <tuple>

#include "devices/cuda/cuda_check.hpp"
#include "devices/cuda/cuda_device.hpp"
#include "devices/cuda/cuda_info.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/reference.hpp"
#include "hetstencil/runtime.hpp"
#include "tests/test_support.hpp"

namespace hetstencil {
namespace {

struct Size {
  std::int64_t nx, ny;
};

int gpus_needed(const std::string& devices) {
  int n = 0;
  for (std::size_t p = devices.find("gpu"); p != std::string::npos; p = devices.find("gpu", p + 1)) ++n;
  return n;
}

using testing_support::expect_same_bits;

RuntimeOptions on(const std::string& devices) {
  RuntimeOptions o;
  o.devices = devices;
  return o;
}

using Case = std::tuple<std::string, Size, Precision, bool>;
class GpuExact : public ::testing::TestWithParam<Case> {};

TEST_P(GpuExact, MatchesReference) {
  const auto [devices, size, precision, tolerance] = GetParam();
  if (cuda_device_count() < gpus_needed(devices)) GTEST_SKIP() << "needs " << gpus_needed(devices) << " GPU(s)";
  const Problem p = testing_support::exactness_problem(size.nx, size.ny, precision, tolerance);
  Runtime runtime(on(devices));
  if (static_cast<std::int64_t>(runtime.devices().size()) > p.ny) {
    EXPECT_THROW(runtime.solve(p), InvalidArgument);
    return;
  }
  const Result r = runtime.solve(p);
  expect_same_bits(r, solve_reference(p));
  // A GPU's compute time is its sweeps on the GPU (timed by events), which
  // cannot exceed the time it ran: the model learns from it.
  for (const auto& d : r.report.devices) {
    if (d.name.rfind("gpu", 0) != 0 || r.report.iterations == 0) continue;
    EXPECT_GT(d.compute_s, 0.0) << d.name;
    EXPECT_LE(d.compute_s, 1.5 * d.total_s) << d.name;
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const auto [devices, size, precision, tolerance] = info.param;
  std::string name = devices;
  for (auto& c : name) c = c == ',' ? '_' : c;
  return name + "_" + std::to_string(size.nx) + "x" + std::to_string(size.ny) + "_" + to_string(precision) +
         (tolerance ? "_tol" : "_fixed");
}

INSTANTIATE_TEST_SUITE_P(Devices, GpuExact,
                         ::testing::Combine(::testing::Values("gpu0", "gpu0,gpu1", "cpu0,gpu0", "cpu0,gpu0,gpu1"),
                                            ::testing::Values(Size{1, 1}, Size{3, 7}, Size{257, 129},
                                                              Size{4097, 1025}),
                                            ::testing::Values(Precision::Float, Precision::Double),
                                            ::testing::Bool()),
                         case_name);

TEST(GpuExactPlans, UnevenSplitsWithGridAndFunctionSources) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  const bool two = cuda_device_count() >= 2;
  Runtime runtime(on(two ? "cpu0,gpu0,gpu1" : "cpu0,gpu0"));
  const std::size_t n = runtime.devices().size();
  std::mt19937 rng(11);
  for (int trial = 0; trial < 10; ++trial) {
    Problem p;
    p.nx = 1 + static_cast<std::int64_t>(rng() % 700);
    p.ny = static_cast<std::int64_t>(n) + static_cast<std::int64_t>(rng() % 90);
    p.precision = trial % 2 ? Precision::Float : Precision::Double;
    p.stop.max_iterations = 1 + static_cast<std::int64_t>(rng() % 25);
    if (trial % 3 == 0) {
      std::vector<double> f(static_cast<std::size_t>(p.nx * p.ny));
      for (auto& v : f) v = std::uniform_real_distribution<double>(-40, 40)(rng);
      p.source = Source::from_grid(f);
    } else if (trial % 3 == 1) {
      p.source = Source::from_function([](double x, double y) { return std::sin(7 * x) + y * y; });
      p.boundary = Boundary::from_function([](double x, double y) { return x - 2 * y; });
    }
    // Random non-empty row counts in a random device order.
    std::vector<std::int64_t> cuts;
    for (std::size_t k = 1; k < n; ++k) cuts.push_back(1 + static_cast<std::int64_t>(rng() % static_cast<unsigned>(p.ny - 1)));
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    if (cuts.size() + 1 != n) continue;
    std::vector<std::size_t> order(n);
    for (std::size_t k = 0; k < n; ++k) order[k] = k;
    std::shuffle(order.begin(), order.end(), rng);
    Plan plan;
    std::int64_t first = 1;
    for (std::size_t k = 0; k < n; ++k) {
      const std::int64_t end = k + 1 < n ? cuts[k] + 1 : p.ny + 1;
      plan.parts.push_back({order[k], first, end - first});
      first = end;
    }
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + std::to_string(p.nx) + " x " + std::to_string(p.ny));
    expect_same_bits(runtime.solve(p, plan), solve_reference(p));
  }
}

// Blocked across GPUs and CPU devices: K-deep ghost zones (the GPUs' tile
// kernels sweep them too), K rows a side traded every K iterations by peer
// copies between GPUs and through the host beside a CPU device.
TEST(GpuExactPlans, BlockedAcrossDevices) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  std::vector<std::string> sets = {"cpu0,gpu0"};
  if (cuda_device_count() >= 2) sets.insert(sets.end(), {"gpu0,gpu1", "cpu0,gpu0,gpu1"});
  std::mt19937 rng(17);
  for (const std::string& set : sets) {
    Runtime runtime(on(set));
    const auto n = static_cast<std::int64_t>(runtime.devices().size());
    for (int trial = 0; trial < 10; ++trial) {
      const int depth = std::vector<int>{1, 2, 3, 4, 7, 8}[static_cast<std::size_t>(trial % 6)];
      const testing_support::BlockedTrial t = testing_support::random_blocked_trial(rng, trial, depth, n, 900, 300, 60);
      SCOPED_TRACE(set + ", " + t.description);
      expect_same_bits(runtime.solve(t.problem, t.plan), solve_reference(t.problem));
    }
  }
}

TEST(GpuErrors, AGpuTooSmallForItsSlabNamesTheDeviceAndWhatItDid) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  DeviceInfo info;
  info.name = "gpu0";
  info.kind = DeviceKind::Gpu;
  auto device = make_cuda_device(info, 0, {}, false);
  StencilJob job;
  job.precision = Precision::Double;
  job.nx = std::int64_t(1) << 20;
  job.ny = std::int64_t(1) << 20;
  try {
    device->attach(job, RowRange{1, job.ny});
    FAIL() << "a 2^40-cell slab fitted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("gpu0"), std::string::npos) << what;
    EXPECT_NE(what.find("allocating its slab"), std::string::npos) << what;
    EXPECT_NE(what.find("GiB) in all"), std::string::npos) << what;
  }
}

TEST(GpuErrors, AFailingCallNamesTheCallAndTheContext) {
  try {
    HETSTENCIL_CUDA_CHECK(cudaErrorInvalidDevice, "gpu7: selecting the GPU");
    FAIL() << "no exception";
  } catch (const CudaError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("gpu7: selecting the GPU"), std::string::npos) << what;
    EXPECT_NE(what.find("cudaErrorInvalidDevice"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace hetstencil
