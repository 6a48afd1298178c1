// Variable stencils (Stencil::variable, Problem::coefficients): the reference's
// update with per-cell weights, the diffusion helper, and the refusals, each
// naming the field and the cell.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "hetstencil/error.hpp"
#include "hetstencil/reference.hpp"
#include "hetstencil/stencil.hpp"
#include "tests/test_support.hpp"

namespace hetstencil {
namespace {

Problem diffusion_problem(int dimension, std::int64_t n) {
  Problem p;
  p.stencil = Stencil::diffusion(dimension);
  p.nx = n;
  p.ny = n - 1;
  p.nz = dimension == 3 ? n - 2 : 0;
  p.boundary = Boundary::constant(0.5);
  p.stop.max_iterations = 25;
  return p;
}

void expect_refused(const Problem& p, const std::string& expected) {
  try {
    solve_reference(p);
    FAIL() << "accepted; expected: " << expected;
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

TEST(VariableStencil, DiffusionOfUnitConductivityIsThePoissonStencilBitForBit) {
  // a = 1: every a_k is 1 and D is the face count, poisson5's (poisson7's) weights and d.
  for (int dimension : {2, 3}) {
    for (Precision precision : {Precision::Float, Precision::Double}) {
      Problem p = diffusion_problem(dimension, 11);
      p.precision = precision;
      p.coefficients = dimension == 3 ? diffusion_coefficients_3d(p, [](double, double, double) { return 1.0; })
                                      : diffusion_coefficients(p, [](double, double) { return 1.0; });
      Problem constant = p;
      constant.stencil = Stencil::builtin(dimension == 3 ? "poisson7" : "poisson5");
      constant.coefficients = {};
      SCOPED_TRACE(std::to_string(dimension) + "-D " + to_string(precision));
      testing_support::expect_same_bits(solve_reference(p), solve_reference(constant));
    }
  }
}

TEST(VariableStencil, CoefficientsScaleEachWeightAndTheDiagonal) {
  // c_k = c_d = 2 everywhere: a_k = 2 w_k and D = 2 d (exact products), the constant stencil of
  // doubled weights and diagonal, bit for bit; one point's field a function, the diagonal's a grid.
  Problem p = diffusion_problem(2, 9);
  p.stencil = Stencil::builtin("box9");
  p.stencil.variable = true;
  for (std::size_t k = 0; k < p.stencil.points.size(); ++k) {
    p.coefficients.points.push_back(Source::from_function([](double, double) { return 2.0; }));
  }
  p.coefficients.diagonal = Source::from_grid(std::vector<double>(static_cast<std::size_t>(p.cells()), 2.0));
  p.source = Source::from_function([](double x, double y) { return x - y; });
  Problem constant = p;
  constant.stencil.variable = false;
  constant.coefficients = {};
  for (StencilPoint& q : constant.stencil.points) q.weight *= 2;
  constant.stencil.diagonal *= 2;
  testing_support::expect_same_bits(solve_reference(p), solve_reference(constant));
}

TEST(VariableStencil, ManufacturedSolutionErrorFallsWithTheGrid) {
  // -div(a grad u) = f with a = 1 + x y, u = sin(pi x) sin(pi y): second order.
  const double pi = std::acos(-1.0);
  const auto error_at = [&](std::int64_t n) {
    Problem p;
    p.stencil = Stencil::diffusion(2);
    p.nx = p.ny = n;
    p.coefficients = diffusion_coefficients(p, [](double x, double y) { return 1 + x * y; });
    p.source = Source::from_function([pi](double x, double y) {
      const double a = 1 + x * y, sx = std::sin(pi * x), sy = std::sin(pi * y);
      const double ux = pi * std::cos(pi * x) * sy, uy = pi * sx * std::cos(pi * y);
      return -(y * ux + x * uy) + a * 2 * pi * pi * sx * sy;
    });
    p.stop.max_iterations = 20000;
    p.stop.tolerance = 1e-10;
    p.stop.check_every = 500;
    const Result r = solve_reference(p);
    const Grid<double>& u = r.grid<double>();
    double worst = 0.0;
    for (std::int64_t i = 1; i <= n; ++i) {
      for (std::int64_t j = 1; j <= n; ++j) {
        const double exact = std::sin(pi * j * p.h()) * std::sin(pi * i * p.h());
        worst = std::max(worst, std::fabs(u(i, j) - exact));
      }
    }
    return worst;
  };
  const double coarse = error_at(15), fine = error_at(31);
  EXPECT_LT(fine, coarse / 3.0) << coarse << " then " << fine;
}

TEST(VariableStencil, RefusesMissingOrMisshapenCoefficientGrids) {
  Problem p = diffusion_problem(2, 6);
  p.validate();  // a plan or a prediction needs no grids
  expect_refused(p, "the stencil 'diffusion5' is variable with 4 points but the problem has 0 coefficient grids");
  p.coefficients.points.resize(3, Source::from_function([](double, double) { return 1.0; }));
  try {
    p.validate();
    FAIL() << "3 grids for 4 points";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("but the problem has 3 coefficient grids"), std::string::npos) << e.what();
  }
  p.coefficients = diffusion_coefficients(p, [](double, double) { return 1.0; });
  p.coefficients.points[2] = Source::from_grid(std::vector<double>(7, 1.0));
  expect_refused(p, "the stencil 'diffusion5': coefficients.points[2] has 7 values; an 5 x 6 interior needs 30");
  p.coefficients.points[2] = Source::spike();
  expect_refused(p, "coefficients.points[2] is not set");
  p.coefficients.points[2] = Source::from_function_3d([](double, double, double) { return 1.0; });
  expect_refused(p, "coefficients.points[2] is a function but no function of the 2-D coordinates was given");
  Problem constant = diffusion_problem(2, 6);
  constant.stencil = Stencil::builtin("poisson5");
  constant.coefficients = p.coefficients;
  expect_refused(constant, "the problem has coefficient grids but the stencil 'poisson5' is not variable");
}

TEST(VariableStencil, RefusesNonFiniteCoefficientsAndZeroDiagonalsNamingTheCell) {
  Problem p = diffusion_problem(3, 6);
  p.coefficients = diffusion_coefficients_3d(p, [](double, double, double) { return 1.0; });
  std::vector<double> values(static_cast<std::size_t>(p.cells()), 1.0);
  values[static_cast<std::size_t>((2 * p.ny + 3) * p.nx + 1)] = std::numeric_limits<double>::quiet_NaN();
  p.coefficients.points[4] = Source::from_grid(values);
  expect_refused(p, "coefficients.points[4] at interior cell (column 1, row 3, plane 2) is nan; a point's "
                    "coefficients must be finite");
  p.coefficients.points[4] = p.coefficients.points[0];
  values[static_cast<std::size_t>((2 * p.ny + 3) * p.nx + 1)] = 0.0;
  p.coefficients.diagonal = Source::from_grid(values);
  expect_refused(p, "coefficients.diagonal at interior cell (column 1, row 3, plane 2) is 0, which times the "
                    "diagonal 1 gives 0 in double; the diagonal's coefficients must be finite and make D = d c_d "
                    "non-zero");
  // Finite in double, beyond float once rounded.
  values[static_cast<std::size_t>((2 * p.ny + 3) * p.nx + 1)] = 1e300;
  p.coefficients.diagonal = Source::from_grid(values);
  p.precision = Precision::Float;
  expect_refused(p, "coefficients.diagonal at interior cell (column 1, row 3, plane 2) is 1e+300, which times the "
                    "diagonal 1 gives inf in float");
}

TEST(VariableStencil, DescriptionsSayTheyAreVariable) {
  const Stencil s = Stencil::diffusion(3);
  EXPECT_TRUE(s.variable);
  EXPECT_EQ(s.name, "diffusion7");
  EXPECT_FALSE(is_poisson5(Stencil::diffusion(2)));
  const std::string text = stencil_json(s);
  EXPECT_NE(text.find("\"variable\": true"), std::string::npos) << text;
  EXPECT_EQ(parse_stencil(text), s);
  Stencil constant = s;
  constant.variable = false;
  EXPECT_NE(constant, s);
  EXPECT_EQ(stencil_json(constant).find("variable"), std::string::npos);
  try {
    parse_stencil(R"({"name": "v", "dimension": 2, "diagonal": 1, "variable": 1,
                      "points": [{"offset": [1, 0], "weight": 1}]})", "v.json");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("v.json: variable: expected true or false, got 1"), std::string::npos)
        << e.what();
  }
  try {
    Stencil::diffusion(4);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("a diffusion stencil is 2-D or 3-D, not 4-D"), std::string::npos);
  }
}

}  // namespace
}  // namespace hetstencil
