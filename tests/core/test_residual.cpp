// The residual's fixed order (core/residual.hpp): a segment's squares and tree
// in the problem's precision, the segments in groups of 8, the rows as a tree
// in double (core/tree_sum.hpp), the same for any split of the rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/residual.hpp"
#include "core/tree_sum.hpp"
#include "hetstencil/error.hpp"
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

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

StopRule with_tolerance() {
  StopRule stop;
  stop.max_iterations = 100;
  stop.tolerance = 1e-3;
  return stop;
}

TEST(ResidualOrder, AnInfiniteOrNanNormMeetsNoTolerance) {
  const StopRule stop = with_tolerance();
  EXPECT_TRUE(tolerance_met(stop, 5, {1e-4, 1e-4}, {1.0, 1.0}));
  EXPECT_FALSE(tolerance_met(stop, 5, {inf, inf}, {inf, inf}));
  EXPECT_FALSE(tolerance_met(stop, 5, {1e-4, 1e-4}, {inf, inf}));
  EXPECT_FALSE(tolerance_met(stop, 5, {nan, nan}, {1.0, 1.0}));
  EXPECT_FALSE(tolerance_met(stop, 5, {1e-4, 1e-4}, {nan, nan}));
}

// A residual that turns infinite or NaN from a finite one stops the solve:
// no later iterate can meet the tolerance. Without a finite one to start from
// (below), or without a tolerance, nothing stops early.
TEST(ResidualOrder, AResidualThatBlowsUpStopsTheSolve) {
  StopRule stop = with_tolerance();
  EXPECT_TRUE(stops_after_check(stop, 5, {inf, inf}, {1.0, 1.0}));
  EXPECT_TRUE(stops_after_check(stop, 5, {nan, nan}, {1.0, 1.0}));
  EXPECT_FALSE(stops_after_check(stop, 5, {2.0, 2.0}, {1.0, 1.0}));
  EXPECT_FALSE(stops_after_check(stop, 5, {inf, inf}, {inf, inf}));
  EXPECT_FALSE(stops_after_check(stop, 0, {inf, inf}, {inf, inf}));
  stop.tolerance = 0.0;
  EXPECT_FALSE(stops_after_check(stop, 5, {inf, inf}, {1.0, 1.0}));
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

// The rows' tree written the other way: level by level, each pair's sum, a
// last value without a partner carried up as it is.
double rows_tree(std::vector<double> level) {
  if (level.empty()) return 0.0;
  while (level.size() > 1) {
    std::vector<double> up;
    for (std::size_t k = 0; k < level.size(); k += 2) up.push_back(k + 1 < level.size() ? level[k] + level[k + 1] : level[k]);
    level = up;
  }
  return level[0];
}

std::vector<double> row_sums(std::int64_t n, std::mt19937& random) {
  std::uniform_real_distribution<double> magnitude(-30.0, 30.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = std::exp(magnitude(random));
  return v;
}

TEST(ResidualOrder, RowsAreAddedAsABalancedTree) {
  std::mt19937 random(7);
  for (std::int64_t n : {1, 2, 3, 5, 8, 9, 13, 100, 1000, 4097}) {
    const std::vector<double> v = row_sums(n, random);
    const double expected = rows_tree(v);
    const double got = tree_sum(v.data(), n);
    EXPECT_EQ(std::memcmp(&got, &expected, sizeof(double)), 0) << "n " << n;
  }
  // Not the sums in row order: 1 + e + e + e is 1 that way, 1 + 2e as a tree.
  const double e = std::ldexp(1.0, -53);
  const std::vector<double> four{1.0, e, e, e};
  EXPECT_EQ(tree_sum(four.data(), 4), 1.0 + 2 * e);
  EXPECT_EQ(tree_sum(four.data(), 0), 0.0);
}

TEST(ResidualOrder, AnySplitsNodesGiveTheWholeTreesBits) {
  std::mt19937 random(11);
  for (int trial = 0; trial < 200; ++trial) {
    const std::int64_t n = std::uniform_int_distribution<std::int64_t>(1, 3000)(random);
    const std::vector<double> v = row_sums(n, random);
    const int parts = std::uniform_int_distribution<int>(1, 9)(random);
    std::vector<std::int64_t> cuts{0, n};
    for (int k = 1; k < parts; ++k) cuts.push_back(std::uniform_int_distribution<std::int64_t>(0, n)(random));
    std::sort(cuts.begin(), cuts.end());
    std::vector<TreeNode> cover;
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
      const std::vector<TreeNode> part = tree_cover(cuts[k], cuts[k + 1], n);
      EXPECT_LE(part.size(), static_cast<std::size_t>(2 * tree_levels(n) + 1));
      for (TreeNode node : part) {
        // A part's nodes add its own values only.
        EXPECT_GE(node.first(), cuts[k]);
        EXPECT_TRUE(cuts[k + 1] == n || node.first() + (std::int64_t{1} << node.level) <= cuts[k + 1]);
        node.sum = tree_node_sum(v.data(), n, node.level, node.index);
        cover.push_back(node);
      }
    }
    const double expected = tree_sum(v.data(), n);
    const double got = tree_root(cover, n);
    ASSERT_EQ(std::memcmp(&got, &expected, sizeof(double)), 0) << "n " << n << ", " << parts << " parts";
  }
}

TEST(ResidualOrder, NodesThatDoNotCoverTheValuesInOrderAreRefused) {
  const std::int64_t n = 6;
  const TreeNode a{1, 0, 1.0}, b{1, 1, 2.0}, c{1, 2, 3.0};  // values 0-1, 2-3, 4-5
  EXPECT_EQ(tree_root({a, b, c}, n), (1.0 + 2.0) + 3.0);
  EXPECT_THROW(tree_root({b, a, c}, n), Error);     // out of order
  EXPECT_THROW(tree_root({a, c}, n), Error);        // a gap
  EXPECT_THROW(tree_root({a, b}, n), Error);        // short of n
  EXPECT_THROW(tree_root({a, a, b, c}, n), Error);  // twice
  EXPECT_THROW(tree_root({a, b, c, {1, 3, 0.0}}, n), Error);  // past n
  EXPECT_EQ(tree_root({}, 0), 0.0);
}

}  // namespace
}  // namespace hetstencil
