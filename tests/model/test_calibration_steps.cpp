// The CPU calibration's points: where a step of the time a row gets a point
// of its own (edge_point).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include "model/calibration_steps.hpp"

namespace hetstencil {
namespace {

// Times of `rows` at `pace` seconds a row, times `step` from row `from` on.
std::vector<double> paced(const std::vector<std::int64_t>& rows, double pace, std::int64_t from, double step) {
  std::vector<double> s;
  for (std::int64_t r : rows) s.push_back(static_cast<double>(r) * pace * (r >= from ? step : 1.0));
  return s;
}

TEST(EdgePoint, SplitsTheStepOfTheTimeARowBetweenTwoPoints) {
  const std::vector<std::int64_t> rows{256, 512, 1024, 2048, 4096, 8192};
  EXPECT_EQ(edge_point(rows, paced(rows, 1e-6, 2048, 1.22)), 1536);
  EXPECT_EQ(edge_point(rows, paced(rows, 1e-6, 512, 1.5)), 384);
}

TEST(EdgePoint, LeavesAFlatOrFallingPaceAlone) {
  const std::vector<std::int64_t> rows{4, 8, 16, 32, 64, 128};
  EXPECT_EQ(edge_point(rows, paced(rows, 1e-6, 0, 1.0)), 0);
  // Fixed costs: the time a row falls as the rows grow.
  std::vector<double> s;
  for (std::int64_t r : rows) s.push_back(2e-5 + static_cast<double>(r) * 1e-6);
  EXPECT_EQ(edge_point(rows, s), 0);
}

TEST(EdgePoint, SplitsARiseJustPastTheSpreadOfAPointAndLeavesOneWithinIt) {
  const std::vector<std::int64_t> rows{1024, 2048, 4096};
  EXPECT_EQ(edge_point(rows, paced(rows, 1e-6, 2048, 1.0 + kEdgePaceRise * 0.9)), 0);
  EXPECT_EQ(edge_point(rows, paced(rows, 1e-6, 2048, 1.0 + kEdgePaceRise * 1.1)), 1536);
}

TEST(EdgePoint, TakesTheStepThatCostsTheMostSeconds) {
  // 1024 -> 2048 rows: the time a row rises 50%, 1.02 ms beyond the lower
  // pace; 4096 -> 8192 rows: 12%, 1.47 ms beyond. The first step, or the
  // steepest, would give 1536.
  EXPECT_EQ(edge_point({1024, 2048, 4096, 8192}, {1.024e-3, 3.072e-3, 6.144e-3, 13.76e-3}), 6144);
}

TEST(EdgePoint, LeavesARiseTooSmallToMoveASplitOfTheWholeGridAlone) {
  // 512 rows 9% slower a row than 256 (the spread of a few rows' sweeps),
  // under 1% of 8192 rows' time.
  const std::vector<std::int64_t> rows{256, 512, 1024, 2048, 4096, 8192};
  std::vector<double> s = paced(rows, 1e-6, 0, 1.0);
  s[1] *= 1.09;
  EXPECT_EQ(edge_point(rows, s), 0);
  // The same rise with 2048 rows the most measured is 2% of its time.
  const std::vector<std::int64_t> fewer{256, 512, 1024, 2048};
  std::vector<double> t = paced(fewer, 1e-6, 0, 1.0);
  t[1] *= 1.09;
  EXPECT_EQ(edge_point(fewer, t), 384);
}

TEST(EdgePoint, LeavesNeighboursTooCloseToSplitAndPointsNotMeasured) {
  EXPECT_EQ(edge_point({1000, 1100}, {1e-3, 2e-3}), 0);
  // 7 and 8 rows are 1.14 times apart, with no row count between them.
  EXPECT_EQ(edge_point({4, 7, 8}, {4e-6, 7e-6, 16e-6}), 0);
  EXPECT_EQ(edge_point({1000, 2000, 4000}, {0.0, 4e-3, 8e-3}), 0);
  EXPECT_EQ(edge_point({1000, 2000, 4000}, {std::nan(""), 4e-3, 8e-3}), 0);
  EXPECT_EQ(edge_point({1000, 2000}, {1e-3}), 0);
  EXPECT_EQ(edge_point({}, {}), 0);
}

TEST(EdgePoint, OnlyThePointsMeasuredSetTheSlowestTime) {
  // An infinite time, or one past the last row count, would raise the least
  // step to split past every step there is.
  EXPECT_EQ(edge_point({1024, 2048, 4096, 8192}, {1.024e-3, 3.072e-3, 6.144e-3, INFINITY}), 1536);
  EXPECT_EQ(edge_point({1024, 2048, 4096}, {1.024e-3, 3.072e-3, 6.144e-3, 1.0}), 1536);
}

TEST(NoFasterThanBelow, AnAddedPointIsNoFasterARowThanThePointBelowItsStep) {
  // An H200 guest's curve: 1536, 1664 and 1792 rows added between 1024 and 2048.
  const std::vector<std::int64_t> rows{1024, 1536, 1664, 1792, 2048};
  const std::vector<double> seconds{0.9095e-3, 0.9711e-3, 1.3315e-3, 1.7194e-3, 2.5339e-3};
  const std::map<std::int64_t, std::int64_t> below{{1536, 1024}, {1792, 1536}, {1664, 1536}};
  const std::vector<double> out = no_faster_than_below(rows, seconds, below);
  const double pace = 0.9095e-3 / 1024;
  EXPECT_DOUBLE_EQ(out[0], seconds[0]);
  EXPECT_DOUBLE_EQ(out[1], pace * 1536);
  EXPECT_DOUBLE_EQ(out[2], pace * 1664) << "below a point itself raised";
  EXPECT_DOUBLE_EQ(out[3], seconds[3]) << "already slower a row";
  EXPECT_DOUBLE_EQ(out[4], seconds[4]) << "not an added point";
}

TEST(NoFasterThanBelow, PointsNotAddedAtAStepKeepTheirTimes) {
  // Fixed costs: fewer rows slower a row, and nothing added.
  const std::vector<std::int64_t> rows{4, 8, 16};
  const std::vector<double> seconds{4e-5, 5e-5, 7e-5};
  EXPECT_EQ(no_faster_than_below(rows, seconds, {}), seconds);
}

}  // namespace
}  // namespace hetstencil
