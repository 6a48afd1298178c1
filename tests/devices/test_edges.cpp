// The edges of the device layer: slabs no deeper than the halo, iteration counts
// around the depth, and worker threads the system will not give.
#include <gtest/gtest.h>

#include <string>

#include "hetstencil/error.hpp"
#include "hetstencil/reference.hpp"
#include "hetstencil/runtime.hpp"
#include "tests/test_support.hpp"

namespace hetstencil {
namespace {

using testing_support::expect_same_bits;

// Blocked with depth K on 1..3 CPU devices of 1..K+1 rows each, for 1..2K+1
// iterations (rounds cut short at the end, and at checks with a tolerance):
// every result has the reference's bits; a plan with a device of fewer rows
// than K beside others is refused.
TEST(BlockedEdges, SlabsAroundTheDepthMatchTheReference) {
  for (int devices = 1; devices <= 3; ++devices) {
    Runtime runtime(testing_support::cpu_devices(devices, 2));
    for (int depth : {1, 2, 3, 4, 8}) {
      for (std::int64_t rows = 1; rows <= depth + 1; ++rows) {
        for (std::int64_t iterations = 1; iterations <= 2 * depth + 1; ++iterations) {
          for (bool tolerance : {false, true}) {
            Problem p = testing_support::exactness_problem(5, devices * rows,
                                                           iterations % 2 ? Precision::Double : Precision::Float,
                                                           tolerance);
            p.stop.max_iterations = iterations;
            if (tolerance) p.stop.check_every = 1 + iterations % 3;
            Plan plan({}, {Variant::Blocked, depth});
            for (int k = 0; k < devices; ++k) {
              plan.parts.push_back({static_cast<std::size_t>(k), 1 + k * rows, rows});
            }
            SCOPED_TRACE("K " + std::to_string(depth) + ", " + std::to_string(devices) + " devices of " +
                         std::to_string(rows) + " rows, " + std::to_string(iterations) + " iterations" +
                         (tolerance ? ", checks every " + std::to_string(p.stop.check_every) : ""));
            if (devices > 1 && rows < depth) {
              EXPECT_THROW(runtime.solve(p, plan), InvalidArgument);
              continue;
            }
            expect_same_bits(runtime.solve(p, plan), solve_reference(p));
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace hetstencil
