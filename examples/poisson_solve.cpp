// The smallest useful program on hetstencil: solve a Poisson problem with a
// known solution on every CPU socket (and GPU) of this machine, check it against
// the sequential reference, and save it for numpy.
//
//   build/examples/poisson_solve [n] [out.npy]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "hetstencil/hetstencil.hpp"

int main(int argc, char** argv) {
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 128;
  const double pi = std::acos(-1.0);

  // -(u_xx + u_yy) = 2 pi^2 sin(pi x) sin(pi y), u = 0 on the boundary:
  // the exact solution is sin(pi x) sin(pi y).
  hetstencil::Problem problem;
  problem.nx = problem.ny = n;
  problem.source = hetstencil::Source::from_function(
      [pi](double x, double y) { return 2.0 * pi * pi * std::sin(pi * x) * std::sin(pi * y); });
  problem.stop.tolerance = 1e-8;
  problem.stop.check_every = 500;
  problem.stop.max_iterations = 1000000;

  try {
    hetstencil::Runtime runtime;
    for (const auto& d : runtime.devices()) std::printf("%s: %s\n", d.name.c_str(), d.description.c_str());

    const hetstencil::Result result = runtime.solve(problem);
    const auto& u = result.grid<double>();
    double error = 0.0;
    const double h = problem.h();
    for (std::int64_t i = 1; i <= n; ++i) {
      for (std::int64_t j = 1; j <= n; ++j) {
        error = std::fmax(error, std::fabs(u(i, j) - std::sin(pi * j * h) * std::sin(pi * i * h)));
      }
    }
    std::printf("%lld iterations, residual %.3e, max error against sin(pi x) sin(pi y): %.3e\n",
                static_cast<long long>(result.report.iterations), result.report.residual.l2, error);

    const hetstencil::Result reference = hetstencil::solve_reference(problem);
    const bool same = hetstencil::same_bits(reference.solution, result.solution);
    std::printf("bitwise equal to the sequential reference: %s\n", same ? "yes" : "NO");

    if (argc > 2) {
      hetstencil::write_npy(argv[2], u);
      std::printf("written to %s\n", argv[2]);
    }
    return same ? 0 : 1;
  } catch (const hetstencil::Error& e) {
    std::fprintf(stderr, "poisson_solve: %s\n", e.what());
    return 1;
  }
}
