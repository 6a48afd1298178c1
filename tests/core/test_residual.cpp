// The residual's fixed order (core/residual.hpp): a segment's squares and tree
// in the problem's precision, the segments in groups of 8 and the rows in double.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/residual.hpp"
#include "hetstencil/reference.hpp"

namespace hetstencil {
namespace {

// A segment's tree written the other way: recursively, halves first.
template <class T>
T tree(const std::vector<T>& squares, std::size_t first, std::size_t count) {
  if (count == 1) return squares[first];
  return tree(squares, first, count / 2) + tree(squares, first + count / 2, count / 2);
}

template <class T>
std::vector<T> rhos(std::int64_t n) {
  std::vector<T> rho(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) rho[static_cast<std::size_t>(j)] = T(1) + T(1e-3) * T(j % 97) - T(j % 5);
  return rho;
}

template <class T>
void expect_tree_in(std::int64_t nx) {
  const std::vector<T> rho = rhos<T>(nx);
  const RowResidual r = residual_segments<T>(0, nx, [&](std::int64_t j) { return rho[static_cast<std::size_t>(j)]; });
  double expected = 0.0;
  double group = 0.0;
  std::int64_t segment = 0;
  const std::int64_t segments = (nx + kResidualSegment - 1) / kResidualSegment;
  T largest = T(0);
  for (std::int64_t j0 = 0; j0 < nx; j0 += kResidualSegment, ++segment) {
    std::vector<T> squares(kResidualSegment, T(0));
    for (std::int64_t k = 0; k < kResidualSegment && j0 + k < nx; ++k) {
      const T v = rho[static_cast<std::size_t>(j0 + k)];
      squares[static_cast<std::size_t>(k)] = v * v;
      largest = std::fmax(largest, std::fabs(v));
    }
    group += double(tree(squares, 0, kResidualSegment));
    if (segment % kResidualGroup == kResidualGroup - 1 || segment == segments - 1) {
      expected += group;
      group = 0.0;
    }
  }
  EXPECT_EQ(std::memcmp(&r.sum_sq, &expected, sizeof(double)), 0) << r.sum_sq << " against " << expected;
  EXPECT_EQ(r.max_abs, double(largest));
}

TEST(ResidualOrder, SquaresInTheProblemsPrecisionSegmentsInGroups) {
  expect_tree_in<float>(300);  // two whole segments and a part
  expect_tree_in<double>(300);
  expect_tree_in<float>(2500);  // two whole groups of segments and a part
  expect_tree_in<double>(2500);
  // The float tree is not the double one: the order says which.
  const std::vector<float> rho = rhos<float>(128);
  const RowResidual r = residual_segments<float>(0, 128, [&](std::int64_t j) { return rho[static_cast<std::size_t>(j)]; });
  const RowResidual wide =
      residual_segments<double>(0, 128, [&](std::int64_t j) { return double(rho[static_cast<std::size_t>(j)]); });
  EXPECT_NE(r.sum_sq, wide.sum_sq);
  EXPECT_NEAR(r.sum_sq, wide.sum_sq, 1e-6 * wide.sum_sq);
}

TEST(ResidualOrder, AnInfiniteOrNanNormMeetsNoTolerance) {
  StopRule stop;
  stop.max_iterations = 100;
  stop.tolerance = 1e-3;
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(tolerance_met(stop, 5, {1e-4, 1e-4}, {1.0, 1.0}));
  EXPECT_FALSE(tolerance_met(stop, 5, {inf, inf}, {inf, inf}));
  EXPECT_FALSE(tolerance_met(stop, 5, {1e-4, 1e-4}, {inf, inf}));
  EXPECT_FALSE(tolerance_met(stop, 5, {nan, nan}, {1.0, 1.0}));
  EXPECT_FALSE(tolerance_met(stop, 5, {1e-4, 1e-4}, {nan, nan}));
}

TEST(ResidualOrder, AFloatGridWhoseSquaresOverflowRunsToItsIterationLimit) {
  Problem p;
  p.nx = 40;
  p.ny = 30;
  p.precision = Precision::Float;
  p.boundary = Boundary::constant(1e30);  // finite in float, its residual's square is not
  p.stop.max_iterations = 25;
  p.stop.tolerance = 0.5;
  const Result r = solve_reference(p);
  EXPECT_TRUE(std::isinf(r.report.initial_residual.l2));
  EXPECT_FALSE(r.report.converged);
  EXPECT_EQ(r.report.iterations, 25);
}

}  // namespace
}  // namespace hetstencil
