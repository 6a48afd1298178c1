// hetstencil sweep: the original study's experiment (its figures 14-16). One
// device's share of the rows is swept over a range, the other devices sharing
// the rest; every split is run and measured beside the model's prediction, and
// the model's own split is marked against the best one measured.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

#include "hetstencil/hetstencil.hpp"
#include "tools/hetstencil/commands.hpp"
#include "tools/hetstencil/exit_codes.hpp"
#include "tools/hetstencil/machine_options.hpp"
#include "tools/hetstencil/option_checks.hpp"
#include "tools/hetstencil/plot.hpp"
#include "tools/hetstencil/problem_options.hpp"

namespace hetstencil::cli {
namespace {

struct SweepOptions {
  ProblemOptions problem;
  RuntimeOptions machine;
  std::string vary;  // "": the first CPU device beside GPUs, else the first device
  double from = -1.0, to = -1.0, step = 0.01;
  int repeats = 3;
  std::string csv;   // "": no CSV
  std::string plot;  // "": no plot
  std::string json;  // "": no JSON
  bool verify = false;
  bool calibrate = true;
  double budget = 10.0;
};

// A canary below this fraction of the canaries' median, or other processes or
// the hypervisor crowding the run (HostLoad), say the host is busy with
// something else (a neighbour's build, another job, another guest) and took
// cores the run wanted: the run is re-measured once, and its point marked when
// it is disturbed again.
constexpr double kDisturbedBelow = 0.8;
// The sweep's canaries this many times faster or slower than the one its
// profile's calibration took: the host was in another state then (an H200
// host's cores ran its CPU curve 1.7 times slower in one calibration than in
// the sweep a minute later), and every prediction carries it.
constexpr double kCalibratedApart = 1.25;

struct Point {
  std::string kind;  // "sweep" or "model"
  std::vector<std::int64_t> rows;  // per device, in device order
  double share = 0.0;              // of the varied device
  std::optional<double> predicted;  // seconds an iteration
  // Seconds an iteration where a CPU device's slab, which fits a cache in its
  // curve, sweeps at the pace its curve has past that cache (Prediction::uncached_iteration_s).
  std::optional<double> uncached;
  std::vector<double> samples;      // measured seconds an iteration, one a repeat
  std::vector<double> canaries;     // bytes/s of the canary before each kept sample
  std::vector<double> others;       // cores other processes used during each kept sample (-1: unknown)
  std::vector<double> stolen;       // cores' worth the hypervisor took during each kept sample (-1: unknown)
  std::vector<bool> quiet;          // each kept sample: neither its canary, the others nor the hypervisor disturbed it
  bool disturbed = false;           // no sample was quiet
  std::string same_bits;  // "yes", "no", or "" when not verified

  Point(std::string k, std::vector<std::int64_t> r) : kind(std::move(k)), rows(std::move(r)) {}
  /// The median of the quiet samples, or of all when none was quiet.
  double measured() const {
    std::vector<double> q;
    for (std::size_t k = 0; k < samples.size(); ++k) {
      if (quiet[k]) q.push_back(samples[k]);
    }
    return median_of(q.empty() ? samples : q);
  }
  double fastest() const { return *std::min_element(samples.begin(), samples.end()); }
  double slowest() const { return *std::max_element(samples.begin(), samples.end()); }

  static double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  }
};

// The smaller of a point's errors against its two paces: how far the model's
// figures are from it once a cache shared with others may be lost.
double nearer_error_percent(const Point& pt) {
  const double measured = pt.measured();
  double error = std::abs(error_percent(*pt.predicted, measured));
  if (pt.uncached) error = std::min(error, std::abs(error_percent(*pt.uncached, measured)));
  return error;
}

// The order the points are measured in, the same in every round and every
// sweep: shuffled, so that a drift of the host (warming, a neighbour's job)
// spreads over the shares instead of bending the curve at one end.
std::vector<std::size_t> shuffled_order(std::size_t n) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 draw(20);  // mt19937's sequence is fixed by the standard
  for (std::size_t k = n; k > 1; --k) std::swap(order[k - 1], order[draw() % k]);
  return order;
}

std::size_t varied_device(const SweepOptions& o, const std::vector<DeviceInfo>& devices) {
  if (!o.vary.empty()) {
    for (std::size_t k = 0; k < devices.size(); ++k) {
      if (devices[k].name == o.vary) return k;
    }
    HETSTENCIL_THROW(InvalidArgument, "--vary " + o.vary + ": no such device in this run (see hetstencil probe)");
  }
  const bool gpus = std::any_of(devices.begin(), devices.end(), [](const DeviceInfo& d) { return d.kind == DeviceKind::Gpu; });
  for (std::size_t k = 0; k < devices.size(); ++k) {
    if (!gpus || devices[k].kind == DeviceKind::Cpu) return k;
  }
  return 0;
}

// The varied device gets `rows`; the others share the rest by their weights.
std::vector<std::int64_t> split_rows(std::size_t varied, std::int64_t rows, const std::vector<double>& weights,
                                     std::int64_t ny) {
  std::vector<double> others = weights;
  others[varied] = 0.0;
  std::vector<std::int64_t> out(weights.size(), 0);
  if (rows < ny) out = rows_of_shares(others, ny - rows);
  out[varied] = rows;
  return out;
}

int run_sweep(const SweepOptions& o) {
  const Problem p = make_problem(o.problem);
  check_plot_options(o.csv, o.plot);
  if (!o.csv.empty()) check_writable(o.csv);
  if (!o.plot.empty()) check_writable(o.plot);
  if (!o.json.empty()) check_writable(o.json);

  Runtime runtime(o.machine);
  const VariantChoice variant = o.problem.variant_choice();
  const auto& devices = runtime.devices();
  if (devices.size() < 2) HETSTENCIL_THROW(InvalidArgument, "a sweep needs two devices or more (see --devices)");
  PlanOptions planning;
  planning.variant = variant;
  planning.calibrate = o.calibrate;
  planning.budget_s = o.budget;
  planning.notify = tell;
  const Plan planned = runtime.plan(p, planning);
  std::vector<std::string> names;
  for (const auto& d : devices) names.push_back(d.name);
  const std::size_t v = varied_device(o, devices);

  // The model's split, when there is a model; the other devices share the
  // rest as the model shares it between them (evenly without a model).
  std::optional<std::vector<std::int64_t>> model_rows;
  std::vector<double> weights(devices.size(), 1.0);
  const bool modelled = planned.modelled;
  if (modelled) {
    model_rows = std::vector<std::int64_t>(devices.size(), 0);
    for (const auto& part : planned.parts) (*model_rows)[part.device] = part.rows;
    double others = 0.0;
    for (std::size_t k = 0; k < devices.size(); ++k) {
      if (k != v) others += static_cast<double>((*model_rows)[k]);
    }
    if (others > 0.0) {
      for (std::size_t k = 0; k < devices.size(); ++k) weights[k] = static_cast<double>((*model_rows)[k]);
    }
  }
  const double centre = model_rows ? static_cast<double>((*model_rows)[v]) / static_cast<double>(p.ny)
                                   : 1.0 / static_cast<double>(devices.size());
  const double from = o.from >= 0.0 ? o.from : std::max(0.0, centre - 0.1);
  const double to = o.to >= 0.0 ? o.to : std::min(1.0, centre + 0.1);
  if (!(from <= to) || to > 1.0 || !(o.step > 0.0)) {
    HETSTENCIL_THROW(InvalidArgument, fmt::format("the shares must satisfy 0 <= --from ({}) <= --to ({}) <= 1 and "
                                                  "--step ({}) > 0", from, to, o.step));
  }
  // Counted in double: a tiny --step gives more splits than an integer holds.
  const double splits = std::floor((to - from) / o.step + 1e-9) + 1.0;
  if (splits > 1001.0) {
    HETSTENCIL_THROW(InvalidArgument, fmt::format("{:g} splits from {} to {}: take a larger --step (1001 splits at most)",
                                                  splits, from, to));
  }
  const auto steps = static_cast<std::int64_t>(splits) - 1;

  std::vector<Point> points;
  for (std::int64_t k = 0; k <= steps; ++k) {
    const double share = from + static_cast<double>(k) * o.step;
    const auto rows = static_cast<std::int64_t>(std::llround(share * static_cast<double>(p.ny)));
    Point pt("sweep", split_rows(v, rows, weights, p.ny));
    if (points.empty() || points.back().rows != pt.rows) points.push_back(pt);
  }
  if (model_rows) points.emplace_back("model", *model_rows);

  std::optional<Solution> reference;
  if (o.verify) {
    fmt::print(stderr, "hetstencil: computing the sequential reference to compare with\n");
    reference = solve_reference(p).solution;
  }
  fmt::print("sweeping the share of {} over {} splits of {} x {} {}, {} iterations, {} rounds in a shuffled order{}\n",
             names[v], points.size(), p.nx, p.ny, to_string(p.precision), p.stop.max_iterations, o.repeats,
             modelled ? "" : " (no model: nothing predicted)");
  std::vector<Plan> plans;
  for (Point& pt : points) {
    pt.share = static_cast<double>(pt.rows[v]) / static_cast<double>(p.ny);
    plans.push_back(plan_of(names, pt.rows, devices));
    plans.back().variant = variant;
    plans.back().prediction = runtime.predict(p, plans.back());
  }
  // Canaries are judged against the median of all so far: one copy that
  // found its buffers in the cache (49 GB/s among 23 GB/s ones on the 2-core
  // VM) would make every later one look disturbed.
  std::vector<double> canaries;
  for (int warm = 0; warm < 3; ++warm) canaries.push_back(host_canary_bytes_per_s());
  const std::vector<std::size_t> order = shuffled_order(points.size());
  for (int round = 0; round < o.repeats; ++round) {
    for (std::size_t i : order) {
      Point& pt = points[i];
      // A run after a low canary is measured once more; a second low canary marks the point.
      for (int attempt = 0; attempt < 2; ++attempt) {
        const double canary = host_canary_bytes_per_s();
        canaries.push_back(canary);
        const HostLoad load;
        const Result result = runtime.solve(p, plans[i]);
        const HostLoad::Figures host = load.since_start();
        pt.predicted = predicted_iteration_s(result.report);
        pt.uncached = uncached_iteration_s(result.report);
        if (reference && pt.same_bits.empty()) pt.same_bits = same_bits(result.solution, *reference) ? "yes" : "no";
        const bool quiet = canary >= kDisturbedBelow * Point::median_of(canaries) && !host.crowded();
        if (!quiet && attempt == 0) continue;
        pt.samples.push_back(iteration_s(result.report));
        pt.canaries.push_back(canary);
        pt.others.push_back(host.others);
        pt.stolen.push_back(host.others < 0.0 ? -1.0 : host.stolen);
        pt.quiet.push_back(quiet);
        break;
      }
    }
    fmt::print("round {}/{} done\n", round + 1, o.repeats);
  }
  for (Point& pt : points) pt.disturbed = std::none_of(pt.quiet.begin(), pt.quiet.end(), [](bool q) { return q; });

  std::ofstream csv;  // without --csv it stays closed: it takes the rows and writes nothing
  if (!o.csv.empty()) csv.open(o.csv);
  csv << "point,share";
  for (const auto& n : names) csv << ',' << n << "_rows";
  csv << ",predicted_iteration_s,measured_iteration_s,measured_min_s,measured_max_s,error_percent,disturbed,same_bits,"
         "uncached_iteration_s\n";
  nlohmann::json json_points = nlohmann::json::array();
  for (const Point& pt : points) {
    const double measured = pt.measured();
    const std::string predicted_ms = pt.predicted ? fmt::format("{:.4f} ms", *pt.predicted * 1e3) : "-";
    const std::string error = pt.predicted ? fmt::format("{:.2f}", error_percent(*pt.predicted, measured)) : "";
    csv << pt.kind << ',' << fmt::format("{:.6f}", pt.share);
    for (std::int64_t r : pt.rows) csv << ',' << r;
    csv << ',' << (pt.predicted ? fmt::format("{:.6e}", *pt.predicted) : "") << ',' << fmt::format("{:.6e}", measured)
        << ',' << fmt::format("{:.6e}", pt.fastest()) << ',' << fmt::format("{:.6e}", pt.slowest()) << ',' << error << ','
        << (pt.disturbed ? "yes" : "no") << ',' << pt.same_bits << ','
        << (pt.uncached ? fmt::format("{:.6e}", *pt.uncached) : "") << '\n';
    const std::string uncached =
        pt.uncached ? fmt::format("; {:.4f} ms ({:.2f}%) with the CPU slab that fits a cache swept at the pace past it",
                                  *pt.uncached * 1e3, error_percent(*pt.uncached, measured))
                    : "";
    fmt::print("{:<5} {} {:6.2f}%: measured {:.4f} ms an iteration ({:.4f}-{:.4f}), predicted {}{}{}{}{}\n", pt.kind,
               names[v], 100.0 * pt.share, measured * 1e3, pt.fastest() * 1e3, pt.slowest() * 1e3, predicted_ms,
               error.empty() ? "" : " (" + error + "%)", uncached, pt.disturbed ? "; host disturbed in every run" : "",
               pt.same_bits.empty() ? "" : "; same bits as the reference: " + pt.same_bits);
    nlohmann::json rows = nlohmann::json::object();
    for (std::size_t k = 0; k < names.size(); ++k) rows[names[k]] = pt.rows[k];
    json_points.push_back({{"point", pt.kind},
                           {"share", pt.share},
                           {"rows", rows},
                           {"predicted_iteration_s", pt.predicted ? nlohmann::json(*pt.predicted) : nlohmann::json()},
                           {"uncached_iteration_s", pt.uncached ? nlohmann::json(*pt.uncached) : nlohmann::json()},
                           {"measured_iteration_s", measured},
                           {"measured_min_s", pt.fastest()},
                           {"measured_max_s", pt.slowest()},
                           {"samples_s", pt.samples},
                           {"error_percent", pt.predicted ? nlohmann::json(error_percent(*pt.predicted, measured))
                                                          : nlohmann::json()},
                           {"canary_bytes_per_s", pt.canaries},
                           {"other_cores", pt.others},
                           {"stolen_cores", pt.stolen},
                           {"quiet", pt.quiet},
                           {"disturbed", pt.disturbed},
                           {"same_bits", pt.same_bits.empty() ? nlohmann::json() : nlohmann::json(pt.same_bits == "yes")}});
  }
  if (!o.csv.empty() && !csv) HETSTENCIL_THROW(Error, "writing " + o.csv + " failed");
  csv.close();

  const auto best = std::min_element(points.begin(), points.end(),
                                     [](const Point& a, const Point& b) { return a.measured() < b.measured(); });
  fmt::print("measured best: {} {:.2f}% at {:.4f} ms an iteration\n", names[v], 100.0 * best->share,
             best->measured() * 1e3);
  double worst = 0.0, worst_quiet = 0.0, worst_nearer = 0.0;
  std::ptrdiff_t cached = 0;
  for (const Point& pt : points) {
    if (!pt.predicted) continue;
    const double error = std::abs(error_percent(*pt.predicted, pt.measured()));
    worst = std::max(worst, error);
    if (!pt.disturbed) worst_quiet = std::max(worst_quiet, error);
    worst_nearer = std::max(worst_nearer, nearer_error_percent(pt));
    if (pt.uncached) ++cached;
  }
  const auto quiet_points = std::count_if(points.begin(), points.end(), [](const Point& pt) { return !pt.disturbed; });
  if (modelled) {
    fmt::print("worst point error: {:.1f}% ({:.1f}% over the {} of {} points measured quietly)\n", worst, worst_quiet,
               quiet_points, points.size());
  }
  if (cached > 0) {
    fmt::print("{} of {} points give a CPU device rows that its curve sweeps in a cache, faster a row than more rows: a "
               "cache shared with other programs or guests (a virtual machine's L3) may leave a run either pace; "
               "against the nearer of the two, the worst point error is {:.1f}%\n",
               cached, points.size(), worst_nearer);
  }
  if (model_rows) {
    const Point& m = points.back();
    fmt::print("model's split: {} {:.2f}% at {:.4f} ms measured ({:.4f} ms predicted, {:+.1f}%); "
               "model / best = {:.3f}\n",
               names[v], 100.0 * m.share, m.measured() * 1e3, *m.predicted * 1e3,
               error_percent(*m.predicted, m.measured()), m.measured() / best->measured());
  }
  const double canary = Point::median_of(canaries);
  const std::optional<MachineProfile> stored =
      runtime.profile_path().empty() ? std::nullopt : MachineProfile::load(runtime.profile_path());
  const double calibrated = stored ? stored->canary_bytes_per_s() : 0.0;
  if (calibrated > 0.0 && (canary > kCalibratedApart * calibrated || canary * kCalibratedApart < calibrated)) {
    fmt::print("the host's canary ran at {:.1f} GB/s in this sweep and at {:.1f} GB/s as the profile was calibrated: "
               "the host was {} then, and every prediction carries it (hetstencil calibrate measures it as it is now)\n",
               canary / 1e9, calibrated / 1e9, canary > calibrated ? "slower" : "faster");
  }
  const auto disturbed = static_cast<std::ptrdiff_t>(points.size()) - quiet_points;
  if (disturbed > 0) {
    fmt::print("{} of {} points measured only while the host was disturbed (a memory-bandwidth canary under {:.0f}% "
               "of its median, other processes using more than {:.1f} cores and more than was idle, or the hypervisor "
               "taking more than {:.1f} cores' worth): their errors are the host's as much as the model's\n",
               disturbed, points.size(), 100.0 * kDisturbedBelow, HostLoad::kCrowdingCores, HostLoad::kCrowdingCores);
  }
  if (!o.json.empty()) {
    nlohmann::json j;
    j["schema"] = "hetstencil-sweep";
    j["schema_version"] = 1;
    j["hetstencil_version"] = HETSTENCIL_VERSION_STRING;
    j["nx"] = p.nx;
    j["ny"] = p.ny;
    j["precision"] = to_string(p.precision);
    j["iterations"] = p.stop.max_iterations;
    j["varied"] = names[v];
    j["repeats"] = o.repeats;
    j["order"] = order;
    j["canary_median_bytes_per_s"] = canary;
    j["calibration_canary_bytes_per_s"] = calibrated > 0.0 ? nlohmann::json(calibrated) : nlohmann::json();
    j["points"] = json_points;
    j["worst_error_percent"] = modelled ? nlohmann::json(worst) : nlohmann::json();
    j["worst_quiet_error_percent"] = modelled && quiet_points > 0 ? nlohmann::json(worst_quiet) : nlohmann::json();
    j["worst_nearer_error_percent"] = modelled ? nlohmann::json(worst_nearer) : nlohmann::json();
    j["best_share"] = best->share;
    std::ofstream out(o.json);
    out << j.dump(2) << '\n';
    if (!out) HETSTENCIL_THROW(Error, "writing " + o.json + " failed");
    fmt::print("json written to {}\n", o.json);
  }
  const bool all_same = std::all_of(points.begin(), points.end(), [](const Point& pt) { return pt.same_bits == "yes"; });
  if (o.verify) fmt::print("every split bitwise equal to the reference: {}\n", all_same ? "yes" : "NO");
  if (!o.csv.empty()) fmt::print("csv written to {}\n", o.csv);
  if (!o.plot.empty()) {
    draw_plot("plot_sweep.py", o.csv, o.plot,
              fmt::format("{} x {} {}, {} iterations: the share of {}", p.nx, p.ny, to_string(p.precision),
                          p.stop.max_iterations, names[v]));
    fmt::print("plot written to {}\n", o.plot);
  }
  if (o.verify && !all_same) return kExitFailure;
  return runtime.profile_not_saved().empty() ? kExitSuccess : kExitProfileNotSaved;  // warned when the calibration was
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* sub = app.add_subcommand("sweep", "Run a range of splits, measured beside predicted (the study's figures 14-16)");
  add_problem_options(sub, o->problem);
  add_machine_options(sub, o->machine);
  sub->add_option("--vary", o->vary, "the device whose share is swept (default: the first CPU device beside GPUs, "
                                     "else the first device)")
      ->check(naming("a device, e.g. cpu0"));
  sub->add_option("--from", o->from, "its smallest share (default: the model's share - 0.1, at least 0)")
      ->transform(number_in(0.0, 1.0));
  sub->add_option("--to", o->to, "its largest share (default: the model's share + 0.1, at most 1)")
      ->transform(number_in(0.0, 1.0));
  sub->add_option("--step", o->step, "between shares")->transform(number_in(0.0, 1.0, true))->capture_default_str();
  sub->add_option("--repeats", o->repeats, "rounds over the splits (each in the same shuffled order, a "
                                                   "memory-bandwidth canary before each run); per split the median counts")
      ->transform(integer_in(1, std::numeric_limits<int>::max()))->capture_default_str();
  sub->add_option("--csv", o->csv, "write the splits and their times as CSV to FILE (default: none)")
      ->check(naming("a file"));
  sub->add_option("--json", o->json, "write the splits, every run's time and canary as JSON to FILE (default: none)")
      ->check(naming("a file"));
  sub->add_option("--plot", o->plot, "draw them as a PNG into FILE, from the --csv file (default: none)")
      ->check(naming("a file"));
  sub->add_flag("--verify", o->verify, "compare every split's result with the sequential reference, bit for bit");
  sub->add_flag("!--no-calibrate", o->calibrate, "without a model of this machine, sweep without predictions");
  sub->add_option("--budget", o->budget, "seconds a first calibration may take")->transform(positive_number())
      ->capture_default_str();
  sub->footer("The other devices share the rest of the rows as the model's split shares it between them (evenly\n"
              "without a model); the model's own split is run too and marked. The plot needs python3-matplotlib.");
  return [o] { return run_sweep(*o); };
}

}  // namespace hetstencil::cli
