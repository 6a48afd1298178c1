#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "hetstencil/error.hpp"
#include "hetstencil/problem.hpp"

namespace hetstencil {
namespace {

Problem valid() {
  Problem p;
  p.nx = 7;
  p.ny = 3;
  return p;
}

TEST(Problem, DefaultsAreValid) { EXPECT_NO_THROW(valid().validate()); }

TEST(Problem, RejectsBadSizes) {
  for (std::int64_t bad : {std::int64_t(0), std::int64_t(-5), (std::int64_t(1) << 30) + 1}) {
    Problem p = valid();
    p.nx = bad;
    EXPECT_THROW(p.validate(), InvalidArgument) << bad;
    p = valid();
    p.ny = bad;
    EXPECT_THROW(p.validate(), InvalidArgument) << bad;
  }
}

TEST(Problem, RejectsBadStopRules) {
  Problem p = valid();
  p.stop.max_iterations = -1;
  EXPECT_THROW(p.validate(), InvalidArgument);
  p = valid();
  p.stop.tolerance = -1e-6;
  EXPECT_THROW(p.validate(), InvalidArgument);
  p.stop.tolerance = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(p.validate(), InvalidArgument);
  p = valid();
  p.stop.check_every = 0;
  EXPECT_THROW(p.validate(), InvalidArgument);
}

TEST(Problem, RejectsMismatchedSourceGrid) {
  Problem p = valid();
  p.source = Source::from_grid(std::vector<double>(20, 1.0));
  try {
    p.validate();
    FAIL() << "a 20-value grid for a 3 x 7 interior was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("needs 21"), std::string::npos) << e.what();
  }
  p.source = Source::from_grid(std::vector<double>(21, 1.0));
  EXPECT_NO_THROW(p.validate());
  p.source = Source::from_function(nullptr);
  EXPECT_THROW(p.validate(), InvalidArgument);
}

TEST(Problem, ParsesPrecisions) {
  EXPECT_EQ(parse_precision("float"), Precision::Float);
  EXPECT_EQ(parse_precision("DOUBLE"), Precision::Double);
  EXPECT_THROW(parse_precision("half"), InvalidArgument);
  EXPECT_EQ(to_string(Precision::Float), "float");
  EXPECT_EQ(value_bytes(Precision::Double), 8u);
}

TEST(Problem, StepCoversTheLongerSide) {
  Problem p = valid();
  EXPECT_DOUBLE_EQ(p.h(), 1.0 / 8.0);
  p.ny = 99;
  EXPECT_DOUBLE_EQ(p.h(), 1.0 / 100.0);
}

TEST(StopRule, ChecksWhereItShould) {
  StopRule s;
  s.max_iterations = 10;
  EXPECT_FALSE(s.checks_at(0));
  EXPECT_TRUE(s.checks_at(10));
  s.tolerance = 1e-3;
  s.check_every = 4;
  EXPECT_TRUE(s.checks_at(0));
  EXPECT_TRUE(s.checks_at(4));
  EXPECT_FALSE(s.checks_at(5));
  EXPECT_TRUE(s.checks_at(10));
}

}  // namespace
}  // namespace hetstencil
