// A variable-coefficient stencil written in C++: 3-D diffusion -div(a grad u) = f
// with the conductivity a = 1 + x y z, the face-centred 7-point update
//   u' = (sum over the 6 faces of a_face u_neighbour + h^2 f) / (sum of the 6 a_face),
// a_face = a at the midpoint of the cell and its neighbour (Stencil::diffusion,
// diffusion_coefficients_3d). Solved on every device with a kernel for it, at n
// and 2n + 1 cells a side, each checked bit for bit against the sequential
// reference; the error against the exact solution of a manufactured problem
// falls about fourfold from one to the other (second order).
//
//   build/examples/variable_diffusion_3d [n]
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "hetstencil/hetstencil.hpp"

namespace {

const double pi = std::acos(-1.0);

double conductivity(double x, double y, double z) { return 1.0 + x * y * z; }

// u = sin(pi x) sin(pi y) sin(pi z), zero on the boundary; f = -div(a grad u).
double exact(double x, double y, double z) { return std::sin(pi * x) * std::sin(pi * y) * std::sin(pi * z); }
double source(double x, double y, double z) {
  const double sx = std::sin(pi * x), sy = std::sin(pi * y), sz = std::sin(pi * z);
  const double ux = pi * std::cos(pi * x) * sy * sz, uy = pi * sx * std::cos(pi * y) * sz,
               uz = pi * sx * sy * std::cos(pi * z);
  return -(y * z * ux + x * z * uy + x * y * uz) + conductivity(x, y, z) * 3.0 * pi * pi * sx * sy * sz;
}

// Solves on n^3 cells; returns the largest error against the exact solution, or -1 where
// the devices' bits differ from the reference's.
double solve_at(hetstencil::Runtime& runtime, std::int64_t n) {
  hetstencil::Problem problem;
  problem.stencil = hetstencil::Stencil::diffusion(3);
  problem.nx = problem.ny = problem.nz = n;  // first: the coefficients' faces are h apart
  problem.coefficients = hetstencil::diffusion_coefficients_3d(problem, conductivity);
  problem.source = hetstencil::Source::from_function_3d(source);
  problem.stop.tolerance = 1e-9;
  problem.stop.check_every = 100;
  problem.stop.max_iterations = 40000;
  const hetstencil::Result result = runtime.solve(problem);
  const auto& u = result.grid<double>();  // (nz + 2) x (ny + 2) x (nx + 2), u(k, i, j)
  const double h = problem.h();
  double error = 0.0;
  for (std::int64_t k = 1; k <= n; ++k) {
    for (std::int64_t i = 1; i <= n; ++i) {
      for (std::int64_t j = 1; j <= n; ++j) error = std::fmax(error, std::fabs(u(k, i, j) - exact(j * h, i * h, k * h)));
    }
  }
  const bool same = hetstencil::same_bits(hetstencil::solve_reference(problem).solution, result.solution);
  std::printf("%s, %lld^3 cells: %lld iterations, residual %.3e, max error %.3e, bitwise equal to the reference: %s\n",
              problem.stencil.name.c_str(), static_cast<long long>(n),
              static_cast<long long>(result.report.iterations), result.report.residual.l2, error, same ? "yes" : "NO");
  return same ? error : -1.0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 15;
  try {
    hetstencil::Runtime runtime;
    const double coarse = solve_at(runtime, n);
    const double fine = solve_at(runtime, 2 * n + 1);
    if (coarse < 0 || fine < 0) return 1;
    std::printf("error ratio %.2f (second order: about 4)\n", coarse / fine);
    return coarse / fine > 3.0 ? 0 : 1;
  } catch (const hetstencil::Error& e) {
    std::fprintf(stderr, "variable_diffusion_3d: %s\n", e.what());
    return 1;
  }
}
