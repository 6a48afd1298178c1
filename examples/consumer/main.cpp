// An application's smallest use of hetstencil: a hybrid solve split over every
// device of the machine (two CPU devices, and the GPUs of a CUDA build), checked
// bit for bit against the sequential reference.
//
//   consumer [n]      exits 0 when the two agree, 1 otherwise
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <hetstencil/hetstencil.hpp>
#include <hetstencil/version.hpp>

int main(int argc, char** argv) {
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 40;
  hetstencil::Problem problem;
  problem.nx = n;
  problem.ny = n + 3;
  problem.source = hetstencil::Source::from_function([](double x, double y) { return x * (1.0 - y); });
  problem.boundary = hetstencil::Boundary::constant(0.5);
  problem.stop.max_iterations = 300;

  try {
    hetstencil::RuntimeOptions options;
    options.cpu_devices = 2;
    options.threads_per_device = 1;
    hetstencil::Runtime runtime(options);
    const hetstencil::Result result = runtime.solve(problem, runtime.even_plan(problem));
    const hetstencil::Result reference = hetstencil::solve_reference(problem);
    std::size_t gpus = 0;
    for (const hetstencil::DeviceInfo& d : runtime.devices()) gpus += d.kind == hetstencil::DeviceKind::Gpu;
    const bool same = hetstencil::same_bits(reference.solution, result.solution);
    std::printf("hetstencil %s (headers %s): %zu devices (%zu GPUs), %lld iterations, residual %.3e, %s the reference\n",
                hetstencil::version(), HETSTENCIL_VERSION_STRING, result.report.devices.size(), gpus,
                static_cast<long long>(result.report.iterations), result.report.residual.l2,
                same ? "bitwise equal to" : "DIFFERENT from");
    return same && result.report.devices.size() == runtime.devices().size() ? 0 : 1;
  } catch (const hetstencil::Error& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
