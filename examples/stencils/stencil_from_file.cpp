// A stencil of your own, from a JSON file (docs/stencils.md): solve with it on
// every device of this machine that has a kernel for it (the plan leaves the
// others out and says why), and check the result against the sequential
// reference, bit for bit.
//
//   build/examples/stencil_from_file examples/stencils/cross9.json [n] [iterations]
#include <cstdio>
#include <cstdlib>

#include "hetstencil/hetstencil.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: stencil_from_file STENCIL.json [n] [iterations]\n");
    return 2;
  }
  try {
    hetstencil::Problem problem;
    problem.stencil = hetstencil::read_stencil(argv[1]);  // refused naming the field if wrong
    const std::int64_t n = argc > 2 ? std::atoll(argv[2]) : 48;
    problem.nx = problem.ny = n;
    if (problem.stencil.dimension == 3) {
      problem.nz = n;
      problem.source = hetstencil::Source::from_function_3d([](double x, double y, double z) { return x + y * z; });
    } else {
      problem.source = hetstencil::Source::from_function([](double x, double y) { return x * y; });
    }
    problem.stop.max_iterations = argc > 3 ? std::atoll(argv[3]) : 200;

    hetstencil::Runtime runtime;
    const hetstencil::Plan plan = runtime.plan(problem);
    for (const auto& part : plan.parts) {
      std::printf("%s: units %lld..%lld\n", runtime.devices()[part.device].name.c_str(),
                  static_cast<long long>(part.first_row), static_cast<long long>(part.first_row + part.rows - 1));
    }
    for (const auto& l : plan.left_out) std::printf("%s left out: %s\n", l.name.c_str(), l.reason.c_str());

    const hetstencil::Result result = runtime.solve(problem, plan);
    const hetstencil::Result reference = hetstencil::solve_reference(problem);
    const bool same = hetstencil::same_bits(reference.solution, result.solution);
    std::printf("%s (%d-D, radius %d, %zu points): %lld iterations, residual %.3e\n", problem.stencil.name.c_str(),
                problem.stencil.dimension, problem.stencil.radius(), problem.stencil.points.size(),
                static_cast<long long>(result.report.iterations), result.report.residual.l2);
    std::printf("bitwise equal to the sequential reference: %s\n", same ? "yes" : "NO");
    return same ? 0 : 1;
  } catch (const hetstencil::Error& e) {
    std::fprintf(stderr, "stencil_from_file: %s\n", e.what());
    return 1;
  }
}
