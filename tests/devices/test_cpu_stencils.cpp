// Any stencil on the CPU devices gives the bits of the sequential reference,
// over uneven splits of rows (2-D) or planes (3-D), with a fixed count of
// iterations and with a tolerance stop; the refusals name the stencil.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "hetstencil/error.hpp"
#include "hetstencil/npy.hpp"
#include "hetstencil/reference.hpp"
#include "hetstencil/runtime.hpp"
#include "tests/test_support.hpp"

namespace hetstencil {
namespace {

using testing_support::expect_same_bits;

Problem problem_of(const Stencil& s, Precision precision, bool tolerance, int variety) {
  return testing_support::stencil_problem(s, precision, 23, 17, 15, tolerance, variety, 23);
}

Stencil random_stencil(int dimension, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> offset(-3, 3);
  std::uniform_real_distribution<double> weight(-1.0, 1.0);
  Stencil s;
  s.name = "random" + std::to_string(seed);
  s.dimension = dimension;
  while (s.points.size() < 9) {
    StencilPoint q{offset(rng), offset(rng), dimension == 3 ? offset(rng) : 0, weight(rng)};
    bool fresh = !(q.dx == 0 && q.dy == 0 && q.dz == 0);
    for (const StencilPoint& o : s.points) fresh = fresh && !(o.dx == q.dx && o.dy == q.dy && o.dz == q.dz);
    if (fresh) s.points.push_back(q);
  }
  s.diagonal = 9.0 + weight(rng);  // dominant: the tolerance stop is met
  s.source_scale = {0.5 + weight(rng), seed % 2 == 0};
  return s;
}

std::vector<Stencil> stencils() {
  std::vector<Stencil> out;
  for (const std::string& name : builtin_stencil_names()) out.push_back(Stencil::builtin(name));
  out.push_back(random_stencil(2, 4));
  out.push_back(random_stencil(3, 5));
  return out;
}

TEST(CpuStencils, EveryStencilOverUnevenSplitsGivesTheReferenceBits) {
  for (int devices : {2, 3}) {
    Runtime runtime(testing_support::cpu_devices(devices, 2));
    ASSERT_EQ(runtime.devices().size(), static_cast<std::size_t>(devices));
    int variety = 0;
    for (const Stencil& s : stencils()) {
      for (Precision precision : {Precision::Float, Precision::Double}) {
        for (bool tolerance : {false, true}) {
          const Problem p = problem_of(s, precision, tolerance, variety++);
          SCOPED_TRACE(s.name + " on " + std::to_string(devices) + " devices, " + to_string(precision) +
                       (tolerance ? ", tolerance" : ", fixed"));
          testing_support::expect_reference(runtime, p, testing_support::uneven_plan(p, static_cast<std::size_t>(devices)));
        }
      }
    }
  }
}

// Zeros of both signs and subnormals through a sweep's sums and its division
// by the diagonal (no power of two here): the reference's bits, as on GPUs.
TEST(CpuStencils, ValuesThroughTheSubnormalsGiveTheReferenceBits) {
  Runtime runtime(testing_support::cpu_devices(2, 2));
  for (const Stencil& s : {Stencil::builtin("box9"), Stencil::builtin("star4"), random_stencil(2, 4)}) {
    for (Precision precision : {Precision::Float, Precision::Double}) {
      const Problem p = testing_support::through_subnormals(problem_of(s, precision, false, 0));
      SCOPED_TRACE(s.name + ", " + to_string(precision));
      testing_support::expect_reference(runtime, p, testing_support::uneven_plan(p, 2));
    }
  }
}

TEST(CpuStencils, BlockedSweepsGiveTheReferenceBits) {
  Runtime runtime(testing_support::cpu_devices(3, 1));
  for (const char* name : {"box9", "star4"}) {
    Problem p = problem_of(Stencil::builtin(name), Precision::Double, false, 1);
    p.nz = p.dimension() == 3 ? 30 : 0;
    p.ny = 30;
    Plan plan = runtime.even_plan(p);
    plan.variant = VariantChoice{Variant::Blocked, 2};
    SCOPED_TRACE(name);
    expect_same_bits(runtime.solve(p, plan), solve_reference(p));
  }
}

TEST(CpuStencils, PlanSplitsTheCpuDevicesAndSaysHow) {
  Runtime runtime(testing_support::cpu_devices(2, 1));
  Problem p = problem_of(Stencil::builtin("poisson7"), Precision::Float, false, 0);
  const Plan plan = runtime.plan(p);
  ASSERT_EQ(plan.parts.size(), 2u);
  EXPECT_EQ(plan.parts[0].rows + plan.parts[1].rows, p.nz);
  // Even, or the model's from this machine's curves where it has some.
  EXPECT_TRUE(plan.origin.rfind("even over the devices with a kernel for the stencil 'poisson7'", 0) == 0 ||
              plan.origin.rfind("planned from", 0) == 0)
      << plan.origin;
  expect_same_bits(runtime.solve(p, plan), solve_reference(p));
}

TEST(CpuStencils, ThreeDimensionalSolutionsGoToNpy) {
  Runtime runtime(testing_support::cpu_devices(2, 1));
  const Problem p = problem_of(Stencil::builtin("box27"), Precision::Double, false, 1);
  const Result r = runtime.solve(p);
  const std::string path = ::testing::TempDir() + "/box27.npy";
  write_npy(path, r.grid<double>());
  const Grid<double> back = read_npy<double>(path, p.stencil.radius());
  EXPECT_EQ(back.nz(), p.nz);
  EXPECT_EQ(back.planes(), p.nz + 2);
  EXPECT_EQ(back.values(), r.grid<double>().values());
}

TEST(CpuStencils, TooFewUnitsForTheRadiusAreRefusedNamingTheStencil) {
  Runtime runtime(testing_support::cpu_devices(2, 1));
  const Problem p = problem_of(Stencil::builtin("star4"), Precision::Double, false, 0);
  const Plan plan{{{0, 1, 3}, {1, 4, p.nz - 3}}};
  try {
    runtime.solve(p, plan);
    FAIL() << "a 3-plane slab of a radius-4 stencil was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("the stencil 'star4' of radius 4 needs at least 4 planes a device; "),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace hetstencil
