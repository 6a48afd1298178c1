// hetstencil tune: each device's kernel parameters for a stencil and
// precision, searched with measured sweeps and kept in the profile.
#include <limits>
#include <memory>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "hetstencil/stencil.hpp"
#include "hetstencil/tune.hpp"
#include "tools/hetstencil/commands.hpp"
#include "tools/hetstencil/machine_options.hpp"
#include "tools/hetstencil/option_checks.hpp"

namespace hetstencil::cli {
namespace {

constexpr double kMostBudgetSeconds = 86400.0;  // a day

struct TuneCommandOptions {
  std::string stencil = "poisson5";
  std::string precision = "double";
  TuneOptions tune;
  RuntimeOptions machine;
  bool json = false;
};

std::string grid_of(const DeviceTuning& d) {
  return d.nz > 0 ? fmt::format("{}x{}x{}", d.nx, d.ny, d.nz) : fmt::format("{}x{}", d.nx, d.ny);
}

// "chunk_values=512 (256)": each parameter's value, and its default where it differs.
std::string values_of(const DeviceTuning& d) {
  std::string out;
  for (const TunedValue& v : d.parameters) {
    out += fmt::format("{}{}={}", out.empty() ? "" : " ", v.name, v.value);
    if (v.value != v.default_value) out += fmt::format(" (default {})", v.default_value);
  }
  return out;
}

int run_tune(TuneCommandOptions& o) {
  o.tune.stencil = stencil_named(o.stencil);
  o.tune.precision = parse_precision(o.precision);
  o.tune.progress = [](const std::string& what) { tell(what); };  // stderr: --json keeps stdout to itself
  const Tuned tuned = tune_machine(o.machine, o.tune);
  if (o.json) {
    fmt::print("{}\n", to_json(tuned));
    return 0;
  }
  fmt::print("# {} {}: one sweep of the whole grid, median of {} or more; a parameter set is kept only when it beats "
             "the best so far by more than both spreads (sweep times on a shared host vary widely)\n",
             tuned.stencil, to_string(tuned.precision), o.tune.repetitions);
  fmt::print("{:<6} {:>13} {:>11} {:>11} {:>10} {:>6} {:>10}  {}\n", "device", "grid", "default_ms", "tuned_ms",
             "spread_ms", "gain", "candidates", "parameters");
  for (const DeviceTuning& d : tuned.devices) {
    if (d.parameters.empty()) {
      fmt::print("{:<6} {:>13} {:>11} {:>11} {:>10} {:>6} {:>10}  no kernel parameters to tune\n", d.device,
                 grid_of(d), "-", "-", "-", "-", "-");
      continue;
    }
    fmt::print("{:<6} {:>13} {:>11.3f} {:>11.3f} {:>10.3f} {:>5.2f}x {:>10}  {}{}\n", d.device, grid_of(d),
               d.default_s * 1e3, d.tuned_s * 1e3, d.spread_s * 1e3, d.gain(), d.candidates, values_of(d),
               d.out_of_time ? " (the budget ended the search)" : "");
  }
  fmt::print("saved to {}: solves, calibrations and benchmarks on this machine sweep with them\n", tuned.profile);
  return 0;
}

}  // namespace

Command add_tune_command(CLI::App& app) {
  auto o = std::make_shared<TuneCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "tune", "Search each device's kernel parameters for a stencil and precision; keep the winners in the profile");
  sub->add_option("--stencil", o->stencil, "a built-in name or a JSON description")
      ->check(naming("a stencil or a file"))->capture_default_str();
  sub->add_option("--precision", o->precision, "float or double")->check(one_of({"float", "double"}))
      ->capture_default_str();
  sub->add_option("--budget", o->tune.budget_s, "seconds of search a device")
      ->transform(number_in(0.0, kMostBudgetSeconds, true))->capture_default_str();
  sub->add_option("--reps", o->tune.repetitions,
                  "timed sweeps a parameter set at least, more where the budget allows (their median and spread count)")
      ->transform(integer_in(3, 1000))->capture_default_str();
  sub->add_option("--nx", o->tune.nx, "interior points per row (default: 2048 (2-D) or 128 (3-D) on a CPU device, "
                                      "the size that fills half a GPU)")
      ->transform(integer_in(1, std::int64_t(1) << 30));
  sub->add_option("--ny", o->tune.ny, "interior rows (default: as --nx)")
      ->transform(integer_in(1, std::int64_t(1) << 30));
  sub->add_option("--nz", o->tune.nz, "interior planes of a 3-D stencil (default: as --nx)")
      ->transform(integer_in(1, std::int64_t(1) << 30));
  sub->add_option("--profile", o->machine.profile, "profile file the winners go to (default: this machine's, under "
                                                   "$XDG_CACHE_HOME/hetstencil)")
      ->check(naming("a file"));
  sub->add_flag("--json", o->json, "print one JSON object (hetstencil-tune)");
  add_machine_options(sub, o->machine);
  sub->footer("Each device in turn: its sweep at the default parameters, then each parameter's other values, a few "
              "sweeps each;\nno parameter changes a bit of a result. hetstencil calibrate does not tune (it measures "
              "with the tuned values):\ntune first, then calibrate. GPUs list their parameters as their kernels "
              "expose them.");
  return [o] { return run_tune(*o); };
}

}  // namespace hetstencil::cli
