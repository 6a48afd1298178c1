#include "tools/hetstencil/stencils_bench.hpp"

#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "hetstencil/bench.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/npy.hpp"
#include "hetstencil/stencil.hpp"
#include "tools/hetstencil/machine_options.hpp"
#include "tools/hetstencil/option_checks.hpp"
#include "tools/hetstencil/problem_options.hpp"

namespace hetstencil::cli {
namespace {

struct StencilsBenchOptions {
  std::vector<std::string> stencils;  // empty: every built-in
  std::string precision = "both";
  std::int64_t nx = 0;  // 0: the size that fills the device
  std::int64_t ny = 0;
  std::int64_t nz = 0;
  int repetitions = 10;
  std::string csv;      // "": no CSV
  std::string profile;  // "": this machine's, if any
  std::vector<std::string> tunings;  // kernel parameter sets as typed; none: the profile's
  RuntimeOptions machine;
};

// A CSV field: quoted where it holds a comma or a quote (RFC 4180).
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string grid_of(const StencilTiming& t) {
  return t.nz > 0 ? fmt::format("{}x{}x{}", t.nx, t.ny, t.nz) : fmt::format("{}x{}", t.nx, t.ny);
}

int run_stencils_bench(const StencilsBenchOptions& o) {
  StencilBenchOptions b;
  for (const std::string& s : o.stencils) b.stencils.push_back(stencil_named(s));
  b.precisions.clear();
  if (o.precision != "double") b.precisions.push_back(Precision::Float);
  if (o.precision != "float") b.precisions.push_back(Precision::Double);
  b.nx = o.nx;
  b.ny = o.ny;
  b.nz = o.nz;
  b.repetitions = o.repetitions;
  b.profile = o.profile;
  b.progress = [](const std::string& what) { tell("measuring " + what); };
  for (const std::string& set : o.tunings) b.tunings.push_back(kernel_parameters(set));
  if (!o.csv.empty()) check_writable(o.csv);

  std::ofstream csv;  // without --csv it stays closed: it takes the rows and writes nothing
  if (!o.csv.empty()) csv.open(o.csv);
  csv << "device,threads,stencil,dimension,precision,nx,ny,nz,stores,sweep_s,copy_s,sweep_GBps,sweep_over_copy,"
         "predicted_s,predicted_over_measured,default_s,tuned_over_default,tuning,skipped\n";
  fmt::print("# one sweep of the whole grid vs a copy of the same bytes (1 value read + 1 written per cell), "
             "median of {}; predicted: the profile's curve of the stencil;\n# sweep_ms with the parameters {}, "
             "default_ms at its defaults ('-': nothing tuned)\n",
             o.repetitions, o.tunings.empty() ? "tuned for the device (hetstencil tune)" : "of --tuning shown last");
  fmt::print("{:<6} {:<10} {:>9} {:>15} {:>7} {:>9} {:>10} {:>10} {:>10} {:>10} {:>12} {:>10} {:>10} {:>9}\n",
             "device", "stencil", "precision", "grid", "threads", "stores", "sweep_ms", "copy_ms", "sweep_GB/s",
             "sweep/copy", "predicted_ms", "pred/meas", "default_ms", "tuned/def");
  bench_stencil_sweeps(o.machine, b, [&](const StencilTiming& t) {
    const std::string head = fmt::format("{:<6} {:<10} {:>9} {:>15} {:>7}", t.device, t.stencil,
                                         to_string(t.precision), grid_of(t), t.threads);
    csv << fmt::format("{},{},{},{},{},{},{},{},", t.device, t.threads, t.stencil, t.dimension, to_string(t.precision),
                       t.nx, t.ny, t.nz);
    if (!t.skipped.empty()) {
      fmt::print("{}   skipped: {}{}\n", head, t.skipped, t.tuning.empty() ? "" : "  (" + t.tuning + ")");
      csv << fmt::format(",,,,,,,,,{},{}\n", t.tuning, csv_field(t.skipped));
      return;
    }
    const std::string stores = t.streaming_stores ? "streaming" : "plain";
    const double gbps = t.bytes() / t.sweep_s / 1e9;
    const bool predicted = t.predicted_s > 0.0;
    const bool tuned = t.default_s > 0.0;
    fmt::print("{} {:>9} {:>10.3f} {:>10.3f} {:>10.1f} {:>10.3f} {:>12} {:>10} {:>10} {:>9}{}\n", head, stores,
               t.sweep_s * 1e3, t.copy_s * 1e3, gbps, t.sweep_s / t.copy_s,
               predicted ? fmt::format("{:.3f}", t.predicted_s * 1e3) : "-",
               predicted ? fmt::format("{:.3f}", t.predicted_s / t.sweep_s) : "-",
               tuned ? fmt::format("{:.3f}", t.default_s * 1e3) : "-",
               tuned ? fmt::format("{:.3f}", t.sweep_s / t.default_s) : "-", tuned ? "  " + t.tuning : "");
    csv << fmt::format("{},{:.6e},{:.6e},{:.3f},{:.4f},{},{},{},{},{},\n", stores, t.sweep_s, t.copy_s, gbps,
                       t.sweep_s / t.copy_s, predicted ? fmt::format("{:.6e}", t.predicted_s) : "",
                       predicted ? fmt::format("{:.4f}", t.predicted_s / t.sweep_s) : "",
                       tuned ? fmt::format("{:.6e}", t.default_s) : "",
                       tuned ? fmt::format("{:.4f}", t.sweep_s / t.default_s) : "", t.tuning);
  });
  if (!o.csv.empty()) {
    csv.close();
    if (!csv) HETSTENCIL_THROW(Error, "writing " + o.csv + " failed");
    fmt::print("csv written to {}\n", o.csv);
  }
  return 0;
}

}  // namespace

Command add_stencils_bench(CLI::App* bench) {
  auto o = std::make_shared<StencilsBenchOptions>();
  CLI::App* sub = bench->add_subcommand(
      "stencils", "Every device: one sweep of each stencil vs a plain copy of the same bytes, and the prediction");
  sub->add_option("--stencils", o->stencils,
                  "built-in names or JSON descriptions, e.g. box9,my.json (default: every built-in)")
      ->delimiter(',')->check(naming("a stencil or a file"));
  sub->add_option("--precision", o->precision, "float, double or both")
      ->check(one_of({"float", "double", "both"}))->capture_default_str();
  sub->add_option("--nx", o->nx, "interior points per row (default: the size that fills the device)")
      ->transform(grid_size());
  sub->add_option("--ny", o->ny, "interior rows (default: the size that fills the device)")->transform(grid_size());
  sub->add_option("--nz", o->nz, "interior planes of the 3-D stencils (default: the size that fills the device)")
      ->transform(grid_size());
  sub->add_option("--reps", o->repetitions, "timed repetitions (the median is shown)")
      ->transform(integer_in(1, std::numeric_limits<int>::max()))->capture_default_str();
  sub->add_option("--csv", o->csv, "write the timings as CSV to FILE (default: none)")->check(naming("a file"));
  sub->add_option("--profile", o->profile, "profile whose curves predict the sweeps (default: this machine's, "
                                           "where there is one)")
      ->check(naming("a file"));
  sub->add_option("--tuning", o->tunings,
                  "kernel parameters to sweep with instead of the profile's tuned ones, each set beside the defaults, "
                  "e.g. --tuning warps=2,lines=4 --tuning shared=1 (the names and values hetstencil tune lists)")
      ->check(kernel_parameter_set());
  add_machine_options(sub, o->machine);
  sub->footer("A size not given fills the device: nx = ny in 2-D, n^3 in 3-D, half the free memory of the device for "
              "its grids;\na device whose memory is short for them is listed as skipped. A device without a curve of "
              "the stencil\nin the profile gets '-' for its prediction. A --tuning set that a device does not take is listed "
              "skipped for it,\nwith the reason. What is being measured is said on stderr.");
  return [o] { return run_stencils_bench(*o); };
}

}  // namespace hetstencil::cli
