// A solve with a stencil whose Jacobi sweeps diverge says so, once a Runtime;
// one whose sweeps converge says nothing; a diverging solve with a tolerance
// stops at the first check whose residual is infinite or NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "hetstencil/logging.hpp"
#include "hetstencil/reference.hpp"
#include "hetstencil/report.hpp"
#include "hetstencil/runtime.hpp"
#include "tests/test_support.hpp"

namespace hetstencil {
namespace {

std::vector<std::string> warnings_of_solves(Runtime& runtime, const Problem& p, int solves) {
  std::vector<std::string> warned;
  set_log_sink([&](LogLevel level, const std::string& m) {
    if (level == LogLevel::warn) warned.push_back(m);
  });
  for (int k = 0; k < solves; ++k) runtime.solve(p, runtime.even_plan(p));
  set_log_sink(nullptr);
  return warned;
}

// The growth as the warning prints it.
std::string growth_text(const Stencil& s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", jacobi_growth(s));
  return text;
}

TEST(Divergence, AStencilWhoseSweepsGrowAModeIsSaidToDivergeOnce) {
  Runtime runtime(testing_support::cpu_devices(1, 1));
  const Problem p = testing_support::stencil_problem(Stencil::builtin("star4"), Precision::Double, 12, 12, 12, false, 0, 2);
  const std::vector<std::string> warned = warnings_of_solves(runtime, p, 2);
  int said = 0;
  for (const std::string& m : warned) {
    if (m.find("star4: its Jacobi sweeps diverge") != std::string::npos &&
        m.find("by up to " + growth_text(p.stencil)) != std::string::npos) {
      ++said;
    }
  }
  EXPECT_EQ(said, 1) << (warned.empty() ? "no warning" : warned.front());
}

TEST(Divergence, AStencilWhoseSweepsConvergeIsNotSaidToDiverge) {
  Runtime runtime(testing_support::cpu_devices(1, 1));
  const Problem p = testing_support::stencil_problem(Stencil::builtin("box27"), Precision::Double, 12, 12, 12, false, 0, 2);
  for (const std::string& m : warnings_of_solves(runtime, p, 1)) EXPECT_EQ(m.find("diverge"), std::string::npos) << m;
}

// With a tolerance, a diverging solve stops at the first check whose residual
// is infinite or NaN, on the devices as in the reference, bit for bit, and
// its report says so.
TEST(Divergence, ADivergingSolveStopsWhereItsResidualIsNoLongerFinite) {
  Runtime runtime(testing_support::cpu_devices(2, 1));
  Problem p = testing_support::stencil_problem(Stencil::builtin("star4"), Precision::Double, 12, 12, 12, false, 0, 20000);
  p.stop.tolerance = 1e-8;
  p.stop.check_every = 10;
  set_log_sink([](LogLevel, const std::string&) {});
  const Result solved = runtime.solve(p, runtime.even_plan(p));
  set_log_sink(nullptr);
  const Result reference = solve_reference(p);
  EXPECT_TRUE(std::isfinite(solved.report.initial_residual.l2));
  EXPECT_FALSE(std::isfinite(solved.report.residual.l2));
  EXPECT_LT(solved.report.iterations, p.stop.max_iterations);
  EXPECT_EQ(solved.report.iterations % p.stop.check_every, 0);
  EXPECT_FALSE(solved.report.converged);
  EXPECT_EQ(solved.report.iterations, reference.report.iterations);
  testing_support::expect_same_bits(solved, reference);
  const std::string text = format_report(solved.report);
  EXPECT_NE(text.find("no longer finite: the iteration diverged; stopped at iteration " +
                      std::to_string(solved.report.iterations)),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace hetstencil
