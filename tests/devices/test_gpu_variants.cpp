// The GPU variants on one GPU: blocked gives the reference's bits for every
// depth and any iteration count; async2 and async3 converge to the solution
// (their bits are not defined). Skipped where there is no GPU.
#include <gtest/gtest.h>

#include <tuple>

#include "devices/cuda/cuda_info.hpp"
#include "devices/cuda/gpu_variants.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/reference.hpp"
#include "hetstencil/runtime.hpp"
#include "tests/test_support.hpp"

namespace hetstencil {
namespace {

Problem problem(std::int64_t nx, std::int64_t ny, Precision precision, std::int64_t iterations) {
  Problem p;
  p.nx = nx;
  p.ny = ny;
  p.precision = precision;
  p.boundary = Boundary::from_function([](double x, double y) { return x - 0.5 * y; });
  p.stop.max_iterations = iterations;
  return p;
}

struct Size {
  std::int64_t nx, ny;
};
using Case = std::tuple<Size, Precision, int>;
class BlockedExact : public ::testing::TestWithParam<Case> {};

TEST_P(BlockedExact, EqualsPlainSweepsBitForBit) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  const auto [size, precision, depth] = GetParam();
  // A multiple of the depth and one that leaves a shorter last pass.
  for (std::int64_t iterations : {static_cast<std::int64_t>(3 * depth), static_cast<std::int64_t>(3 * depth + 1), std::int64_t{17}}) {
    const Problem p = problem(size.nx, size.ny, precision, iterations);
    GpuVariantSolver solver(0, p);
    solver.advance({Variant::Blocked, depth}, iterations);
    EXPECT_TRUE(same_bits(solver.download(), solve_reference(p).solution))
        << size.nx << "x" << size.ny << " " << to_string(precision) << " K=" << depth << " after " << iterations;
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const auto [size, precision, depth] = info.param;
  return std::to_string(size.nx) + "x" + std::to_string(size.ny) + "_" + to_string(precision) + "_K" +
         std::to_string(depth);
}

INSTANTIATE_TEST_SUITE_P(Depths, BlockedExact,
                         ::testing::Combine(::testing::Values(Size{1, 1}, Size{3, 7}, Size{257, 129}, Size{1000, 33},
                                                              Size{130, 300}),
                                            ::testing::Values(Precision::Float, Precision::Double),
                                            ::testing::Values(1, 2, 3, 5, 8)),
                         case_name);

TEST(GpuVariants, SyncAndBlockedWithAGridSourceMatchTheReference) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  Problem p = problem(301, 77, Precision::Float, 23);
  p.source = Source::from_function([](double x, double y) { return 1.0 + x * y; });
  for (VariantChoice c : {VariantChoice{Variant::Sync, 1}, VariantChoice{Variant::Blocked, 4}}) {
    GpuVariantSolver solver(0, p);
    solver.advance(c, 23);
    EXPECT_TRUE(same_bits(solver.download(), solve_reference(p).solution)) << to_string(c.variant);
  }
}

// A reset copies the initial iterate on the GPU; the passes after it must wait
// for the copy (a grid large enough that an unordered copy would still run).
TEST(GpuVariants, ALargeGridAfterAResetStillGivesTheReferenceBits) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  Problem p;
  p.nx = p.ny = 3000;
  p.precision = Precision::Float;
  p.stop.max_iterations = 10;
  GpuVariantSolver solver(0, p);
  solver.advance({Variant::Sync, 1}, 7);
  solver.reset();
  solver.advance({Variant::Blocked, 2}, 10);
  EXPECT_TRUE(same_bits(solver.download(), solve_reference(p).solution));
}

TEST(GpuVariants, AsynchronousVariantsConvergeToTheSolution) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  // Small enough that 12000 Jacobi iterations converge far below 1e-6.
  const Problem p = problem(40, 36, Precision::Double, 12000);
  GpuVariantSolver converged(0, p);
  converged.advance({Variant::Sync, 1}, 12000);
  for (VariantChoice c : {VariantChoice{Variant::Async2, 4}, VariantChoice{Variant::Async2, 16},
                          VariantChoice{Variant::Async3, 4}, VariantChoice{Variant::Async3, 16}}) {
    GpuVariantSolver solver(0, p);
    const double start = solver.max_relative_error(converged);
    solver.advance(c, 200);
    const double early = solver.max_relative_error(converged);
    solver.advance(c, 11800);
    const double late = solver.max_relative_error(converged);
    EXPECT_LT(early, start) << to_string(c.variant) << " alpha " << c.param;
    EXPECT_LT(late, 1e-6) << to_string(c.variant) << " alpha " << c.param << ": started at " << start;
  }
}

// Through the runtime, as `solve --variant` runs them: blocked keeps every bit
// (iterate, residual, the iteration a tolerance stops at); the asynchronous
// ones meet a tolerance.
TEST(GpuVariants, TheRuntimeRunsThemOnOneGpu) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  RuntimeOptions o;
  o.devices = "gpu0";
  Runtime runtime(o);
  for (bool tolerance : {false, true}) {
    Problem p = problem(301, 203, Precision::Double, 61);
    if (tolerance) {
      p.stop.tolerance = 0.5;
      p.stop.check_every = 7;
      p.stop.max_iterations = 400;
    }
    Plan plan = runtime.even_plan(p);
    plan.variant = {Variant::Blocked, 5};
    testing_support::expect_same_bits(runtime.solve(p, plan), solve_reference(p));
  }
  Problem p = problem(64, 64, Precision::Float, 20000);
  p.stop.tolerance = 1e-3;
  p.stop.check_every = 50;
  for (Variant v : {Variant::Async2, Variant::Async3}) {
    Plan plan = runtime.even_plan(p);
    plan.variant = {v, 8};
    const Result r = runtime.solve(p, plan);
    EXPECT_TRUE(r.report.converged) << to_string(v);
    EXPECT_LE(r.report.residual.l2, 1e-3 * r.report.initial_residual.l2) << to_string(v);
    EXPECT_GT(r.report.devices.front().compute_s, 0.0) << to_string(v);
  }
}

TEST(GpuVariants, RefusesDepthsOutOfRange) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  GpuVariantSolver solver(0, problem(16, 16, Precision::Float, 4));
  EXPECT_THROW(solver.advance({Variant::Blocked, 0}, 4), InvalidArgument);
  EXPECT_THROW(solver.advance({Variant::Async2, 33}, 4), InvalidArgument);
  EXPECT_THROW(solver.advance({Variant::Blocked, kMaxBlockedDepth + 1}, 4), InvalidArgument);
  EXPECT_EQ(parse_variant("async3"), Variant::Async3);
  EXPECT_THROW(parse_variant("wild"), InvalidArgument);
}

}  // namespace
}  // namespace hetstencil
