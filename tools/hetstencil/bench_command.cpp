// hetstencil bench cpu: how close each CPU device's sweep comes to a plain copy
// of the same bytes by the same threads on the same NUMA node.
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "devices/cpu/cpu_device.hpp"
#include "devices/device_map.hpp"
#include "devices/sync.hpp"
#include "hetstencil/grid.hpp"
#include "runtime/src/dispatch.hpp"
#include "tools/hetstencil/commands.hpp"
#include "tools/hetstencil/machine_options.hpp"

namespace hetstencil::cli {
namespace {

struct BenchOptions {
  std::int64_t nx = 4096;
  std::int64_t ny = 4096;
  std::string precision = "both";
  int repetitions = 20;
  RuntimeOptions machine;
};

// Random values: zeros (and the subnormals a spike decays into) can time
// differently from real data.
template <class T>
Grid<T> random_grid(std::int64_t ny, std::int64_t nx) {
  Grid<T> g(ny, nx);
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> dist(0.5, 1.5);
  for (std::int64_t i = 0; i < g.rows(); ++i) {
    for (std::int64_t j = 0; j < g.cols(); ++j) g(i, j) = static_cast<T>(dist(rng));
  }
  return g;
}

int run_bench_cpu(const BenchOptions& o) {
  const Topology topology = load_topology(o.machine.topology);
  const auto specs = map_devices(topology, DeviceMapOptions{o.machine.cpu_devices, o.machine.threads_per_device,
                                                            o.machine.devices, false});
  std::vector<Precision> precisions;
  if (o.precision == "both" || o.precision == "float") precisions.push_back(Precision::Float);
  if (o.precision == "both" || o.precision == "double") precisions.push_back(Precision::Double);

  fmt::print("# one sweep vs a copy of the same bytes (1 value read + 1 written per cell), median of {}\n",
             o.repetitions);
  fmt::print("{:<8} {:>9} {:>7} {:>7} {:>8} {:>10} {:>10} {:>10} {:>11} {:>10} {:>10}\n", "device", "precision",
             "nx", "rows", "threads", "stores", "sweep_ms", "copy_ms", "GCells/s", "sweep_GB/s", "sweep/copy");
  for (const auto& spec : specs) {
    CpuDevice device(spec.info, spec.worker_cpus, spec.cache_bytes, spin_limit_for(spec.info.threads, topology.hardware_threads()));
    for (Precision precision : precisions) {
      dispatch(precision, [&](auto zero) {
        using T = decltype(zero);
        Grid<T> grid = random_grid<T>(o.ny, o.nx);
        StencilJob job;
        job.precision = precision;
        job.nx = o.nx;
        job.ny = o.ny;
        job.initial = grid.data();
        job.result = grid.data();
        job.spike_row = (o.ny + 1) / 2;
        job.spike_col = (o.nx + 1) / 2;
        device.attach(job, RowRange{1, o.ny});
        const CpuDevice::SweepVsCopy t = device.bench(o.repetitions);
        const double cells = static_cast<double>(o.nx) * static_cast<double>(o.ny);
        fmt::print("{:<8} {:>9} {:>7} {:>7} {:>8} {:>10} {:>10.3f} {:>10.3f} {:>11.3f} {:>10.1f} {:>10.3f}\n",
                   spec.info.name, to_string(precision), o.nx, o.ny, spec.info.threads,
                   device.streaming_stores() ? "streaming" : "plain", t.sweep_s * 1e3,
                   t.copy_s * 1e3, cells / t.sweep_s / 1e9, 2.0 * sizeof(T) * cells / t.sweep_s / 1e9,
                   t.sweep_s / t.copy_s);
        device.detach();
      });
    }
  }
  return 0;
}

}  // namespace

Command add_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks (figures and ratios measured side by side)");
  bench->require_subcommand(1);
  CLI::App* cpu = bench->add_subcommand("cpu", "CPU devices: one Jacobi sweep vs a plain copy of the same bytes");
  cpu->add_option("--nx", o->nx, "interior points per row")->check(CLI::PositiveNumber)->capture_default_str();
  cpu->add_option("--ny", o->ny, "rows swept by each device")->check(CLI::PositiveNumber)->capture_default_str();
  cpu->add_option("--precision", o->precision, "float, double or both")
      ->check(CLI::IsMember({"float", "double", "both"}))->capture_default_str();
  cpu->add_option("--reps", o->repetitions, "timed repetitions (the median is shown)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  add_machine_options(cpu, o->machine);
  return [o] { return run_bench_cpu(*o); };
}

}  // namespace hetstencil::cli
