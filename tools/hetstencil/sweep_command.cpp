// hetstencil sweep: the original study's experiment (its figures 14-16). One
// device's share of the rows is swept over a range, the other devices sharing
// the rest; every split is run and measured beside the model's prediction, and
// the model's own split is marked against the best one measured.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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
  int repeat = 1;
  std::string csv;   // "": no CSV
  std::string plot;  // "": no plot
  bool verify = false;
  bool calibrate = true;
  double budget = 10.0;
};

struct Point {
  std::string kind;  // "sweep" or "model"
  std::vector<std::int64_t> rows;  // per device, in device order
  double share = 0.0;              // of the varied device
  std::optional<double> predicted;  // seconds an iteration
  double measured = 0.0;
  std::string same_bits;  // "yes", "no", or "" when not verified

  Point(std::string k, std::vector<std::int64_t> r) : kind(std::move(k)), rows(std::move(r)) {}
};

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
  std::ofstream csv;  // without --csv it stays closed: it takes the rows and writes nothing
  if (!o.csv.empty()) csv.open(o.csv);
  csv << "point,share";
  for (const auto& n : names) csv << ',' << n << "_rows";
  csv << ",predicted_iteration_s,measured_iteration_s,error_percent,same_bits\n";
  fmt::print("sweeping the share of {} over {} splits of {} x {} {}, {} iterations{}\n", names[v], points.size(), p.nx,
             p.ny, to_string(p.precision), p.stop.max_iterations, modelled ? "" : " (no model: nothing predicted)");
  for (std::size_t k = 0; k < points.size(); ++k) {
    Point& pt = points[k];
    pt.share = static_cast<double>(pt.rows[v]) / static_cast<double>(p.ny);
    Plan plan = plan_of(names, pt.rows, devices);
    plan.variant = variant;
    plan.prediction = runtime.predict(p, plan);
    std::vector<double> measured;
    for (int r = 0; r < o.repeat; ++r) {
      const Result result = runtime.solve(p, plan);
      measured.push_back(iteration_s(result.report));
      pt.predicted = predicted_iteration_s(result.report);
      if (reference && r == 0) {
        const bool same = same_bits(result.solution, *reference);
        pt.same_bits = same ? "yes" : "no";
      }
    }
    std::sort(measured.begin(), measured.end());
    pt.measured = measured[measured.size() / 2];
    const std::string predicted_ms = pt.predicted ? fmt::format("{:.6f}", *pt.predicted * 1e3) : "";
    const std::string error = pt.predicted ? fmt::format("{:.2f}", error_percent(*pt.predicted, pt.measured)) : "";
    csv << pt.kind << ',' << fmt::format("{:.6f}", pt.share);
    for (std::int64_t r : pt.rows) csv << ',' << r;
    csv << ',' << (pt.predicted ? fmt::format("{:.6e}", *pt.predicted) : "") << ',' << fmt::format("{:.6e}", pt.measured)
        << ',' << error << ',' << pt.same_bits << '\n';
    csv.flush();  // an interrupted sweep keeps what it measured
    fmt::print("{:>3}/{} {:<5} {} {:6.2f}%: measured {:.4f} ms an iteration, predicted {} {}\n", k + 1, points.size(),
               pt.kind, names[v], 100.0 * pt.share, pt.measured * 1e3, predicted_ms.empty() ? "-" : predicted_ms + " ms",
               pt.same_bits.empty() ? "" : "(same bits as the reference: " + pt.same_bits + ")");
  }
  if (!o.csv.empty() && !csv) HETSTENCIL_THROW(Error, "writing " + o.csv + " failed");
  csv.close();

  const auto best = std::min_element(points.begin(), points.end(),
                                     [](const Point& a, const Point& b) { return a.measured < b.measured; });
  fmt::print("measured best: {} {:.2f}% at {:.4f} ms an iteration\n", names[v], 100.0 * best->share, best->measured * 1e3);
  if (model_rows) {
    const Point& m = points.back();
    fmt::print("model's split: {} {:.2f}% at {:.4f} ms measured ({:.4f} ms predicted, {:+.1f}%); "
               "model / best = {:.3f}\n",
               names[v], 100.0 * m.share, m.measured * 1e3, *m.predicted * 1e3, error_percent(*m.predicted, m.measured),
               m.measured / best->measured);
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
  sub->add_option("--repeat", o->repeat, "runs per split; the median counts")
      ->transform(integer_in(1, std::numeric_limits<int>::max()))->capture_default_str();
  sub->add_option("--csv", o->csv, "write the splits and their times as CSV to FILE (default: none)")
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
