#include <gtest/gtest.h>

#include "hetstencil/error.hpp"
#include "hetstencil/runtime.hpp"
#include "tests/test_support.hpp"
#include "core/even_split.hpp"

namespace hetstencil {
namespace {

TEST(EvenSplit, BlocksCoverInOrderAndDifferByAtMostOne) {
  for (std::int64_t total : {1, 7, 100, 1000003}) {
    for (std::int64_t parts = 1; parts <= std::min<std::int64_t>(total, 9); ++parts) {
      std::int64_t next = 0, smallest = total, largest = 0;
      for (std::int64_t k = 0; k < parts; ++k) {
        const Block b = even_block(total, parts, k);
        EXPECT_EQ(b.begin, next);
        next = b.end;
        smallest = std::min(smallest, b.size());
        largest = std::max(largest, b.size());
      }
      EXPECT_EQ(next, total);
      EXPECT_LE(largest - smallest, 1);
    }
  }
}

TEST(EvenSplit, EvenPlanRefusesMoreDevicesThanRows) {
  Runtime runtime(testing_support::cpu_devices(3, 1));
  Problem p;
  p.nx = 10;
  p.ny = 2;
  try {
    runtime.even_plan(p);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("more devices (3) than rows (2)"), std::string::npos) << e.what();
  }
  p.ny = 3;
  const Plan plan = runtime.even_plan(p);
  ASSERT_EQ(plan.parts.size(), 3u);
  EXPECT_EQ(plan.parts[2].first_row, 3);
}

}  // namespace
}  // namespace hetstencil
