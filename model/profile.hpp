// The profile: every device's rate curves and every link's transfer curve for
// one machine, stored as JSON and keyed by a fingerprint of the machine.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hetstencil/device_info.hpp"
#include "hetstencil/plan.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/topology.hpp"
#include "model/curves.hpp"

namespace hetstencil {

/// Bumped whenever a kernel changes speed on purpose: older profiles are stale.
constexpr const char* kKernelsVersion = "jacobi-2026.11-2";

/// What a profile was measured on. A profile is used only on a machine with
/// the same fingerprint.
struct Fingerprint {
  std::string host;
  std::string cpu_model;
  int sockets = 0;
  int cores = 0;
  std::vector<std::string> gpus;  ///< "name uuid", in CUDA order
  int driver_version = 0;         ///< CUDA driver, 0 without
  std::string kernels = kKernelsVersion;

  bool operator==(const Fingerprint& o) const;
  /// "" when equal, else the first difference in words.
  std::string difference(const Fingerprint& o) const;
};

Fingerprint fingerprint_of(const Topology& topology);

struct DeviceProfile {
  std::string kind;                        ///< "cpu" or "gpu"
  /// By rate_key(precision, nx[, variant]): one iteration of r rows (a GPU's
  /// tile variants: a pass of K or alpha sweeps, over K or alpha).
  std::map<std::string, RateCurve> rates;
  std::map<std::string, RateCurve> checks;  ///< likewise: what a residual check adds to an iteration
  /// Seconds an iteration costs besides its sweep, by rate_key: the device's
  /// own loop (barriers, launches, waiting for the GPU), measured alone on a slab
  /// of 4 rows.
  std::map<std::string, double> step;
  TransferCurve setup_in;                  ///< attaching a slab of so many bytes (all devices at once)
  TransferCurve setup_out;                 ///< detaching it
  /// A CPU device beside GPUs: how much slower than its curve it swept in
  /// solves, at worst, learnt from them (1 until one ran). Cloud hosts' CPU
  /// devices change speed by 2-3x from one solve to the next (H100 host: 551
  /// rows of 16384 in 0.33-0.51 ms in some solves, 0.89-1.14 ms in others).
  double slowdown_beside_gpus = 1.0;
};

struct Profile {
  Fingerprint fingerprint;
  std::map<std::string, DeviceProfile> devices;  ///< by device name
  /// One row's trip from the first device to the second: "gpu0->cpu0".
  std::map<std::string, TransferCurve> links;
  std::string link_conditions;  ///< how the link figures were measured

  /// The rate curve of `device` for this precision, width and variant: the
  /// measured one, or the nearest measured width's scaled by nx / its nx.
  /// Nothing when the device has none for them. A CPU device sweeps plainly
  /// whatever the variant: its sync curve.
  std::optional<RateCurve> rate(const std::string& device, Precision precision, std::int64_t nx,
                                const VariantChoice& variant = {}) const;
  /// The same for the cost of a residual check.
  std::optional<RateCurve> check(const std::string& device, Precision precision, std::int64_t nx,
                                 const VariantChoice& variant = {}) const;
};

/// "double/2048", and for a variant but sync "double/2048/blocked-4".
std::string rate_key(Precision precision, std::int64_t nx, const VariantChoice& variant = {});
/// The variant a device's curves are kept for: a CPU device sweeps plainly under any.
VariantChoice swept_by(DeviceKind kind, const VariantChoice& variant);
/// A profile's device kind ("cpu" or "gpu").
DeviceKind kind_of(const DeviceProfile& d);
std::string link_key(const std::string& from, const std::string& to);

std::string to_json(const Profile& profile, int indent = 2);
/// Throws InvalidArgument naming what is missing or malformed.
Profile profile_from_json(const std::string& text);

/// $XDG_CACHE_HOME/hetstencil/<host>.json, else ~/.cache/hetstencil/<host>.json.
std::string default_profile_path(const std::string& host);

/// The profile at `path`, or nothing (with a warning) when it is missing,
/// unreadable, corrupt, partial, or, with `expected`, for another machine.
std::optional<Profile> load_profile(const std::string& path, const Fingerprint* expected);

/// Writes beside `path` and renames into place: an interrupted save leaves the
/// old profile whole. Creates the folder.
void save_profile(const std::string& path, const Profile& profile);

}  // namespace hetstencil
