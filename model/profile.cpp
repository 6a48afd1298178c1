#include "model/profile.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

#include <spdlog/fmt/fmt.h>
#include <spdlog/fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "core/log.hpp"
#include "core/schema.hpp"
#include "devices/backend.hpp"
#include "hetstencil/error.hpp"
#include "core/atomic_file.hpp"

namespace hetstencil {
namespace {

using nlohmann::json;

// Profiles before the schema key said "format": format 2 holds what schema
// version 3 holds (devices keyed by device_key, named); format 1 keyed devices by
// name. Both are read as they are.
constexpr const char* kFormat2 = "hetstencil-profile-2";
constexpr const char* kFormat1 = "hetstencil-profile-1";

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown-host";
  return name;
}

json curve_json(const TransferCurve& c) { return {{"latency_s", c.latency_s}, {"bytes_per_s", c.bytes_per_s}}; }

TransferCurve curve_from(const json& j) {
  TransferCurve c;
  c.latency_s = j.at("latency_s").get<double>();
  c.bytes_per_s = j.at("bytes_per_s").get<double>();
  if (!(c.latency_s >= 0.0) || !(c.bytes_per_s >= 0.0)) {
    HETSTENCIL_THROW(InvalidArgument, "malformed profile: a transfer curve has negative figures");
  }
  return c;
}

json curves_json(const std::map<std::string, RateCurve>& curves) {
  json out = json::object();
  for (const auto& [key, curve] : curves) {
    json points = json::array();
    for (const auto& pt : curve.points()) points.push_back({pt.rows, pt.seconds});
    out[key] = points;
  }
  return out;
}

// Why a stored curve cannot be used ("" when it can): a curve needs points
// [rows, seconds] in increasing rows, rows >= 1 and finite seconds >= 0.
std::string unusable_points(const json& points) {
  if (!points.is_array() || points.empty()) return "has no points";
  std::int64_t last = 0;
  for (const auto& pt : points) {
    if (!pt.is_array() || pt.size() != 2 || !pt[0].is_number_integer() || !pt[1].is_number()) {
      return "has a point that is not [rows, seconds]";
    }
    const auto rows = pt[0].get<std::int64_t>();
    const auto seconds = pt[1].get<double>();
    if (rows < 1 || !std::isfinite(seconds) || seconds < 0.0) return "has a point with rows < 1 or a time not finite and >= 0";
    if (rows <= last) return "has points not in increasing rows";
    last = rows;
  }
  return "";
}

std::map<std::string, RateCurve> curves_from(const json& j, const std::string& source, const std::string& device,
                                             const char* what) {
  std::map<std::string, RateCurve> out;
  for (const auto& [key, points] : j.items()) {
    if (const std::string why = unusable_points(points); !why.empty()) {
      log::warn("{}: {}'s {} curve {} {}; left out ({} is not calibrated for it)", source, device, what, key, why,
                   device);
      continue;
    }
    std::vector<RateCurve::Point> pts;
    for (const auto& pt : points) pts.push_back({pt[0].get<std::int64_t>(), pt[1].get<double>()});
    out[key] = RateCurve(pts);
  }
  return out;
}

void make_directories(const std::string& dir) {
  for (std::size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    const std::string part = dir.substr(0, slash);
    if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
      HETSTENCIL_THROW(SystemError, "cannot create '" + part + "': " + std::strerror(errno));
    }
    if (slash == std::string::npos) return;
  }
}

}  // namespace

bool Fingerprint::operator==(const Fingerprint& o) const { return difference(o).empty(); }

std::string Fingerprint::difference(const Fingerprint& o) const {
  if (host != o.host) return "host " + host + " vs " + o.host;
  if (cpu_model != o.cpu_model) return "CPU '" + cpu_model + "' vs '" + o.cpu_model + "'";
  if (sockets != o.sockets || cores != o.cores) {
    return std::to_string(sockets) + " sockets / " + std::to_string(cores) + " cores vs " + std::to_string(o.sockets) +
           " / " + std::to_string(o.cores);
  }
  if (gpus != o.gpus) return "other GPUs";
  if (driver_version != o.driver_version) {
    return "CUDA driver " + std::to_string(driver_version) + " vs " + std::to_string(o.driver_version);
  }
  if (kernels != o.kernels) return "kernels " + kernels + " vs " + o.kernels;
  return "";
}

Fingerprint fingerprint_of(const Topology& t) {
  Fingerprint f;
  f.host = host_name();
  f.cpu_model = t.packages.empty() ? "" : t.packages.front().cpu_model;
  f.sockets = static_cast<int>(t.packages.size());
  f.cores = static_cast<int>(t.cores.size()) + t.unbound_cores;  // the machine's, whatever this process is bound to
  for (const auto& g : t.gpus) f.gpus.push_back(g.name + " " + g.uuid);
  f.driver_version = t.this_machine ? driver_version() : 0;
  return f;
}

namespace {
std::string variant_suffix(const VariantChoice& variant) {
  return variant.variant == Variant::Sync ? "" : "/" + to_string(variant.variant) + "-" + std::to_string(variant.param);
}
}  // namespace

std::string device_key(const DeviceInfo& device) { return device.key.empty() ? device.name : device.key; }

Profile named_for(const Profile& stored, const std::vector<DeviceInfo>& devices) {
  Profile out;
  out.fingerprint = stored.fingerprint;
  out.link_conditions = stored.link_conditions;
  out.canary_bytes_per_s = stored.canary_bytes_per_s;
  for (const DeviceInfo& d : devices) {
    const auto it = stored.devices.find(device_key(d));
    if (it == stored.devices.end()) continue;
    out.devices[d.name] = it->second;
    out.devices[d.name].name = d.name;
  }
  for (const DeviceInfo& from : devices) {
    for (const DeviceInfo& to : devices) {
      const auto it = stored.links.find(link_key(device_key(from), device_key(to)));
      if (it != stored.links.end()) out.links[link_key(from.name, to.name)] = it->second;
    }
  }
  return out;
}

Profile named_as_measured(const Profile& stored, const std::vector<DeviceInfo>& preferred) {
  Profile out = named_for(stored, preferred);
  std::map<std::string, std::string> name_of;  // by key
  for (const DeviceInfo& d : preferred) {
    if (out.devices.count(d.name)) name_of[device_key(d)] = d.name;
  }
  for (const auto& [key, d] : stored.devices) {
    const std::string name = d.name.empty() ? key : d.name;
    if (name_of.count(key) || !out.devices.emplace(name, d).second) continue;
    out.devices[name].name = name;
    name_of[key] = name;
  }
  const auto named = [&](const std::string& key) {
    const auto it = name_of.find(key);
    return it == name_of.end() ? key : it->second;
  };
  for (const auto& [key, c] : stored.links) {
    const auto arrow = key.find("->");
    if (arrow == std::string::npos) continue;
    out.links.emplace(link_key(named(key.substr(0, arrow)), named(key.substr(arrow + 2))), c);
  }
  return out;
}

void store_named(Profile& stored, const Profile& named, const std::vector<DeviceInfo>& devices) {
  for (const DeviceInfo& d : devices) {
    const auto it = named.devices.find(d.name);
    if (it != named.devices.end()) stored.devices[device_key(d)] = it->second;
  }
}

namespace {

// Whether the figure under `rate` (rate_key, stencil_rate_key) is of the
// stencil and precision that `tuning` (tuning_key) names: a prefix of keys,
// which curve_of(key) cannot read for stencils from files.
bool keyed_under(const std::string& rate, const std::string& tuning) {
  const std::size_t slash = tuning.find('/');
  const bool poisson5 = tuning.compare(0, slash, "poisson5") == 0;
  const std::string prefix = (poisson5 ? tuning.substr(slash + 1) : tuning) + "/";
  return rate.compare(0, prefix.size(), prefix) == 0;
}

// Drops from `stored` the figures of `tuning`'s stencil and precision that
// `measured` does not bring: they were measured with other kernel parameters.
void drop_figures_of(DeviceProfile& stored, const DeviceProfile& measured, const std::string& tuning) {
  const auto drop = [&](auto& into, const auto& brought) {
    for (auto it = into.begin(); it != into.end();) {
      it = keyed_under(it->first, tuning) && !brought.count(it->first) ? into.erase(it) : std::next(it);
    }
  };
  drop(stored.rates, measured.rates);
  drop(stored.checks, measured.checks);
  drop(stored.rest, measured.rest);
  drop(stored.rest_rows, measured.rest_rows);
  drop(stored.step, measured.step);
  drop(stored.overhead, measured.overhead);
  drop(stored.fixed, measured.fixed);
}

}  // namespace

void merge_into(Profile& stored, const Profile& measured) {
  for (const auto& [key, m] : measured.devices) {
    DeviceProfile& d = stored.devices[key];
    if (!m.name.empty()) d.name = m.name;
    if (!m.kind.empty()) d.kind = m.kind;
    for (const auto& [k, c] : m.rates) {
      d.rates[k] = c;
      // A rest curve belongs with the rates measured beside it.
      if (!m.rest.count(k)) {
        d.rest.erase(k);
        d.rest_rows.erase(k);
      }
    }
    for (const auto& [k, c] : m.checks) d.checks[k] = c;
    for (const auto& [k, c] : m.rest) d.rest[k] = c;
    for (const auto& [k, r] : m.rest_rows) d.rest_rows[k] = r;
    for (const auto& [k, s] : m.step) d.step[k] = s;
    for (const auto& [k, s] : m.overhead) d.overhead[k] = s;
    for (const auto& [k, s] : m.fixed) d.fixed[k] = s;
    if (!m.setup_in.empty()) d.setup_in = m.setup_in;
    if (!m.setup_out.empty()) d.setup_out = m.setup_out;
    if (m.slowdown_beside_gpus != 1.0) d.slowdown_beside_gpus = m.slowdown_beside_gpus;
    for (const auto& [k, t] : m.tuned) {
      const auto was = d.tuned.find(k);
      if ((was == d.tuned.end() ? Tuning{} : was->second.values) != t.values) drop_figures_of(d, m, k);
      d.tuned[k] = t;
    }
  }
  for (const auto& [key, c] : measured.links) stored.links[key] = c;
  if (!measured.link_conditions.empty()) stored.link_conditions = measured.link_conditions;
  if (measured.canary_bytes_per_s > 0.0) stored.canary_bytes_per_s = measured.canary_bytes_per_s;
  stored.fingerprint = measured.fingerprint;
}

std::string rate_key(Precision precision, std::int64_t nx, const VariantChoice& variant) {
  return to_string(precision) + "/" + std::to_string(nx) + variant_suffix(variant);
}
std::string link_key(const std::string& from, const std::string& to) { return from + "->" + to; }

namespace {

// The curve for this precision, width and variant, or the nearest measured
// width's (same precision and variant) scaled by nx / its nx.
std::optional<RateCurve> nearest_curve(const std::map<std::string, RateCurve>& curves, Precision precision,
                                       std::int64_t nx, const VariantChoice& variant) {
  const auto exact = curves.find(rate_key(precision, nx, variant));
  if (exact != curves.end()) return exact->second;
  // The nearest width (by ratio) of the same precision, its times scaled by nx.
  const std::string prefix = to_string(precision) + "/";
  const std::string suffix = variant_suffix(variant);
  std::optional<RateCurve> best;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const auto& [key, curve] : curves) {
    if (key.rfind(prefix, 0) != 0) continue;
    const std::size_t width_end = std::min(key.find('/', prefix.size()), key.size());
    if (key.substr(width_end) != suffix) continue;
    const double measured_nx = std::stod(key.substr(prefix.size(), width_end - prefix.size()));
    const double distance = std::fabs(std::log(measured_nx / static_cast<double>(nx)));
    if (distance < best_distance) {
      best_distance = distance;
      best = curve.scaled(static_cast<double>(nx) / measured_nx);
    }
  }
  return best;
}

}  // namespace

std::string stencil_tag(const Stencil& stencil) {
  if (is_poisson5(stencil)) return "";
  for (const std::string& name : builtin_stencil_names()) {
    Stencil builtin = Stencil::builtin(name);
    builtin.name = stencil.name;
    if (builtin == stencil) return name;
  }
  Stencil unnamed = stencil;
  unnamed.name.clear();
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a, 64 bits
  for (const unsigned char c : stencil_json(unnamed)) hash = (hash ^ c) * 1099511628211ull;
  // A variable stencil reads its coefficient grids too: curves of its own, and a tag that says so.
  return fmt::format("{}:{:016x}", stencil.variable ? "variable" : "file", hash);
}

std::string tuning_key(const Stencil& stencil, Precision precision) {
  const std::string tag = stencil_tag(stencil);
  return (tag.empty() ? "poisson5" : tag) + "/" + to_string(precision);
}

std::string grid_text(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  return nz > 0 ? fmt::format("{}x{}x{}", nx, ny, nz) : fmt::format("{}x{}", nx, ny);
}

std::int64_t unit_cells(const Problem& problem) {
  return problem.dimension() == 3 ? problem.nx * problem.ny : problem.nx;
}

std::string stencil_rate_key(const Problem& problem) {
  const std::string tag = stencil_tag(problem.stencil);
  if (tag.empty()) return rate_key(problem.precision, problem.nx);
  const std::string width = problem.dimension() == 3 ? fmt::format("{}x{}", problem.nx, problem.ny)
                                                     : std::to_string(problem.nx);
  return tag + "/" + to_string(problem.precision) + "/" + width;
}

double cell_grids(const Stencil& stencil) {
  // u read and u' written; a variable stencil also reads a coefficient grid a term and the centre's.
  return stencil.variable ? 3.0 + static_cast<double>(stencil.points.size()) : 2.0;
}

double cell_cost(const Stencil& stencil) {
  const double points = static_cast<double>(stencil.points.size());
  // A variable stencil also loads each term's coefficient and the centre's.
  return kCellFixedPoints + (stencil.variable ? 1.0 + 2.0 * points : points);
}

namespace {

// A plain (sync) curve key's parts: its stencil (poisson5 for an untagged key),
// precision and the cells of a unit; nothing for a variant's key or a
// description's (its stencil cannot be rebuilt from the hash).
struct CurveOf {
  Stencil stencil;
  std::string precision;
  std::int64_t cells = 0;
};

std::optional<CurveOf> curve_of(const std::string& key) {
  std::vector<std::string> parts;
  for (std::size_t begin = 0;;) {
    const std::size_t slash = key.find('/', begin);
    parts.push_back(key.substr(begin, slash - begin));
    if (slash == std::string::npos) break;
    begin = slash + 1;
  }
  if (parts.size() == 2) parts.insert(parts.begin(), "poisson5");
  if (parts.size() != 3 || parts[0].rfind("file:", 0) == 0) return std::nullopt;
  const auto names = builtin_stencil_names();
  if (std::find(names.begin(), names.end(), parts[0]) == names.end()) return std::nullopt;
  CurveOf out{Stencil::builtin(parts[0]), parts[1], 1};
  for (std::size_t begin = 0;;) {
    const std::size_t x = parts[2].find('x', begin);
    const std::string side = parts[2].substr(begin, x - begin);
    if (side.empty() || side.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    out.cells *= std::stoll(side);
    if (out.cells == 0) return std::nullopt;  // no unit of cells to read a time per cell at
    if (x == std::string::npos) break;
    begin = x + 1;
  }
  return out;
}

// How far a measured stencil is from the one estimated: another kernel first
// (poisson5's tuned kernels sweep a cell 3-7 times faster per point than the
// kernel every other stencil runs: docs/model.md), then another dimension,
// then the difference in points, then in the cells of a unit.
std::tuple<int, int, std::size_t, double> distance(const CurveOf& measured, const Stencil& stencil,
                                                   std::int64_t cells) {
  const std::size_t points = stencil.points.size(), theirs = measured.stencil.points.size();
  return {is_poisson5(measured.stencil) == is_poisson5(stencil) ? 0 : 1,
          measured.stencil.dimension == stencil.dimension ? 0 : 1, points > theirs ? points - theirs : theirs - points,
          std::fabs(std::log(static_cast<double>(measured.cells) / static_cast<double>(cells)))};
}

// `measured`, of rows `wider` times narrower than the rows it is read for:
// each row count's time is the time `measured` gives for as many cells.
RateCurve at_as_many_cells(const RateCurve& measured, double wider) {
  std::vector<RateCurve::Point> points;
  for (const RateCurve::Point& p : measured.points()) {
    const auto rows = std::max<std::int64_t>(1, std::llround(static_cast<double>(p.rows) / wider));
    if (!points.empty() && points.back().rows == rows) continue;
    // The point's own pace: a row count rounded past a cache's edge would read the pace beyond it.
    points.push_back({rows, p.seconds * static_cast<double>(rows) * wider / static_cast<double>(p.rows)});
  }
  return RateCurve(std::move(points));
}

// A CPU device's time per cell over the stencils measured at one precision,
// as a line in their count of points, t = a + b points: each read at `cells`
// cells, a least-squares fit over the stencils (on a 2-core EPYC VM, double,
// 256^3: poisson7 0.8, star2_3d 1.1, box27 and star4 1.6-2.0 ns a cell; 1 +
// points would price box27 at 3.9 times poisson7). Each stencil counts once,
// its mean over the widths it was measured at. Over those of `dimension`
// (0: any) that run the generic kernel, and poisson5 too where `with_poisson5`
// (its CPU kernel sweeps a cell at the generic kernel's pace: 0.58 ns against
// box9's 0.66-0.73 on that VM). None where fewer than two counts of points were
// measured, or where the line does not rise from a time of zero or more at no
// points.
struct PointsLine {
  double a = 0.0, b = 0.0;
  std::vector<std::string> through;  // the stencils it was fitted to
  double at(std::size_t points) const { return a + b * static_cast<double>(points); }
};

std::optional<PointsLine> points_line(const DeviceProfile& device, const std::string& precision, int dimension,
                                      bool with_poisson5, double cells) {
  std::map<std::string, std::pair<double, std::vector<double>>> of_stencil;  // name: points, seconds a cell
  for (const auto& [key, curve] : device.rates) {
    const auto of = curve_of(key);
    if (!of || of->precision != precision || (is_poisson5(of->stencil) && !with_poisson5) || of->stencil.variable ||
        (dimension != 0 && of->stencil.dimension != dimension)) {
      continue;
    }
    const auto rows = std::max<std::int64_t>(1, std::llround(cells / static_cast<double>(of->cells)));
    const double at = static_cast<double>(rows) * static_cast<double>(of->cells);
    auto& [points, seconds] = of_stencil[of->stencil.name];
    points = static_cast<double>(of->stencil.points.size());
    seconds.push_back(curve.seconds(rows) / at);
  }
  PointsLine line;
  std::vector<std::pair<double, double>> samples;  // points, seconds a cell
  for (const auto& [name, figures] : of_stencil) {
    const auto& [points, seconds] = figures;
    const double mean = std::accumulate(seconds.begin(), seconds.end(), 0.0) / static_cast<double>(seconds.size());
    samples.emplace_back(points, mean);
    line.through.push_back(name);
  }
  if (samples.size() < 2) return std::nullopt;
  double mean_p = 0.0, mean_t = 0.0;
  for (const auto& [points, t] : samples) {
    mean_p += points;
    mean_t += t;
  }
  mean_p /= static_cast<double>(samples.size());
  mean_t /= static_cast<double>(samples.size());
  double covariance = 0.0, variance = 0.0;
  for (const auto& [points, t] : samples) {
    covariance += (points - mean_p) * (t - mean_t);
    variance += (points - mean_p) * (points - mean_p);
  }
  if (variance == 0.0) return std::nullopt;  // one count of points (or none) gives no line
  line.b = covariance / variance;
  line.a = mean_t - line.b * mean_p;
  if (!(line.b > 0.0) || line.a < 0.0) return std::nullopt;
  return line;
}

}  // namespace

StencilModel model_for_stencil(const Profile& named, const Problem& problem) {
  StencilModel out{named, problem, ""};
  if (is_poisson5(problem.stencil)) return out;
  Problem& units = out.units;
  units.stencil = Stencil::builtin("poisson5");
  units.nx = unit_cells(problem);
  units.ny = problem.units();
  units.nz = 0;
  units.source = Source::spike();
  units.boundary = Boundary::constant(0.0);
  const std::string own = stencil_rate_key(problem);
  const std::string as = rate_key(problem.precision, units.nx);
  const std::string precision = to_string(problem.precision);
  // A device's loop besides its sweep (barriers, the exchange's hand-over) and
  // a solve's fixed time are the runtime's, the same whatever the stencil:
  // poisson5's at the nearest width, where the stencil has no figure of its own.
  const auto poisson5_figure = [&](const std::map<std::string, double>& figures) -> std::optional<double> {
    std::optional<std::pair<double, double>> best;  // distance, seconds
    for (const auto& [key, seconds] : figures) {
      const auto of = curve_of(key);
      if (!of || of->precision != precision || !is_poisson5(of->stencil)) continue;
      const double far = std::fabs(std::log(static_cast<double>(of->cells) / static_cast<double>(units.nx)));
      if (!best || far < best->first) best = std::make_pair(far, seconds);
    }
    return best ? std::optional<double>(best->second) : std::nullopt;
  };
  std::vector<std::string> estimates;
  for (auto& [name, d] : out.profile.devices) {
    const DeviceProfile& stored = named.devices.at(name);
    d.rates.clear();
    d.checks.clear();
    d.rest.clear();
    d.rest_rows.clear();
    d.step.clear();
    d.overhead.clear();
    d.fixed.clear();
    if (const auto f = stored.fixed.find(own); f != stored.fixed.end()) {
      d.fixed[as] = f->second;
    } else if (const auto fixed = poisson5_figure(stored.fixed)) {
      d.fixed[as] = *fixed;
    }
    if (const auto rate = stored.rates.find(own); rate != stored.rates.end()) {
      d.rates[as] = rate->second;
      if (const auto c = stored.checks.find(own); c != stored.checks.end()) d.checks[as] = c->second;
      if (const auto r = stored.rest.find(own); r != stored.rest.end() && stored.rest_rows.count(own)) {
        d.rest[as] = r->second;
        d.rest_rows[as] = stored.rest_rows.at(own);
      }
      if (const auto o = stored.overhead.find(own); o != stored.overhead.end()) d.overhead[as] = o->second;
      if (const auto s = stored.step.find(own); s != stored.step.end()) {
        d.step[as] = s->second;
      } else if (const auto step = poisson5_figure(stored.step)) {
        d.step[as] = *step;
      }
      continue;
    }
    // The nearest measured stencil's time per cell. A CPU's scaled by cell
    // cost; a GPU's by the grids a cell reads and writes (its generic kernel
    // keeps the memory busy, not the cores), and never from poisson5, whose
    // tuned kernel is no guide to the generic one.
    const bool gpu = kind_of(stored) != DeviceKind::Cpu;
    std::optional<std::pair<std::string, CurveOf>> best;
    for (const auto& [key, curve] : stored.rates) {
      const auto of = curve_of(key);
      if (!of || of->precision != precision || (gpu && is_poisson5(of->stencil))) continue;
      if (!best || distance(*of, problem.stencil, units.nx) < distance(best->second, problem.stencil, units.nx)) {
        best = std::make_pair(key, *of);
      }
    }
    if (!best) continue;
    const CurveOf& from = best->second;
    const double wider = static_cast<double>(units.nx) / static_cast<double>(from.cells);
    // Read at as many cells: a GPU's curve at few cells is its launch time, a
    // CPU's is its caches' (read at as many rows, a 3-D problem's 256 planes
    // of 256^2 would be priced as 256 rows of 4096: a slab the L3 holds).
    // A CPU's scaled by the line through the time per cell of the stencils it
    // measured (those of its dimension, else of any), where two counts of
    // points give one, else by cell cost; a GPU's by the grids a cell reads (a
    // line there priced star4's 24 points below box27's 26, which it sweeps
    // slower: docs/model.md).
    const double cells = static_cast<double>(units.nx) * static_cast<double>(units.ny);
    std::optional<PointsLine> line;
    if (!gpu && !problem.stencil.variable && from.stencil != problem.stencil) {
      line = points_line(stored, precision, problem.stencil.dimension, false, cells);
      if (!line) line = points_line(stored, precision, 0, true, cells);
    }
    const double scale = line  ? line->at(problem.stencil.points.size()) / line->at(from.stencil.points.size())
                         : gpu ? cell_grids(problem.stencil) / cell_grids(from.stencil)
                               : cell_cost(problem.stencil) / cell_cost(from.stencil);
    const auto estimate = [&](const RateCurve& measured) { return at_as_many_cells(measured, wider).scaled(scale); };
    d.rates[as] = estimate(stored.rates.at(best->first));
    if (const auto c = stored.checks.find(best->first); c != stored.checks.end()) d.checks[as] = estimate(c->second);
    if (const auto step = poisson5_figure(stored.step)) d.step[as] = *step;
    if (gpu) {
      if (const auto o = stored.overhead.find(best->first); o != stored.overhead.end()) d.overhead[as] = o->second;
    }
    if (from.stencil == problem.stencil) {
      estimates.push_back(fmt::format("{}'s from its own {}, at as many cells", name, best->first));
      continue;
    }
    const std::string by = line  ? fmt::format("the time per cell of {} in their points", fmt::join(line->through, ", "))
                           : gpu ? "the grids a cell reads"
                                 : "cell cost";
    estimates.push_back(fmt::format("{}'s from {} {}, scaled by {}", name, from.stencil.name, best->first, by));
  }
  if (!estimates.empty()) {
    const std::string width = problem.dimension() == 3 ? fmt::format("planes of {}x{}", problem.nx, problem.ny)
                                                       : fmt::format("rows of {}", problem.nx);
    out.estimated = fmt::format("{} not measured on {}: estimated by time per cell ({})", problem.stencil.name, width,
                                fmt::join(estimates, ", "));
  }
  return out;
}

VariantChoice swept_by(DeviceKind kind, const VariantChoice& variant) {
  return kind == DeviceKind::Cpu ? VariantChoice{} : variant;
}

DeviceKind kind_of(const DeviceProfile& d) { return d.kind == "cpu" ? DeviceKind::Cpu : DeviceKind::Gpu; }

std::optional<RateCurve> Profile::rate(const std::string& device, Precision precision, std::int64_t nx,
                                       const VariantChoice& variant) const {
  const auto d = devices.find(device);
  return d == devices.end() ? std::nullopt
                            : nearest_curve(d->second.rates, precision, nx, swept_by(kind_of(d->second), variant));
}

std::optional<std::pair<RateCurve, std::int64_t>> Profile::rest(const std::string& device, Precision precision,
                                                                std::int64_t nx) const {
  const auto d = devices.find(device);
  if (d == devices.end()) return std::nullopt;
  const std::string key = rate_key(precision, nx);
  const auto curve = d->second.rest.find(key);
  const auto rows = d->second.rest_rows.find(key);
  if (curve == d->second.rest.end() || rows == d->second.rest_rows.end()) return std::nullopt;
  return std::make_pair(curve->second, rows->second);
}

std::optional<RateCurve> Profile::check(const std::string& device, Precision precision, std::int64_t nx,
                                        const VariantChoice& variant) const {
  const auto d = devices.find(device);
  return d == devices.end() ? std::nullopt
                            : nearest_curve(d->second.checks, precision, nx, swept_by(kind_of(d->second), variant));
}

std::string to_json(const Profile& p, int indent) {
  json devices = json::object();
  for (const auto& [name, d] : p.devices) {
    json device = {{"name", d.name},
                   {"kind", d.kind},
                   {"rates", curves_json(d.rates)},
                   {"checks", curves_json(d.checks)},
                   {"step", d.step}};
    if (!d.overhead.empty()) device["overhead"] = d.overhead;
    if (!d.fixed.empty()) device["fixed"] = d.fixed;
    if (!d.rest.empty()) {
      device["rest"] = curves_json(d.rest);
      device["rest_rows"] = d.rest_rows;
    }
    if (!d.setup_in.empty()) device["setup_in"] = curve_json(d.setup_in);
    if (!d.setup_out.empty()) device["setup_out"] = curve_json(d.setup_out);
    if (d.slowdown_beside_gpus != 1.0) device["slowdown_beside_gpus"] = d.slowdown_beside_gpus;
    if (!d.tuned.empty()) {
      json tuned = json::object();
      for (const auto& [key, t] : d.tuned) {
        tuned[key] = {{"values", t.values}, {"default_s", t.default_s}, {"tuned_s", t.tuned_s}, {"grid", t.grid}};
      }
      device["tuned"] = tuned;
    }
    devices[name] = device;
  }
  json links = json::object();
  for (const auto& [key, c] : p.links) links[key] = curve_json(c);
  const Fingerprint& f = p.fingerprint;
  const json fingerprint = {{"host", f.host},       {"cpu_model", f.cpu_model},
                            {"sockets", f.sockets}, {"cores", f.cores},
                            {"gpus", f.gpus},       {"driver_version", f.driver_version},
                            {"kernels", f.kernels}};
  json out{{"fingerprint", fingerprint}, {"devices", devices}, {"links", links}, {"link_conditions", p.link_conditions}};
  if (p.canary_bytes_per_s > 0.0) out["canary_bytes_per_s"] = p.canary_bytes_per_s;
  stamp_schema(out, kProfileSchema);
  return out.dump(indent);
}

namespace {

// nlohmann-json's "[json.exception.type_error.302] type must be string, but is
// number": what is wrong without the library's tag.
std::string without_json_prefix(const std::string& what) {
  const auto end = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && end != std::string::npos ? what.substr(end + 2) : what;
}

// Throws, saying what it found and what this build reads, unless `j` is a
// profile of schema version 3 or older, or of format 2 or 1. (The callers name
// the file.)
void refuse_unknown_format(const json& j) {
  const std::string reads = std::string("; this hetstencil reads schema '") + kProfileSchema.name + "' version " +
                            std::to_string(kProfileSchema.version) + " and older, and the formats '" + kFormat2 +
                            "' and '" + kFormat1 + "'";
  if (!j.is_object()) HETSTENCIL_THROW(InvalidArgument, "it is not a JSON object" + reads);
  if (j.contains("schema")) {
    const std::string why = schema_mismatch(j, kProfileSchema);
    if (!why.empty()) HETSTENCIL_THROW(InvalidArgument, why);
    return;
  }
  const auto format = j.find("format");
  if (format == j.end()) HETSTENCIL_THROW(InvalidArgument, "it has neither 'schema' nor 'format'" + reads);
  if (*format != kFormat2 && *format != kFormat1) {
    HETSTENCIL_THROW(InvalidArgument, "its format is " + format->dump().substr(0, 80) + reads);
  }
}

}  // namespace

Profile profile_from_json(const std::string& text, const std::string& source) {
  try {
    const json j = json::parse(text);
    refuse_unknown_format(j);
    Profile p;
    const json& f = j.at("fingerprint");
    p.fingerprint.host = f.at("host").get<std::string>();
    p.fingerprint.cpu_model = f.at("cpu_model").get<std::string>();
    p.fingerprint.sockets = f.at("sockets").get<int>();
    p.fingerprint.cores = f.at("cores").get<int>();
    p.fingerprint.gpus = f.at("gpus").get<std::vector<std::string>>();
    p.fingerprint.driver_version = f.at("driver_version").get<int>();
    p.fingerprint.kernels = f.at("kernels").get<std::string>();
    for (const auto& [key, d] : j.at("devices").items()) {
      DeviceProfile device;
      device.name = d.value("name", key);
      device.kind = d.at("kind").get<std::string>();
      device.rates = curves_from(d.at("rates"), source, device.name, "rate");
      device.checks = curves_from(d.value("checks", json::object()), source, device.name, "check");
      device.rest = curves_from(d.value("rest", json::object()), source, device.name, "rest");
      device.rest_rows = d.value("rest_rows", json::object()).get<std::map<std::string, std::int64_t>>();
      device.step = d.value("step", json::object()).get<std::map<std::string, double>>();
      device.overhead = d.value("overhead", json::object()).get<std::map<std::string, double>>();
      for (const auto& [k, s] : device.overhead) {
        if (!std::isfinite(s)) {
          HETSTENCIL_THROW(InvalidArgument, device.name + ": its overhead " + k + " must be finite");
        }
      }
      device.fixed = d.value("fixed", json::object()).get<std::map<std::string, double>>();
      for (const auto& [k, s] : device.fixed) {
        if (!(std::isfinite(s) && s >= 0.0)) {
          HETSTENCIL_THROW(InvalidArgument, device.name + ": its fixed time " + k + " must be finite and not negative");
        }
      }
      if (d.contains("setup_in")) device.setup_in = curve_from(d.at("setup_in"));
      if (d.contains("setup_out")) device.setup_out = curve_from(d.at("setup_out"));
      device.slowdown_beside_gpus = d.value("slowdown_beside_gpus", 1.0);
      if (!(device.slowdown_beside_gpus >= 1.0)) {
        HETSTENCIL_THROW(InvalidArgument, device.name + ": slowdown_beside_gpus must be at least 1");
      }
      const json tuned_entries = d.value("tuned", json::object());
      for (const auto& [k, t] : tuned_entries.items()) {
        TunedParameters& tuned = device.tuned[k];
        tuned.values = t.at("values").get<std::map<std::string, int>>();
        tuned.default_s = t.at("default_s").get<double>();
        tuned.tuned_s = t.at("tuned_s").get<double>();
        tuned.grid = t.value("grid", "");
        if (!(tuned.default_s > 0.0) || !(tuned.tuned_s > 0.0) || !std::isfinite(tuned.default_s) ||
            !std::isfinite(tuned.tuned_s)) {
          HETSTENCIL_THROW(InvalidArgument, device.name + ": its tuned " + k + " needs finite times > 0");
        }
      }
      p.devices[key] = device;
    }
    for (const auto& [key, c] : j.at("links").items()) p.links[key] = curve_from(c);
    p.link_conditions = j.value("link_conditions", "");
    p.canary_bytes_per_s = j.value("canary_bytes_per_s", 0.0);
    if (!(p.canary_bytes_per_s >= 0.0) || !std::isfinite(p.canary_bytes_per_s)) {
      HETSTENCIL_THROW(InvalidArgument, "canary_bytes_per_s must be a finite number >= 0");
    }
    return p;
  } catch (const json::parse_error& e) {
    HETSTENCIL_THROW(InvalidArgument, "not JSON (at byte " + std::to_string(e.byte) + ")");
  } catch (const json::exception& e) {
    HETSTENCIL_THROW(InvalidArgument, "not a hetstencil profile: " + without_json_prefix(e.what()));
  }
}

std::string default_profile_path(const std::string& host) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::string base = xdg && *xdg ? xdg : std::string(home && *home ? home : "/tmp") + "/.cache";
  return base + "/hetstencil/" + host + ".json";
}

namespace {

// A profile's text, or why there is none.
struct ProfileText {
  bool exists = false;
  std::string text;
  std::string unreadable;  // the system's reason, when it exists but cannot be read
};

ProfileText read_profile_text(const std::string& path) {
  ProfileText out;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    out.exists = errno != ENOENT;
    if (out.exists) out.unreadable = std::strerror(errno);
    return out;
  }
  out.exists = true;
  if (S_ISDIR(st.st_mode)) {
    HETSTENCIL_THROW(InvalidArgument, "the profile '" + path + "' is a directory: give the path of a profile file");
  }
  // Never opened: a FIFO would block the read.
  if (!S_ISREG(st.st_mode)) {
    HETSTENCIL_THROW(InvalidArgument, "the profile '" + path + "' is not a regular file: give the path of a profile file");
  }
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    out.unreadable = std::strerror(errno);
    return out;
  }
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) out.unreadable = std::strerror(errno);
    if (n <= 0) break;
    out.text.append(buffer, static_cast<std::size_t>(n));
  }
  close(fd);
  return out;
}

// An exclusive flock on `path`, created for the purpose and removed when
// released. A waiter that gets the lock of a file its holder removed takes the
// one at `path` instead: otherwise two could hold "the" lock at once.
class FileLock {
 public:
  explicit FileLock(std::string path) : path_(std::move(path)) {
    for (;;) {
      fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
      if (fd_ < 0) fail("cannot create");
      while (flock(fd_, LOCK_EX) != 0) {
        if (errno != EINTR) fail("cannot lock");
      }
      struct stat held {}, there {};
      if (fstat(fd_, &held) == 0 && stat(path_.c_str(), &there) == 0 && held.st_dev == there.st_dev &&
          held.st_ino == there.st_ino) {
        return;
      }
      close(fd_);
    }
  }
  ~FileLock() {
    unlink(path_.c_str());
    close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  [[noreturn]] void fail(const char* what) {
    const int error = errno;
    if (fd_ >= 0) close(fd_);
    HETSTENCIL_THROW(SystemError, std::string(what) + " the profile's lock '" + path_ + "': " + std::strerror(error));
  }

  std::string path_;
  int fd_ = -1;
};

// The file `path` names (through any symlinks, which stay) moved to
// <file>.<UTC date-time>.bad (or .bad-2, ...): where it went.
std::string move_aside(const std::string& path) {
  char* resolved = realpath(path.c_str(), nullptr);
  if (!resolved) {
    HETSTENCIL_THROW(SystemError, "cannot resolve the unusable profile '" + path + "': " + std::strerror(errno));
  }
  const std::string file = resolved;
  std::free(resolved);
  const std::time_t now = std::time(nullptr);
  std::tm utc {};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &utc);
  std::string kept = file + "." + stamp + ".bad";
  struct stat st {};
  for (int k = 2; lstat(kept.c_str(), &st) == 0; ++k) kept = file + "." + stamp + ".bad-" + std::to_string(k);
  if (rename(file.c_str(), kept.c_str()) != 0) {
    HETSTENCIL_THROW(SystemError, "cannot move the unusable profile '" + path + "' aside to '" + kept +
                                      "': " + std::strerror(errno));
  }
  return kept;
}

}  // namespace

std::optional<Profile> load_profile(const std::string& path, const Fingerprint* expected) {
  const ProfileText file = read_profile_text(path);
  if (!file.exists) return std::nullopt;
  if (!file.unreadable.empty()) {
    log::warn("profile '{}' cannot be read ({}); not used", path, file.unreadable);
    return std::nullopt;
  }
  try {
    Profile p = profile_from_json(file.text, "profile '" + path + "'");
    if (expected) {
      const std::string why = expected->difference(p.fingerprint);
      if (!why.empty()) {
        log::warn("profile '{}' is for another machine ({}); not used", path, why);
        return std::nullopt;
      }
    }
    return p;
  } catch (const InvalidArgument& e) {
    log::warn("profile '{}' is unusable ({}); not used", path, e.what());
    return std::nullopt;
  }
}

void make_cache_folder_for(const std::string& path) {
  const auto folder = [](const std::string& file) {
    const auto slash = file.find_last_of('/');
    return slash == std::string::npos ? std::string() : file.substr(0, slash);
  };
  const std::string mine = folder(path);
  if (!mine.empty() && mine == folder(default_profile_path("host"))) make_directories(mine);
}

Profile update_profile(const std::string& path, const Fingerprint& here, const std::function<void(Profile&)>& change) {
  if (path.empty()) HETSTENCIL_THROW(InvalidArgument, "the profile path is empty");
  make_cache_folder_for(path);
  const FileLock lock(path + ".lock");
  Profile profile;
  const ProfileText file = read_profile_text(path);
  std::string unusable;
  if (!file.unreadable.empty()) {
    unusable = "unreadable (" + file.unreadable + ")";
  } else if (file.exists) {
    try {
      Profile stored = profile_from_json(file.text, "profile '" + path + "'");
      const std::string why = here.difference(stored.fingerprint);
      if (why.empty()) {
        profile = std::move(stored);
      } else {
        unusable = "for another machine (" + why + ")";
      }
    } catch (const InvalidArgument& e) {
      unusable = std::string("corrupt (") + e.what() + ")";
    }
  }
  // Opened first: a path that may not be written (read-only, not a regular
  // file) is refused before anything of it is moved.
  AtomicFile out(path);
  if (!unusable.empty()) {
    const std::string kept = move_aside(path);
    log::warn("profile '{}' is {}: kept as '{}'; a new profile is written in its place", path, unusable, kept);
  }
  change(profile);
  profile.fingerprint = here;
  const std::string text = to_json(profile) + "\n";
  out.write(text.data(), text.size());
  out.commit();
  return profile;
}

Profile save_profile(const std::string& path, const Profile& measured) {
  return update_profile(path, measured.fingerprint, [&](Profile& stored) { merge_into(stored, measured); });
}

}  // namespace hetstencil
