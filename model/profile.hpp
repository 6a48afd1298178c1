// The profile: every device's rate curves and every link's transfer curve for
// one machine, stored as JSON and keyed by a fingerprint of the machine.
#pragma once

#include <functional>
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
constexpr const char* kKernelsVersion = "jacobi-2026.11-6";

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

/// Kernel parameters `hetstencil tune` chose for one device, stencil and
/// precision (model/tune.hpp), with what they gained. They hold on the machine
/// of the profile's fingerprint only, as its curves do.
struct TunedParameters {
  std::map<std::string, int> values;  ///< by parameter name (Tunable::name); the others take their defaults
  double default_s = 0.0;             ///< one sweep at the defaults, median
  double tuned_s = 0.0;               ///< one sweep with `values`, median
  std::string grid;                   ///< the grid of their measurements: "2048x2048", "128x128x128"
};

struct DeviceProfile {
  std::string name;                        ///< the device's name when measured ("cpu0"), for people
  std::string kind;                        ///< "cpu" or "gpu"
  /// By rate_key(precision, nx[, variant]): one iteration of r rows (a GPU's
  /// tile variants: a pass of K or alpha sweeps, over K or alpha).
  std::map<std::string, RateCurve> rates;
  std::map<std::string, RateCurve> checks;  ///< likewise: what a residual check adds to an iteration
  /// A CPU device calibrated beside other CPU devices on its memory node (its
  /// `rates` measured with all of them sweeping the same rows at once): its
  /// sweeps of r rows while the others sweep the rest of rest_rows rows
  /// between them, by rate_key. What it does at an unequal split: on a 2-core
  /// VM 409 of 2048 rows of 2048 doubles took 1.0 ms beside the other sweeping
  /// the 1639 others, 0.50 ms beside it sweeping 409 (docs/model.md).
  std::map<std::string, RateCurve> rest;
  std::map<std::string, std::int64_t> rest_rows;  ///< by rate_key: the rows the `rest` curve's devices share
  /// The device's own loop (barriers, launches, waiting for the GPU), measured
  /// alone on a slab of 4 rows, by rate_key: a CPU device's seconds an
  /// iteration besides its sweep, a GPU's whole iteration (a floor under its
  /// iterations: its loop outlasts a 4-row sweep).
  std::map<std::string, double> step;
  /// A GPU's: seconds an iteration of a full slab (the calibration's most rows)
  /// costs beyond its sweep, by rate_key: kernel launches and the waits between
  /// its streams that its host thread's loop does not hide (see docs/model.md).
  std::map<std::string, double> overhead;
  /// Seconds a solve of the device alone takes besides its iterations and its
  /// one residual check, by rate_key: starting its thread, the first launches
  /// and graphs, the last waits (on an H100, about 2 ms whatever the grid).
  std::map<std::string, double> fixed;
  TransferCurve setup_in;                  ///< attaching a slab of so many bytes (all devices at once)
  TransferCurve setup_out;                 ///< detaching it
  /// A CPU device beside GPUs: how much slower than its curve it swept in
  /// solves, at worst, learnt from them (1 until one ran). Cloud hosts' CPU
  /// devices change speed by 2-3x from one solve to the next (H100 host: 551
  /// rows of 16384 in 0.33-0.51 ms in some solves, 0.89-1.14 ms in others).
  double slowdown_beside_gpus = 1.0;
  /// By tuning_key: the kernel parameters tuned for a stencil and precision.
  std::map<std::string, TunedParameters> tuned;
};

/// A stored profile keys its devices by device_key (what the device is, so that
/// another cut of the cores into devices keeps curves of its own); a profile
/// made for one run (named_for) keys them by the run's device names.
struct Profile {
  Fingerprint fingerprint;
  std::map<std::string, DeviceProfile> devices;  ///< by key (stored) or name (for a run)
  /// One row's trip from the first device to the second: "gpu0->cpu0" (by key when stored).
  std::map<std::string, TransferCurve> links;
  std::string link_conditions;  ///< how the link figures were measured
  /// host_canary_bytes_per_s() as the CPU curves were measured (0: not
  /// measured): a sweep or solve at another moment compares its own with it.
  double canary_bytes_per_s = 0.0;

  /// The rate curve of `device` for this precision, width and variant: the
  /// measured one, or the nearest measured width's scaled by nx / its nx.
  /// Nothing when the device has none for them. A CPU device sweeps plainly
  /// whatever the variant: its sync curve.
  std::optional<RateCurve> rate(const std::string& device, Precision precision, std::int64_t nx,
                                const VariantChoice& variant = {}) const;
  /// A CPU device's `rest` curve at exactly this width and precision, and its rest_rows.
  std::optional<std::pair<RateCurve, std::int64_t>> rest(const std::string& device, Precision precision,
                                                         std::int64_t nx) const;
  /// The same for the cost of a residual check.
  std::optional<RateCurve> check(const std::string& device, Precision precision, std::int64_t nx,
                                 const VariantChoice& variant = {}) const;
};

/// "double/2048", and for a variant but sync "double/2048/blocked-4": poisson5's keys.
std::string rate_key(Precision precision, std::int64_t nx, const VariantChoice& variant = {});

/// What names a stencil in its curves' keys: "" for poisson5 (whose keys are
/// rate_key's), a built-in's name for a built-in (by value, under any name), and
/// "file:<16 hex digits>" for any other description: an FNV-1a hash of its
/// canonical JSON (stencil_json) without its name, so that a description keeps
/// its curves whatever its file or name; "variable:<16 hex digits>" for a
/// variable stencil (Stencil::variable), whose sweeps also read its coefficient grids.
std::string stencil_tag(const Stencil& stencil);
/// The key of a device's tuned parameters: "<stencil>/<precision>", the
/// stencil as stencil_tag names it ("poisson5" for poisson5): "box9/float".
std::string tuning_key(const Stencil& stencil, Precision precision);
/// A grid as TunedParameters::grid names it: "2048x2048", "128x128x128" (nz > 0).
std::string grid_text(std::int64_t nx, std::int64_t ny, std::int64_t nz);
/// Cells of one unit of the split axis: a row of nx (2-D), a plane of nx x ny (3-D).
std::int64_t unit_cells(const Problem& problem);
/// The key of `problem`'s stencil's curves (CPU devices sweep plainly: no
/// variant): rate_key for poisson5, else "<tag>/<precision>/<nx>" in 2-D and
/// "<tag>/<precision>/<nx>x<ny>" in 3-D, a curve's rows then being planes.
std::string stencil_rate_key(const Problem& problem);

/// The profile as the model reads it for `problem`'s stencil, and the problem
/// it plans: the same for poisson5; for another stencil, every device's curves
/// of that stencil (rates, checks, rest; its loop figure, else poisson5's at
/// the nearest width: a loop costs the same whatever it sweeps) under the rate_key of a 2-D
/// problem whose rows are the split axis's units, unit_cells() wide. A device
/// without curves of the stencil at its width is estimated from the stencil
/// measured at the same precision that runs the same kernel (poisson5's own,
/// or the one of every other stencil), has the same dimension and the nearest
/// count of points, in that order: its time at as many cells, scaled on a CPU
/// by the line through the time per cell of the stencils it measured in their
/// count of points (those of its dimension, else of any) where two counts give
/// one that rises, else by cell_cost(); on a GPU by cell_grids(), never from
/// poisson5's (its generic kernel is no kin of poisson5's tuned one);
/// said so in `estimated`. A device with nothing to estimate from keeps only
/// its links and set-up.
struct StencilModel {
  Profile profile;
  Problem units;          ///< the 2-D problem of units it plans and predicts
  std::string estimated;  ///< "" or which devices' curves are estimated, from what
};
StencilModel model_for_stencil(const Profile& named, const Problem& problem);
/// The part of a CPU's cell that does not grow with the stencil's points (the
/// centre's divide, the sum's passes through the chunk's buffer, the rows it
/// streams), in points' worth: the least-squares line through the time per
/// cell of poisson7, star2_3d, star4 and box27 (256^3) starts at 11 points'
/// worth on the 2-core VM in double and in float, the line through box9 and
/// poisson5 (4096^2, double) at 7, through poisson7 and box27 on a 16-core
/// H100 host at 10 (docs/model.md).
constexpr double kCellFixedPoints = 10.0;
/// What the model takes a cell's update of `stencil` to cost on a CPU,
/// relative to others: kCellFixedPoints and its terms (a load and a
/// multiply-add each); a variable stencil's terms and centre load their
/// coefficients too, kCellFixedPoints + 1 + 2 points.
double cell_cost(const Stencil& stencil);
/// The grids a GPU's update of a cell of `stencil` reads and writes, relative
/// to others (its generic kernel is bound by memory): u and u', 2; a variable
/// stencil's coefficient grids too, 3 + points.
double cell_grids(const Stencil& stencil);
/// The variant a device's curves are kept for: a CPU device sweeps plainly under any.
VariantChoice swept_by(DeviceKind kind, const VariantChoice& variant);
/// A profile's device kind ("cpu" or "gpu").
DeviceKind kind_of(const DeviceProfile& d);
std::string link_key(const std::string& from, const std::string& to);

/// What a device is, as a stored profile keys its figures: its DeviceInfo::key,
/// or its name where none is known.
std::string device_key(const DeviceInfo& device);
/// The stored profile's figures for `devices`, keyed by their names (links
/// too): what a run plans, predicts and learns with.
Profile named_for(const Profile& stored, const std::vector<DeviceInfo>& devices);
/// The stored profile keyed by the names its devices had when measured:
/// planned for without a mapping of its devices (another machine's profile).
/// Of entries with one name, that of a `preferred` device (by key) wins, else the first.
Profile named_as_measured(const Profile& stored, const std::vector<DeviceInfo>& preferred = {});
/// The figures of `named` (a named_for(stored, devices)) put back under their keys.
void store_named(Profile& stored, const Profile& named, const std::vector<DeviceInfo>& devices);
/// Folds newer measurements into `stored`: every curve, loop figure, set-up
/// and link `measured` has replaces the one of the same key; the rest stays,
/// but for a device's rest curve where `measured` brings rates of its key
/// without one, and for its figures of a stencil and precision whose tuned
/// values `measured` changes (measured with other kernel parameters).
void merge_into(Profile& stored, const Profile& measured);

std::string to_json(const Profile& profile, int indent = 2);
/// Throws InvalidArgument naming what is missing or malformed. A curve without
/// points, or with points that are not finite or not in increasing rows, is
/// left out with a warning naming it (its device is then not calibrated for it).
/// Profiles of format 1 (devices keyed by name) are read with their names as keys.
Profile profile_from_json(const std::string& text, const std::string& source = "the profile");

/// $XDG_CACHE_HOME/hetstencil/<host>.json, else ~/.cache/hetstencil/<host>.json.
std::string default_profile_path(const std::string& host);

/// Makes the folder of `path` (and those above it) where it is the cache
/// folder of default_profile_path, which is ours to make; a folder the user
/// named must exist. Throws SystemError where it cannot.
void make_cache_folder_for(const std::string& path);

/// The profile at `path`, or nothing (with a warning) when it is missing,
/// unreadable, corrupt, partial, or, with `expected`, for another machine.
/// Throws InvalidArgument when `path` is a folder.
std::optional<Profile> load_profile(const std::string& path, const Fingerprint* expected);

/// Read, change and write the profile at `path` as one step: other processes
/// updating it wait (flock on `path`.lock, removed after), so that no update
/// is lost. The profile is read again under the lock; one that is unreadable,
/// corrupt or for another machine than `here` is moved to
/// `path`.<UTC date-time>.bad (with a warning saying so) and `change` starts
/// from an empty one. Written beside `path` and renamed into place (an
/// interrupted save leaves the old profile whole); creates the folder.
/// Returns the profile written. Throws InvalidArgument when `path` is a folder
/// or cannot be written, SystemError when the lock cannot be taken.
Profile update_profile(const std::string& path, const Fingerprint& here,
                       const std::function<void(Profile&)>& change);

/// update_profile merging `measured` (see merge_into) for its fingerprint.
Profile save_profile(const std::string& path, const Profile& measured);

}  // namespace hetstencil
