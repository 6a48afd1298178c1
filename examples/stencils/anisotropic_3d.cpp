// A stencil written in C++: 3-D anisotropic diffusion with constant
// coefficients, -(a u_xx + b u_yy + c u_zz) = f, as the 7-point update
//   u' = (a (u_W + u_E) + b (u_S + u_N) + c (u_D + u_U) + h^2 f) / (2 (a + b + c)).
// Solved on every device with a kernel for it, checked bit for bit against the
// sequential reference, and against the exact solution of a problem that has one.
// (Coefficients that vary from cell to cell: variable_diffusion_3d.cpp.)
//
//   build/examples/anisotropic_3d [n]
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "hetstencil/hetstencil.hpp"

int main(int argc, char** argv) {
  const double a = 1.0, b = 4.0, c = 0.25;  // diffusion along x, y and z
  hetstencil::Stencil s;
  s.name = "anisotropic7";
  s.dimension = 3;
  s.points = {{0, 0, -1, c}, {0, 0, 1, c}, {0, -1, 0, b}, {0, 1, 0, b}, {-1, 0, 0, a}, {1, 0, 0, a}};
  s.diagonal = 2.0 * (a + b + c);
  s.source_scale = {1.0, true};  // s = h^2

  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 24;
  const double pi = std::acos(-1.0);
  // u = sin(pi x) sin(pi y) sin(pi z) solves it with f = (a + b + c) pi^2 u, u = 0 on the boundary.
  hetstencil::Problem problem;
  problem.stencil = s;
  problem.nx = problem.ny = problem.nz = n;
  problem.source = hetstencil::Source::from_function_3d([&](double x, double y, double z) {
    return (a + b + c) * pi * pi * std::sin(pi * x) * std::sin(pi * y) * std::sin(pi * z);
  });
  problem.stop.tolerance = 1e-6;
  problem.stop.check_every = 100;
  problem.stop.max_iterations = 20000;

  try {
    s.validate();  // throws naming the field, as a JSON file's would
    hetstencil::Runtime runtime;
    const hetstencil::Result result = runtime.solve(problem);
    const auto& u = result.grid<double>();  // (nz + 2) x (ny + 2) x (nx + 2), u(k, i, j)
    const double h = problem.h();
    double error = 0.0;
    for (std::int64_t k = 1; k <= n; ++k) {
      for (std::int64_t i = 1; i <= n; ++i) {
        for (std::int64_t j = 1; j <= n; ++j) {
          const double exact = std::sin(pi * j * h) * std::sin(pi * i * h) * std::sin(pi * k * h);
          error = std::fmax(error, std::fabs(u(k, i, j) - exact));
        }
      }
    }
    std::printf("%s: %lld iterations, residual %.3e, max error against the exact solution %.3e\n", s.name.c_str(),
                static_cast<long long>(result.report.iterations), result.report.residual.l2, error);
    const hetstencil::Result reference = hetstencil::solve_reference(problem);
    const bool same = hetstencil::same_bits(reference.solution, result.solution);
    std::printf("bitwise equal to the sequential reference: %s\n", same ? "yes" : "NO");
    return same && error < 1e-2 ? 0 : 1;
  } catch (const hetstencil::Error& e) {
    std::fprintf(stderr, "anisotropic_3d: %s\n", e.what());
    return 1;
  }
}
