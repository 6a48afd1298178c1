// hetstencil bench: sweeps beside plain copies of the same bytes, measured side
// by side in one run.
//   bench cpu  each CPU device's sweep vs a copy by the same threads on the same
//              NUMA node; --beside-gpus repeats it while every GPU sweeps too
//   bench gpu  a GPU sweep vs a device-to-device cudaMemcpy of the same bytes
//   bench variants  the GPU variants' time to sync's accuracy (variants_bench.cpp)
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "devices/cpu/cpu_device.hpp"
#include "devices/cuda/cuda_bench.hpp"
#include "devices/device_map.hpp"
#include "devices/sync.hpp"
#include "hetstencil/grid.hpp"
#include "core/dispatch.hpp"
#include "runtime/executor.hpp"
#include "core/timing_grid.hpp"
#include "tools/hetstencil/commands.hpp"
#include "tools/hetstencil/machine_options.hpp"
#include "tools/hetstencil/option_checks.hpp"
#include "tools/hetstencil/problem_options.hpp"
#include "tools/hetstencil/variants_bench.hpp"

namespace hetstencil::cli {
namespace {

struct BenchOptions {
  std::int64_t nx = 4096;
  std::int64_t ny = 4096;
  std::vector<std::int64_t> sizes{4096, 16384, 32768};
  std::string precision = "both";
  int repetitions = 20;
  bool beside_gpus = false;
  RuntimeOptions machine;
};

std::vector<Precision> precisions_of(const std::string& choice) {
  std::vector<Precision> out;
  if (choice == "both" || choice == "float") out.push_back(Precision::Float);
  if (choice == "both" || choice == "double") out.push_back(Precision::Double);
  return out;
}

CpuDevice::SweepVsCopy time_cpu(CpuDevice& device, Precision precision, const BenchOptions& o) {
  return dispatch(precision, [&](auto zero) {
    using T = decltype(zero);
    StencilJob job;
    job.precision = precision;
    job.nx = o.nx;
    job.ny = o.ny;
    const std::uint64_t grid_size = grid_bytes(o.nx, o.ny, precision);
    check_memory_for(job, grid_size, {{&device, RowRange{1, o.ny}}});
    Grid<T> grid = allocating("the host grid", grid_size, [&] { return timing_grid<T>(o.ny, o.nx); });
    job.initial = grid.data();
    job.result = grid.data();
    job.spike_row = (o.ny + 1) / 2;
    job.spike_col = (o.nx + 1) / 2;
    device.attach(job, RowRange{1, o.ny});
    const CpuDevice::SweepVsCopy t = device.bench(o.repetitions);
    device.detach();
    return t;
  });
}

int run_bench_cpu(const BenchOptions& o) {
  for (Precision precision : precisions_of(o.precision)) grid_bytes(o.nx, o.ny, precision);
  const Topology topology = load_topology(o.machine.topology);
  // Beside GPUs, each GPU's host thread takes its core, as in a real solve.
  const bool gpus = o.beside_gpus && !topology.gpus.empty();
  const auto specs = map_devices(topology, DeviceMapOptions{o.machine.cpu_devices, o.machine.threads_per_device,
                                                            o.machine.devices, gpus});
  fmt::print("# one sweep vs a copy of the same bytes (1 value read + 1 written per cell), median of {}\n",
             o.repetitions);
  fmt::print("{:<8} {:>9} {:>7} {:>7} {:>8} {:>10} {:>10} {:>10} {:>11} {:>10} {:>10}{}\n", "device", "precision",
             "nx", "rows", "threads", "stores", "sweep_ms", "copy_ms", "GCells/s", "sweep_GB/s", "sweep/copy",
             gpus ? "   beside_gpus_ms  beside/alone  gpu_sweeps" : "");
  for (const auto& spec : specs) {
    if (spec.info.kind != DeviceKind::Cpu) continue;
    CpuDevice device(spec.info, spec.worker_cpus, spec.cache_bytes,
                     spin_limit_for(spec.info.threads, topology.hardware_threads()));
    for (Precision precision : precisions_of(o.precision)) {
      const CpuDevice::SweepVsCopy t = time_cpu(device, precision, o);
      const double cells = static_cast<double>(o.nx) * static_cast<double>(o.ny);
      fmt::print("{:<8} {:>9} {:>7} {:>7} {:>8} {:>10} {:>10.3f} {:>10.3f} {:>10.3f} {:>11.1f} {:>10.3f}",
                 spec.info.name, to_string(precision), o.nx, o.ny, spec.info.threads,
                 device.streaming_stores() ? "streaming" : "plain", t.sweep_s * 1e3, t.copy_s * 1e3,
                 cells / t.sweep_s / 1e9, 2.0 * static_cast<double>(value_bytes(precision)) * cells / t.sweep_s / 1e9,
                 t.sweep_s / t.copy_s);
      if (gpus) {
        std::vector<std::unique_ptr<GpuLoad>> loads;
        for (const auto& g : specs) {
          if (g.info.kind == DeviceKind::Gpu) {
            loads.push_back(std::make_unique<GpuLoad>(g.gpu, g.worker_cpus.front(), g.own_core, 8192));
          }
        }
        const CpuDevice::SweepVsCopy beside = time_cpu(device, precision, o);
        std::int64_t sweeps = 0;
        for (const auto& l : loads) sweeps += l->sweeps();
        loads.clear();
        fmt::print(" {:>16.3f} {:>13.3f} {:>11}", beside.sweep_s * 1e3, beside.sweep_s / t.sweep_s, sweeps);
      }
      fmt::print("\n");
    }
  }
  return 0;
}

int run_bench_gpu(const BenchOptions& o) {
  const Topology topology = load_topology();
  const auto specs = map_devices(topology, DeviceMapOptions{0, 0, o.machine.devices, true});
  fmt::print("# one sweep vs cudaMemcpy (device to device) of the same bytes: nx*ny values read and written; "
             "median of {}\n",
             o.repetitions);
  fmt::print("{:<6} {:>9} {:>7} {:>10} {:>10} {:>10} {:>10} {:>11} {:>10} {:>14} {:>14}\n", "device", "precision", "n",
             "sweep_ms", "GCells/s", "sweep_GB/s", "copy_ms", "copy_GB/s", "sweep/copy", "+residual_ms",
             "+residual/copy");
  int gpus = 0;
  for (const auto& spec : specs) {
    if (spec.info.kind != DeviceKind::Gpu) continue;
    ++gpus;
    for (const GpuSweepTiming& t : bench_gpu_sweeps(spec.gpu, o.sizes, precisions_of(o.precision), o.repetitions)) {
      if (t.skipped) {
        fmt::print("{:<6} {:>9} {:>7}   skipped: not enough GPU memory\n", spec.info.name, to_string(t.precision), t.n);
        continue;
      }
      const double cells = static_cast<double>(t.n) * static_cast<double>(t.n);
      const double bytes = 2.0 * static_cast<double>(value_bytes(t.precision)) * cells;
      fmt::print("{:<6} {:>9} {:>7} {:>10.3f} {:>10.1f} {:>10.0f} {:>10.3f} {:>11.0f} {:>10.3f} {:>14.3f} {:>14.3f}\n",
                 spec.info.name, to_string(t.precision), t.n, t.sweep_s * 1e3, cells / t.sweep_s / 1e9,
                 bytes / t.sweep_s / 1e9, t.copy_s * 1e3, bytes / t.copy_s / 1e9, t.sweep_s / t.copy_s,
                 t.sweep_residual_s * 1e3, t.sweep_residual_s / t.copy_s);
    }
  }
  if (gpus == 0) fmt::print("no GPU: nothing to measure\n");
  return 0;
}

}  // namespace

Command add_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  auto mode = std::make_shared<std::string>();
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks (figures and ratios measured side by side)");
  bench->require_subcommand(1);
  CLI::App* cpu = bench->add_subcommand("cpu", "CPU devices: one Jacobi sweep vs a plain copy of the same bytes");
  cpu->add_option("--nx", o->nx, "interior points per row")->transform(grid_size())->capture_default_str();
  cpu->add_option("--ny", o->ny, "rows swept by each device")->transform(grid_size())->capture_default_str();
  cpu->add_flag("--beside-gpus", o->beside_gpus,
                "also time each sweep while every GPU sweeps, its host thread on its reserved core");
  CLI::App* gpu = bench->add_subcommand("gpu", "GPUs: one Jacobi sweep vs a device-to-device copy of the same bytes");
  gpu->add_option("--sizes", o->sizes, "grid sizes n (n x n), e.g. 16384,32768")->delimiter(',')->transform(grid_size())
      ->default_str(fmt::format("{}", fmt::join(o->sizes, ",")));
  gpu->add_option("--devices", o->machine.devices, "GPUs to measure, e.g. gpu0 (default: all)")
      ->check(naming("devices, e.g. gpu0,gpu1"));
  for (CLI::App* sub : {cpu, gpu}) {
    sub->add_option("--precision", o->precision, "float, double or both")
        ->check(one_of({"float", "double", "both"}))->capture_default_str();
    sub->add_option("--reps", o->repetitions, "timed repetitions (the median is shown)")
        ->transform(integer_in(1, std::numeric_limits<int>::max()))->capture_default_str();
  }
  add_machine_options(cpu, o->machine);
  const Command variants = add_variants_bench(bench);
  cpu->callback([mode] { *mode = "cpu"; });
  gpu->callback([mode] { *mode = "gpu"; });
  bench->get_subcommand("variants")->callback([mode] { *mode = "variants"; });
  return [o, mode, variants] {
    if (*mode == "variants") return variants();
    return *mode == "gpu" ? run_bench_gpu(*o) : run_bench_cpu(*o);
  };
}

}  // namespace hetstencil::cli
