#include <gtest/gtest.h>

#include <cmath>

#include "hetstencil/reference.hpp"

namespace hetstencil {
namespace {

Problem small(std::int64_t nx, std::int64_t ny, std::int64_t iterations) {
  Problem p;
  p.nx = nx;
  p.ny = ny;
  p.stop.max_iterations = iterations;
  return p;
}

TEST(Reference, OneCellByHand) {
  Problem p = small(1, 1, 1);
  p.boundary = Boundary::constant(1.0);
  // The spike sits on the only cell: u = 0.25 * (1 + 1 + 1 + 1 + 1).
  EXPECT_EQ(solve_reference(p).grid<double>()(1, 1), 1.25);
  p.source = Source::from_grid({0.0});
  EXPECT_EQ(solve_reference(p).grid<double>()(1, 1), 1.0);
}

TEST(Reference, SpikeSpreadsOneCellPerIteration) {
  Problem p = small(5, 5, 1);
  const Result r1 = solve_reference(p);
  const auto& u1 = r1.grid<double>();
  for (std::int64_t i = 0; i < 7; ++i) {
    for (std::int64_t j = 0; j < 7; ++j) EXPECT_EQ(u1(i, j), (i == 3 && j == 3) ? 0.25 : 0.0) << i << "," << j;
  }
  p.stop.max_iterations = 2;
  const Result r2 = solve_reference(p);
  const auto& u2 = r2.grid<double>();
  EXPECT_EQ(u2(3, 3), 0.25);       // 0.25 * (0 + 1)
  EXPECT_EQ(u2(2, 3), 0.0625);     // 0.25 * 0.25
  EXPECT_EQ(u2(2, 2), 0.0);        // not reached yet
}

TEST(Reference, ResidualOfExactDiscreteSolutionIsZero) {
  // u = x + y is harmonic and linear: the discrete Laplacian of it is exactly 0.
  Problem p = small(9, 9, 0);
  p.source = Source::from_grid(std::vector<double>(81, 0.0));
  p.boundary = Boundary::from_function([](double x, double y) { return x + y; });
  Grid<double> u = initial_grid<double>(p);
  const double h = p.h();
  for (std::int64_t i = 1; i <= 9; ++i) {
    for (std::int64_t j = 1; j <= 9; ++j) u(i, j) = j * h + i * h;
  }
  const Residual r = residual(p, u);
  EXPECT_LT(r.max, 1e-12);
  EXPECT_GT(residual(p, initial_grid<double>(p)).max, 1.0);
}

TEST(Reference, ToleranceStopsAtTheFirstCheckBelowIt) {
  Problem p = small(20, 12, 100000);
  p.stop.tolerance = 1e-4;
  p.stop.check_every = 10;
  const Result r = solve_reference(p);
  EXPECT_TRUE(r.report.converged);
  EXPECT_EQ(r.report.iterations % 10, 0);
  EXPECT_LE(r.report.residual.l2, 1e-4 * r.report.initial_residual.l2);
  // One check earlier it was not yet below.
  p.stop.max_iterations = r.report.iterations - 10;
  p.stop.tolerance = 0.0;
  const Result earlier = solve_reference(p);
  EXPECT_GT(earlier.report.residual.l2, 1e-4 * r.report.initial_residual.l2);
}

// -(u_xx + u_yy) = 2 pi^2 sin(pi x) sin(pi y) has u = sin(pi x) sin(pi y); the
// converged discrete solution's error must fall as h^2.
double manufactured_error(std::int64_t n) {
  const double pi = std::acos(-1.0);
  Problem p = small(n, n, 10000000);
  p.source = Source::from_function([pi](double x, double y) { return 2 * pi * pi * std::sin(pi * x) * std::sin(pi * y); });
  p.stop.tolerance = 1e-11;
  p.stop.check_every = 200;
  const Result r = solve_reference(p);
  EXPECT_TRUE(r.report.converged);
  const auto& u = r.grid<double>();
  double error = 0.0;
  for (std::int64_t i = 1; i <= n; ++i) {
    for (std::int64_t j = 1; j <= n; ++j) {
      error = std::fmax(error, std::fabs(u(i, j) - std::sin(pi * j * p.h()) * std::sin(pi * i * p.h())));
    }
  }
  return error;
}

TEST(Reference, ManufacturedSolutionConvergesAsHSquared) {
  const double e15 = manufactured_error(15);
  const double e31 = manufactured_error(31);
  const double e63 = manufactured_error(63);
  EXPECT_NEAR(e15 / e31, 4.0, 0.3);
  EXPECT_NEAR(e31 / e63, 4.0, 0.3);
}

TEST(Reference, FloatAndDoubleAgreeClosely) {
  Problem p = small(33, 17, 200);
  const Result d = solve_reference(p);
  p.precision = Precision::Float;
  const Result f = solve_reference(p);
  double worst = 0.0;
  for (std::size_t k = 0; k < d.grid<double>().values().size(); ++k) {
    worst = std::fmax(worst, std::fabs(d.grid<double>().values()[k] - f.grid<float>().values()[k]));
  }
  EXPECT_LT(worst, 1e-6);
  EXPECT_GT(d.grid<double>()(9, 17), 0.25);
}

TEST(Reference, SameBitsComparesPrecisionShapeAndBits) {
  const Problem p = small(9, 5, 20);
  const Result a = solve_reference(p);
  EXPECT_TRUE(same_bits(a.solution, solve_reference(p).solution));
  Grid<double> signed_zero = a.grid<double>();
  signed_zero(0, 0) = -signed_zero(0, 0);  // the boundary is 0: -0 equals 0 but its bits differ
  EXPECT_FALSE(same_bits(a.solution, Solution(signed_zero)));
  Problem taller = p;
  taller.ny += 1;
  EXPECT_FALSE(same_bits(a.solution, solve_reference(taller).solution));
  Problem single = p;
  single.precision = Precision::Float;
  EXPECT_FALSE(same_bits(a.solution, solve_reference(single).solution));
}

}  // namespace
}  // namespace hetstencil
