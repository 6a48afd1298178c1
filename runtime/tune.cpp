// tune_machine: each device's search (model/tune.hpp) on a grid of its own,
// one device at a time, and the winners kept in the profile.
#include "hetstencil/tune.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

#include "core/dispatch.hpp"
#include "core/robust.hpp"
#include "core/schema.hpp"
#include "core/timing_grid.hpp"
#include "devices/backend.hpp"
#include "devices/slab_memory.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/grid.hpp"
#include "hetstencil/statistics.hpp"
#include "model/profile.hpp"
#include "model/tune.hpp"
#include "runtime/sweep_timing.hpp"

namespace hetstencil {
namespace {

// Larger than a CPU socket's cache (a 2-D grid of doubles: 64 MiB of slabs),
// so that its sweeps stream from memory as a solve's do.
constexpr std::int64_t kCpuSide2d = 2048;
constexpr std::int64_t kCpuSide3d = 128;

void check_options(const TuneOptions& o) {
  o.stencil.validate();
  if (!(o.budget_s > 0.0) || !std::isfinite(o.budget_s)) {
    HETSTENCIL_THROW(InvalidArgument, "the tuning budget must be a positive number of seconds");
  }
  if (o.repetitions < 3) {
    HETSTENCIL_THROW(InvalidArgument, "tuning needs at least 3 repetitions a parameter set (their median and spread)");
  }
  if (o.nx < 0 || o.ny < 0 || o.nz < 0) HETSTENCIL_THROW(InvalidArgument, "the tuning grid's sizes must be >= 0");
}

// The job a device is tuned on: the sizes asked for, else its default size.
StencilJob tuning_job(const Device& device, const TuneOptions& o) {
  const bool three_d = o.stencil.dimension == 3;
  std::int64_t n = 0;
  if (o.nx == 0 || o.ny == 0 || (three_d && o.nz == 0)) {
    n = device.info().kind == DeviceKind::Cpu ? (three_d ? kCpuSide3d : kCpuSide2d)
                                              : filling_size(device, o.stencil, o.precision);
  }
  StencilJob job = stencil_job(o.stencil, o.precision, o.nx > 0 ? o.nx : n, o.ny > 0 ? o.ny : n, o.nz > 0 ? o.nz : n);
  grid_bytes(job.shape(), job.precision);  // sizes in bounds
  return job;
}

DeviceTuning tune_device(Device& device, const TuneOptions& o) {
  DeviceTuning out;
  out.device = device.info().name;
  StencilJob job = tuning_job(device, o);
  out.nx = job.nx;
  out.ny = job.ny;
  out.nz = job.nz;
  const std::vector<Tunable> tunables = device.tunables(job);
  if (tunables.empty()) return out;
  if (o.progress) {
    o.progress(fmt::format("{}: tuning {} {} on {}", out.device, o.stencil.name, to_string(o.precision),
                           grid_text(job.nx, job.ny, job.nz)));
  }
  TuneSearchOptions search;
  search.budget_s = o.budget_s;
  if (o.progress) search.progress = [&](const std::string& line) { o.progress(out.device + ": " + line); };
  search.prepare = [&](const std::vector<Tuning>& tunings) { device.prepare_sweeps(job, tunings); };
  const TuneOutcome found = dispatch(job.precision, [&](auto zero) {
    using T = decltype(zero);
    // A CPU device's slab is filled from a host grid; a GPU sweeps values of its own.
    Grid<T> grid;
    if (device.info().kind == DeviceKind::Cpu) {
      const std::uint64_t bytes = grid_bytes(job.shape(), job.precision);
      check_memory_for(job, bytes, {{&device, RowRange{1, job.units()}}});
      grid = allocating("the host grid", bytes, [&] { return timing_grid<T>(job.shape()); });
    }
    // Past the first measurement (the defaults'), as many sweeps a parameter
    // set as two rounds over every value would fit in the budget where the
    // defaults' samples spread: medians of more samples move less on a noisy
    // host. Where they spread by less than 1% (a GPU), more samples would tell
    // the sets apart no better and leave the budget fewer of them. The sets:
    // those a search from each start tries once, every start, and the winner
    // and the defaults again.
    std::size_t starts = 1, per_start = 0;
    for (const Tunable& t : tunables) (t.family ? starts : per_start) += t.values.size() - 1;
    const std::size_t sets = starts * (per_start + 1) + 2;
    int repetitions = o.repetitions;
    return search_tuning(
        tunables,
        [&](const Tuning& tuning) {
          job.tuning = tuning;
          const auto begin = std::chrono::steady_clock::now();
          std::vector<double> samples = stencil_sweep_samples(device, job, grid.data(), repetitions);
          const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
          const double sweep_s = median(samples);
          if (tuning.empty() && sweep_s > 0.0 && mad(samples) > 0.01 * sweep_s) {
            // What a set costs besides its timed sweeps (a CPU slab's attach, the warm-up).
            const double overhead = std::max(0.0, took - static_cast<double>(repetitions) * sweep_s);
            const double fit = (o.budget_s / (2.0 * static_cast<double>(sets)) - overhead) / sweep_s;
            repetitions = static_cast<int>(std::clamp(fit, static_cast<double>(o.repetitions), 1000.0));
          }
          return samples;
        },
        search);
  });
  for (const Tunable& t : tunables) out.parameters.push_back({t.name, tuned_value(found.chosen, t), t.default_value});
  out.default_s = found.default_s;
  out.tuned_s = found.tuned_s;
  out.spread_s = found.spread_s;
  out.candidates = found.candidates;
  out.out_of_time = found.out_of_time;
  return out;
}

}  // namespace

Tuned tune_machine(const RuntimeOptions& machine, const TuneOptions& options) {
  check_options(options);
  const Topology topology = load_topology(machine.topology);
  if (!topology.this_machine) {
    HETSTENCIL_THROW(InvalidArgument, "tuning measures this machine's devices; a described machine (--topology, "
                                      "--synthetic) has none to measure");
  }
  MachineDevices made = make_devices(
      topology, DeviceMapOptions{machine.cpu_devices, machine.threads_per_device, machine.devices, true, {}}, true);
  const Fingerprint here = fingerprint_of(topology);
  Tuned out;
  out.stencil = options.stencil.name;
  out.precision = options.precision;
  out.profile = machine.profile.empty() ? default_profile_path(here.host) : machine.profile;
  for (auto& device : made.devices) out.devices.push_back(tune_device(*device, options));
  const std::string key = tuning_key(options.stencil, options.precision);
  // Through merge_into, as a calibration's tuning goes: a device whose values
  // change loses the figures measured with the old ones.
  Profile measured;
  measured.fingerprint = here;
  for (std::size_t k = 0; k < out.devices.size(); ++k) {
    const DeviceTuning& t = out.devices[k];
    if (t.parameters.empty()) continue;
    const DeviceInfo& info = made.devices[k]->info();
    DeviceProfile& d = measured.devices[device_key(info)];
    d.name = info.name;
    d.kind = info.kind == DeviceKind::Cpu ? "cpu" : "gpu";
    TunedParameters& kept = d.tuned[key];
    for (const TunedValue& v : t.parameters) {
      if (v.value != v.default_value) kept.values[v.name] = v.value;
    }
    kept.default_s = t.default_s;
    kept.tuned_s = t.tuned_s;
    kept.grid = grid_text(t.nx, t.ny, t.nz);
  }
  update_profile(out.profile, here, [&](Profile& stored) { merge_into(stored, measured); });
  return out;
}

std::string to_json(const Tuned& tuned) {
  nlohmann::json devices = nlohmann::json::array();
  for (const DeviceTuning& d : tuned.devices) {
    nlohmann::json parameters = nlohmann::json::array();
    for (const TunedValue& v : d.parameters) {
      parameters.push_back({{"name", v.name}, {"value", v.value}, {"default", v.default_value}});
    }
    devices.push_back({{"name", d.device},
                       {"nx", d.nx},
                       {"ny", d.ny},
                       {"nz", d.nz},
                       {"parameters", parameters},
                       {"default_s", d.default_s},
                       {"tuned_s", d.tuned_s},
                       {"spread_s", d.spread_s},
                       {"gain", d.gain()},
                       {"candidates", d.candidates},
                       {"out_of_time", d.out_of_time}});
  }
  nlohmann::json out{{"stencil", tuned.stencil},
                     {"precision", to_string(tuned.precision)},
                     {"profile", tuned.profile},
                     {"devices", devices}};
  stamp_schema(out, kTuneSchema);
  return out.dump(2);
}

}  // namespace hetstencil
