#include "model/profile.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "devices/cuda/cuda_info.hpp"
#include "hetstencil/error.hpp"
#include "runtime/src/atomic_file.hpp"

namespace hetstencil {
namespace {

using nlohmann::json;

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

std::map<std::string, RateCurve> curves_from(const json& j) {
  std::map<std::string, RateCurve> out;
  for (const auto& [key, points] : j.items()) {
    std::vector<RateCurve::Point> pts;
    for (const auto& pt : points) pts.push_back({pt.at(0).get<std::int64_t>(), pt.at(1).get<double>()});
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
  f.cores = static_cast<int>(t.cores.size());
  for (const auto& g : t.gpus) f.gpus.push_back(g.name + " " + g.uuid);
  f.driver_version = t.this_machine ? cuda_driver_version() : 0;
  return f;
}

namespace {
std::string variant_suffix(const VariantChoice& variant) {
  return variant.variant == Variant::Sync ? "" : "/" + to_string(variant.variant) + "-" + std::to_string(variant.param);
}
}  // namespace

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

std::optional<RateCurve> Profile::check(const std::string& device, Precision precision, std::int64_t nx,
                                        const VariantChoice& variant) const {
  const auto d = devices.find(device);
  return d == devices.end() ? std::nullopt
                            : nearest_curve(d->second.checks, precision, nx, swept_by(kind_of(d->second), variant));
}

std::string to_json(const Profile& p, int indent) {
  json devices = json::object();
  for (const auto& [name, d] : p.devices) {
    json device = {{"kind", d.kind},
                   {"rates", curves_json(d.rates)},
                   {"checks", curves_json(d.checks)},
                   {"step", d.step}};
    if (!d.setup_in.empty()) device["setup_in"] = curve_json(d.setup_in);
    if (!d.setup_out.empty()) device["setup_out"] = curve_json(d.setup_out);
    if (d.slowdown_beside_gpus != 1.0) device["slowdown_beside_gpus"] = d.slowdown_beside_gpus;
    devices[name] = device;
  }
  json links = json::object();
  for (const auto& [key, c] : p.links) links[key] = curve_json(c);
  const Fingerprint& f = p.fingerprint;
  const json fingerprint = {{"host", f.host},       {"cpu_model", f.cpu_model},
                            {"sockets", f.sockets}, {"cores", f.cores},
                            {"gpus", f.gpus},       {"driver_version", f.driver_version},
                            {"kernels", f.kernels}};
  return json{{"format", "hetstencil-profile-1"},
              {"fingerprint", fingerprint},
              {"devices", devices},
              {"links", links},
              {"link_conditions", p.link_conditions}}
      .dump(indent);
}

Profile profile_from_json(const std::string& text) {
  try {
    const json j = json::parse(text);
    if (j.at("format") != "hetstencil-profile-1") {
      HETSTENCIL_THROW(InvalidArgument, "not a hetstencil profile (format " + j.at("format").dump() + ")");
    }
    Profile p;
    const json& f = j.at("fingerprint");
    p.fingerprint.host = f.at("host").get<std::string>();
    p.fingerprint.cpu_model = f.at("cpu_model").get<std::string>();
    p.fingerprint.sockets = f.at("sockets").get<int>();
    p.fingerprint.cores = f.at("cores").get<int>();
    p.fingerprint.gpus = f.at("gpus").get<std::vector<std::string>>();
    p.fingerprint.driver_version = f.at("driver_version").get<int>();
    p.fingerprint.kernels = f.at("kernels").get<std::string>();
    for (const auto& [name, d] : j.at("devices").items()) {
      DeviceProfile device;
      device.kind = d.at("kind").get<std::string>();
      device.rates = curves_from(d.at("rates"));
      device.checks = curves_from(d.value("checks", json::object()));
      device.step = d.value("step", json::object()).get<std::map<std::string, double>>();
      if (d.contains("setup_in")) device.setup_in = curve_from(d.at("setup_in"));
      if (d.contains("setup_out")) device.setup_out = curve_from(d.at("setup_out"));
      device.slowdown_beside_gpus = d.value("slowdown_beside_gpus", 1.0);
      if (!(device.slowdown_beside_gpus >= 1.0)) {
        HETSTENCIL_THROW(InvalidArgument, name + ": slowdown_beside_gpus must be at least 1");
      }
      p.devices[name] = device;
    }
    for (const auto& [key, c] : j.at("links").items()) p.links[key] = curve_from(c);
    p.link_conditions = j.value("link_conditions", "");
    return p;
  } catch (const json::exception& e) {
    HETSTENCIL_THROW(InvalidArgument, std::string("malformed profile: ") + e.what());
  }
}

std::string default_profile_path(const std::string& host) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::string base = xdg && *xdg ? xdg : std::string(home && *home ? home : "/tmp") + "/.cache";
  return base + "/hetstencil/" + host + ".json";
}

std::optional<Profile> load_profile(const std::string& path, const Fingerprint* expected) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  try {
    Profile p = profile_from_json(text);
    if (expected) {
      const std::string why = expected->difference(p.fingerprint);
      if (!why.empty()) {
        spdlog::warn("profile '{}' is for another machine ({}); not used", path, why);
        return std::nullopt;
      }
    }
    return p;
  } catch (const InvalidArgument& e) {
    spdlog::warn("profile '{}' is unusable ({}); not used", path, e.what());
    return std::nullopt;
  }
}

void save_profile(const std::string& path, const Profile& profile) {
  const auto slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) make_directories(path.substr(0, slash));
  const std::string text = to_json(profile) + "\n";
  AtomicFile file(path);
  file.write(text.data(), text.size());
  file.commit();
}

}  // namespace hetstencil
