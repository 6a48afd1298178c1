// The sequential reference on any stencil, 2-D and 3-D: poisson5 keeps the
// bits of the 5-point loops, a 3-D Laplacian finds a known discrete solution,
// symmetric stencils give symmetric solutions, random descriptions run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "core/residual.hpp"
#include "core/source_term.hpp"
#include "core/stencil_update.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/npy.hpp"
#include "hetstencil/reference.hpp"

namespace hetstencil {
namespace {

// The 5-point loops as the devices run them: Poisson5, the row residual.
template <class T>
Grid<T> poisson5_loops(const Problem& p, Residual& last) {
  const SourceTerm<T> source = make_source_term<T>(p);
  Grid<T> u = initial_grid<T>(p);
  Grid<T> v = u;
  for (std::int64_t t = 0; t < p.stop.max_iterations; ++t) {
    for (std::int64_t i = 1; i <= p.ny; ++i) {
      for (std::int64_t j = 1; j <= p.nx; ++j) {
        v(i, j) = Poisson5<T>::update(u(i - 1, j), u(i + 1, j), u(i, j - 1), u(i, j + 1), source.at(i, j, u.cols()));
      }
    }
    std::swap(u, v);
  }
  std::vector<double> sums;
  double max_abs = 0.0;
  for (std::int64_t i = 1; i <= p.ny; ++i) {
    const RowResidual r = residual_row<T>(u.row(i - 1), u.row(i), u.row(i + 1),
                                          source.h2f.empty() ? nullptr : source.h2f.data() + i * u.cols(),
                                          i == source.spike_row ? source.spike_col : -1, p.nx);
    sums.push_back(r.sum_sq);
    max_abs = std::max(max_abs, r.max_abs);
  }
  last = finish_residual(sums.data(), p.ny, max_abs, p.h());
  return u;
}

template <class T>
void reference_keeps_poisson5_bits(Precision precision) {
  for (bool spike : {true, false}) {
    Problem p;
    p.nx = 203;  // more than one residual segment
    p.ny = 37;
    p.precision = precision;
    p.stop.max_iterations = 60;
    if (!spike) p.source = Source::from_function([](double x, double y) { return std::sin(9 * x) * y + 0.3; });
    p.boundary = Boundary::from_function([](double x, double y) { return x - 2 * y * y; });
    Residual expected_residual;
    const Grid<T> expected = poisson5_loops<T>(p, expected_residual);
    const Result r = solve_reference(p);
    const Grid<T>& u = r.grid<T>();
    ASSERT_EQ(u.values().size(), expected.values().size());
    EXPECT_EQ(std::memcmp(u.data(), expected.data(), u.values().size() * sizeof(T)), 0) << spike;
    EXPECT_EQ(std::memcmp(&r.report.residual.l2, &expected_residual.l2, sizeof(double)), 0) << spike;
    EXPECT_EQ(std::memcmp(&r.report.residual.max, &expected_residual.max, sizeof(double)), 0) << spike;
  }
}

TEST(StencilReference, Poisson5KeepsTheBitsOfTheFivePointLoops) {
  reference_keeps_poisson5_bits<float>(Precision::Float);
  reference_keeps_poisson5_bits<double>(Precision::Double);
}

double quadratic(double x, double y, double z) { return x * x + y * y + z * z; }

// u = x^2 + y^2 + z^2 has -Laplacian -6, and poisson7's second differences are
// exact on quadratics: with f = -6 and u on the boundary, u is the discrete solution.
Problem quadratic_problem(std::int64_t iterations) {
  Problem p;
  p.stencil = Stencil::builtin("poisson7");
  p.nx = 7;
  p.ny = 6;
  p.nz = 5;
  p.source = Source::from_function_3d([](double, double, double) { return -6.0; });
  p.boundary = Boundary::from_function_3d(quadratic);
  p.stop.max_iterations = iterations;
  return p;
}

double max_error(const Problem& p, const Grid<double>& u) {
  const double h = p.h();
  double worst = 0.0;
  for (std::int64_t k = 1; k <= p.nz; ++k) {
    for (std::int64_t i = 1; i <= p.ny; ++i) {
      for (std::int64_t j = 1; j <= p.nx; ++j) worst = std::max(worst, std::fabs(u(k, i, j) - quadratic(j * h, i * h, k * h)));
    }
  }
  return worst;
}

TEST(StencilReference, Poisson7ConvergesToTheQuadratic) {
  double error = 1e300;
  double residual = 1e300;
  for (std::int64_t iterations : {10, 50, 200, 800}) {
    const Problem p = quadratic_problem(iterations);
    const Result r = solve_reference(p);
    const double e = max_error(p, r.grid<double>());
    EXPECT_LT(e, error) << iterations;
    EXPECT_LT(r.report.residual.l2, residual) << iterations;
    error = e;
    residual = r.report.residual.l2;
  }
  EXPECT_LT(error, 1e-12);
  EXPECT_EQ(solve_reference(quadratic_problem(800)).grid<double>().nz(), 5);
}

TEST(StencilReference, Poisson7StopsAtItsTolerance) {
  Problem p = quadratic_problem(100000);
  p.stop.tolerance = 1e-8;
  p.stop.check_every = 10;
  const Result r = solve_reference(p);
  EXPECT_TRUE(r.report.converged);
  EXPECT_LT(r.report.iterations, 100000);
  EXPECT_LE(r.report.residual.l2, 1e-8 * r.report.initial_residual.l2);
}

// The spike in the middle of an odd cube (square) and a zero boundary: the
// solution is symmetric under every mirror and every swap of axes.
TEST(StencilReference, SymmetricStencilsGiveSymmetricSolutions) {
  for (const char* name : {"box9", "box27", "star4"}) {
    Problem p;
    p.stencil = Stencil::builtin(name);
    p.nx = p.ny = 9;
    if (p.stencil.dimension == 3) p.nz = 9;
    p.stop.max_iterations = 30;
    const Result r = solve_reference(p);
    const Grid<double>& u = r.grid<double>();
    const int d = u.depth();
    EXPECT_EQ(d, p.stencil.radius());
    const std::int64_t nk = p.stencil.dimension == 3 ? 9 : 1;
    const std::int64_t k0 = p.stencil.dimension == 3 ? d : 0;
    auto at = [&](std::int64_t k, std::int64_t i, std::int64_t j) { return u(k0 + k, d + i, d + j); };
    EXPECT_GT(at(nk / 2, 4, 4), 0.0) << name;
    for (std::int64_t k = 0; k < nk; ++k) {
      for (std::int64_t i = 0; i < 9; ++i) {
        for (std::int64_t j = 0; j < 9; ++j) {
          const double v = at(k, i, j);
          const double tolerance = 1e-14 * at(nk / 2, 4, 4);
          EXPECT_NEAR(v, at(k, i, 8 - j), tolerance) << name;
          EXPECT_NEAR(v, at(k, 8 - i, j), tolerance) << name;
          EXPECT_NEAR(v, at(k, j, i), tolerance) << name;
          if (nk == 9) {
            EXPECT_NEAR(v, at(8 - k, i, j), tolerance) << name;
            EXPECT_NEAR(v, at(i, k, j), tolerance) << name;
          }
        }
      }
    }
  }
}

TEST(StencilReference, RandomDescriptionsRun) {
  std::mt19937 rng(2026);
  std::uniform_real_distribution<double> weight(-1.0, 1.0);
  for (int trial = 0; trial < 20; ++trial) {
    Problem p;
    p.stencil.name = "random" + std::to_string(trial);
    p.stencil.dimension = 2 + trial % 2;
    p.stencil.points.clear();
    std::uniform_int_distribution<int> offset(-4, 4);
    double absolute = 0.0;
    while (p.stencil.points.size() < 6) {
      StencilPoint q{offset(rng), offset(rng), p.stencil.dimension == 3 ? offset(rng) : 0, weight(rng)};
      bool fresh = !(q.dx == 0 && q.dy == 0 && q.dz == 0);
      for (const StencilPoint& o : p.stencil.points) fresh = fresh && !(o.dx == q.dx && o.dy == q.dy && o.dz == q.dz);
      if (!fresh) continue;
      p.stencil.points.push_back(q);
      absolute += std::fabs(q.weight);
    }
    p.stencil.diagonal = 1.5 * absolute;  // diagonally dominant: Jacobi converges
    p.precision = trial % 3 == 0 ? Precision::Float : Precision::Double;
    p.nx = 11;
    p.ny = 6;
    if (p.stencil.dimension == 3) p.nz = 5;
    p.boundary = Boundary::constant(1.0);
    p.stop.max_iterations = 40;
    p.stop.tolerance = 1e-30;
    p.stop.check_every = 40;
    ASSERT_NO_THROW(p.validate()) << p.stencil.name;
    const Result r = solve_reference(p);
    EXPECT_TRUE(std::isfinite(r.report.residual.l2));
    EXPECT_LT(r.report.residual.l2, r.report.initial_residual.l2) << p.stencil.name;
  }
}

TEST(StencilProblem, RefusesASizeOfTheOtherDimension) {
  auto refusal = [](const Problem& p) {
    try {
      p.validate();
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  Problem p;
  p.nx = p.ny = 8;
  p.nz = 8;
  EXPECT_EQ(refusal(p), "the stencil 'poisson5' is 2-D but the problem has nz = 8 planes; a 2-D stencil takes nz = 0 (or 1)");
  p.nz = 1;
  EXPECT_EQ(refusal(p), "");
  p.nz = 0;
  p.stencil = Stencil::builtin("poisson7");
  EXPECT_EQ(refusal(p), "the stencil 'poisson7' is 3-D but the problem has nz = 0 planes; a 3-D stencil needs nz >= 1");
  p.nz = 8;
  EXPECT_EQ(refusal(p), "");
  p.stencil.diagonal = 0.0;
  EXPECT_EQ(refusal(p), "stencil 'poisson7': diagonal: must be finite and non-zero, got 0");
}

TEST(StencilProblem, ShapeAndStepFollowTheStencil) {
  Problem p;
  p.nx = 10;
  p.ny = 20;
  p.nz = 3;  // ignored by a 2-D stencil
  EXPECT_EQ(p.h(), 1.0 / 21);
  EXPECT_EQ(p.cells(), 200);
  p.stencil = Stencil::builtin("star4");
  p.nz = 40;
  EXPECT_EQ(p.h(), 1.0 / 41);
  EXPECT_EQ(p.cells(), 8000);
  const GridShape s = p.shape();
  EXPECT_EQ(s.depth, 4);
  EXPECT_EQ(s.planes(), 48);
  EXPECT_EQ(s.rows(), 28);
  EXPECT_EQ(s.cols(), 18);
  EXPECT_EQ(grid_bytes(s, Precision::Float), 48u * 28u * 18u * 4u);
}

TEST(StencilNpy, ThreeDimensionalGridsRoundTrip) {
  Problem p = quadratic_problem(3);
  const Result r = solve_reference(p);
  const Grid<double>& u = r.grid<double>();
  const std::string path =
      (std::filesystem::temp_directory_path() / ("hetstencil_npy3_" + std::to_string(getpid()) + ".npy")).string();
  write_npy(path, u);
  const Grid<double> back = read_npy<double>(path, 1);
  EXPECT_TRUE(same_bits(r.solution, Solution(back)));
  EXPECT_EQ(back.nz(), 5);
  EXPECT_THROW(read_npy<float>(path, 1), InvalidArgument);  // holds doubles
  EXPECT_THROW(read_npy<double>(path, 4), InvalidArgument);  // 7 planes cannot hold a ring 4 deep
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace hetstencil
