// Variable stencils (random coefficient grids) on the CPU devices give the bits
// of the sequential reference over uneven splits, several devices and the
// blocked variant; the asynchronous variants refuse them, naming the stencil.
#include <gtest/gtest.h>

#include <string>

#include "hetstencil/error.hpp"
#include "hetstencil/reference.hpp"
#include "hetstencil/runtime.hpp"
#include "model/profile.hpp"
#include "tests/devices/variable_support.hpp"
#include "tests/test_support.hpp"

namespace hetstencil {
namespace {

using testing_support::expect_same_bits;

Problem variable_problem(const Stencil& s, Precision precision, bool tolerance, int variety) {
  Problem p = testing_support::stencil_problem(s, precision, 21, 17, 15, tolerance, variety, 19);
  testing_support::make_variable(p, 100u + static_cast<unsigned>(variety));
  return p;
}

std::vector<Stencil> stencils() {
  return {Stencil::diffusion(2), Stencil::diffusion(3), Stencil::builtin("box9"), Stencil::builtin("star4")};
}

TEST(CpuVariableStencils, UnevenSplitsGiveTheReferenceBits) {
  for (int devices : {2, 3}) {
    Runtime runtime(testing_support::cpu_devices(devices, 2));
    int variety = 0;
    for (const Stencil& s : stencils()) {
      for (Precision precision : {Precision::Float, Precision::Double}) {
        for (bool tolerance : {false, true}) {
          const Problem p = variable_problem(s, precision, tolerance, variety++);
          SCOPED_TRACE(p.stencil.name + " on " + std::to_string(devices) + " devices, " + to_string(precision) +
                       (tolerance ? ", tolerance" : ", fixed"));
          testing_support::expect_reference(runtime, p, testing_support::uneven_plan(p, static_cast<std::size_t>(devices)));
        }
      }
    }
  }
}

TEST(CpuVariableStencils, TheVariableStencilIsNotTheConstantOne) {
  // The coefficients change the bits: a test of the grids' use, not only of their order.
  Problem p = variable_problem(Stencil::builtin("box9"), Precision::Double, false, 3);
  Problem constant = p;
  constant.stencil.variable = false;
  constant.coefficients = {};
  Runtime runtime(testing_support::cpu_devices(2, 1));
  const Result a = runtime.solve(p), b = solve_reference(constant);
  EXPECT_FALSE(same_bits(a.solution, b.solution));
}

TEST(CpuVariableStencils, BlockedSweepsGiveTheReferenceBits) {
  Runtime runtime(testing_support::cpu_devices(3, 1));
  for (const Stencil& s : {Stencil::diffusion(2), Stencil::builtin("star4")}) {
    Problem p = testing_support::stencil_problem(s, Precision::Double, 19, 30, 30, false, 1, 13);
    testing_support::make_variable(p, 7);
    Plan plan = runtime.even_plan(p);
    plan.variant = VariantChoice{Variant::Blocked, 2};
    SCOPED_TRACE(p.stencil.name);
    expect_same_bits(runtime.solve(p, plan), solve_reference(p));
  }
}

TEST(CpuVariableStencils, AsynchronousVariantsRefuseAVariableStencil) {
  Runtime runtime(testing_support::cpu_devices(1, 1));
  Problem p = testing_support::stencil_problem(Stencil::diffusion(2), Precision::Double, 16, 16, 0, false, 0, 5);
  p.coefficients = diffusion_coefficients(p, [](double, double) { return 1.0; });
  Plan plan = runtime.even_plan(p);
  plan.variant = VariantChoice{Variant::Async2, 2};
  try {
    runtime.solve(p, plan);
    FAIL() << "async2 ran a variable stencil";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("the async2 variant runs poisson5 only; the stencil 'diffusion5' runs sync or "
                                         "blocked"),
              std::string::npos)
        << e.what();
  }
}

TEST(CpuVariableStencils, TheModelKeepsAVariableStencilsCurvesApart) {
  Problem constant = testing_support::stencil_problem(Stencil::builtin("poisson5"), Precision::Float, 64, 8, 0, false,
                                                      0, 1);
  Problem variable = constant;
  variable.stencil.variable = true;
  EXPECT_EQ(stencil_tag(variable.stencil).rfind("variable:", 0), 0u) << stencil_tag(variable.stencil);
  EXPECT_NE(stencil_rate_key(variable), stencil_rate_key(constant));
  EXPECT_EQ(stencil_rate_key(variable), stencil_tag(variable.stencil) + "/float/64");
  // The variable stencil's 4 terms and centre each load a coefficient besides.
  EXPECT_EQ(cell_cost(variable.stencil) - cell_cost(constant.stencil), 5.0);
}

}  // namespace
}  // namespace hetstencil
