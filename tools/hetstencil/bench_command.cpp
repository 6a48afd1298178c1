// hetstencil bench: sweeps beside plain copies of the same bytes, measured side
// by side in one run.
//   bench cpu  each CPU device's sweep vs a copy by the same threads on the same
//              NUMA node; --beside-gpus repeats it while every GPU sweeps too
//   bench gpu  a GPU sweep vs a device-to-device cudaMemcpy of the same bytes
//   bench variants  the GPU variants' time to sync's accuracy (variants_bench.cpp)
//   bench scaling   one solve over 1, 2, ... N GPUs (scaling_bench.cpp)
//   bench stencils  every device's sweep of each stencil vs a copy, and its prediction (stencils_bench.cpp)
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "hetstencil/bench.hpp"
#include "hetstencil/grid.hpp"
#include "hetstencil/topology.hpp"
#include "tools/hetstencil/commands.hpp"
#include "tools/hetstencil/machine_options.hpp"
#include "tools/hetstencil/option_checks.hpp"
#include "tools/hetstencil/problem_options.hpp"
#include "tools/hetstencil/scaling_bench.hpp"
#include "tools/hetstencil/stencils_bench.hpp"
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

int run_bench_cpu(const BenchOptions& o) {
  const std::vector<Precision> precisions = precisions_of(o.precision);
  for (Precision precision : precisions) grid_bytes(o.nx, o.ny, precision);
  const Topology topology = load_topology(o.machine.topology);
  const bool gpus = o.beside_gpus && topology.this_machine && !topology.gpus.empty();
  fmt::print("# one sweep vs a copy of the same bytes (1 value read + 1 written per cell), median of {}\n",
             o.repetitions);
  fmt::print("{:<8} {:>9} {:>7} {:>7} {:>8} {:>10} {:>10} {:>10} {:>11} {:>10} {:>10}{}\n", "device", "precision",
             "nx", "rows", "threads", "stores", "sweep_ms", "copy_ms", "GCells/s", "sweep_GB/s", "sweep/copy",
             gpus ? "   beside_gpus_ms  beside/alone  gpu_sweeps" : "");
  bench_cpu_sweeps(o.machine, o.nx, o.ny, precisions, o.repetitions, gpus, [&](const SweepTiming& t) {
    const double cells = static_cast<double>(t.nx) * static_cast<double>(t.ny);
    fmt::print("{:<8} {:>9} {:>7} {:>7} {:>8} {:>10} {:>10.3f} {:>10.3f} {:>10.3f} {:>11.1f} {:>10.3f}", t.device,
               to_string(t.precision), t.nx, t.ny, t.threads, t.streaming_stores ? "streaming" : "plain",
               t.sweep_s * 1e3, t.copy_s * 1e3, cells / t.sweep_s / 1e9,
               2.0 * static_cast<double>(value_bytes(t.precision)) * cells / t.sweep_s / 1e9, t.sweep_s / t.copy_s);
    if (gpus) fmt::print(" {:>16.3f} {:>13.3f} {:>11}", t.beside_sweep_s * 1e3, t.beside_sweep_s / t.sweep_s, t.load_sweeps);
    fmt::print("\n");
  });
  return 0;
}

int run_bench_gpu(const BenchOptions& o) {
  fmt::print("# one sweep vs cudaMemcpy (device to device) of the same bytes: nx*ny values read and written; "
             "median of {}\n",
             o.repetitions);
  fmt::print("{:<6} {:>9} {:>7} {:>10} {:>10} {:>10} {:>10} {:>11} {:>10} {:>14} {:>14}\n", "device", "precision", "n",
             "sweep_ms", "GCells/s", "sweep_GB/s", "copy_ms", "copy_GB/s", "sweep/copy", "+residual_ms",
             "+residual/copy");
  bool any = false;
  bench_gpu_sweeps(o.machine.devices, o.sizes, precisions_of(o.precision), o.repetitions, [&](const SweepTiming& t) {
    any = true;
    if (t.skipped) {
      fmt::print("{:<6} {:>9} {:>7}   skipped: not enough GPU memory\n", t.device, to_string(t.precision), t.nx);
      return;
    }
    const double cells = static_cast<double>(t.nx) * static_cast<double>(t.ny);
    const double bytes = 2.0 * static_cast<double>(value_bytes(t.precision)) * cells;
    fmt::print("{:<6} {:>9} {:>7} {:>10.3f} {:>10.1f} {:>10.0f} {:>10.3f} {:>11.0f} {:>10.3f} {:>14.3f} {:>14.3f}\n",
               t.device, to_string(t.precision), t.nx, t.sweep_s * 1e3, cells / t.sweep_s / 1e9,
               bytes / t.sweep_s / 1e9, t.copy_s * 1e3, bytes / t.copy_s / 1e9, t.sweep_s / t.copy_s,
               t.checked_sweep_s * 1e3, t.checked_sweep_s / t.copy_s);
  });
  if (!any) fmt::print("no GPU: nothing to measure\n");
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
  const Command scaling = add_scaling_bench(bench);
  const Command stencils = add_stencils_bench(bench);
  cpu->callback([mode] { *mode = "cpu"; });
  gpu->callback([mode] { *mode = "gpu"; });
  bench->get_subcommand("variants")->callback([mode] { *mode = "variants"; });
  bench->get_subcommand("scaling")->callback([mode] { *mode = "scaling"; });
  bench->get_subcommand("stencils")->callback([mode] { *mode = "stencils"; });
  return [o, mode, variants, scaling, stencils] {
    if (*mode == "variants") return variants();
    if (*mode == "scaling") return scaling();
    if (*mode == "stencils") return stencils();
    return *mode == "gpu" ? run_bench_gpu(*o) : run_bench_cpu(*o);
  };
}

}  // namespace hetstencil::cli
