/// \file
/// The entry point for applications: Runtime, its options and PlanOptions.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hetstencil/export.hpp"
#include "hetstencil/device_info.hpp"
#include "hetstencil/plan.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/report.hpp"
#include "hetstencil/topology.hpp"

namespace hetstencil {

/// Which devices each process of a solve over several takes.
enum class RankDevices {
  All,   ///< every device of its machine (after RuntimeOptions::devices): one process per node
  Local  ///< the one its rank among its node's processes names, in device order: one process per GPU or socket
};

/// How to build a Runtime. Thread safety: a value, safe to copy across threads.
struct RuntimeOptions {
  /// 0: one CPU device per socket (per NUMA node where a socket has several).
  /// n > 0: the machine's cores cut into n groups of consecutive cores, one device
  /// each (sharing cores when n exceeds them) — several devices on a small machine.
  /// At most kMaxCpuDevices.
  int cpu_devices = 0;
  /// Worker threads per CPU device (at most kMaxThreadsPerDevice); 0: one per core of the device.
  int threads_per_device = 0;
  /// Which devices to use: "" (all), names ("cpu0,gpu1"), or names to leave
  /// out, each with '-' ("-cpu0"); "cpu" and "gpu" name every device of a kind.
  std::string devices;
  /// The machine: this one by default, or an hwloc XML file / synthetic
  /// description (threads are then not bound: the cores are not this machine's).
  TopologySource topology;
  /// This machine's profile (what plan() and predict() use and calibrations
  /// and learn() update): "" for its default path (default_profile_path).
  /// A described machine has none here: ProfileModel plans for it.
  std::string profile;
  /// A solve over several processes (see Runtime): their MPI communicator as a
  /// Fortran handle, MPI_Comm_c2f(comm) (or MpiSession::world()), MPI being
  /// initialised with MPI_THREAD_MULTIPLE. Unset: this process alone.
  std::optional<int> communicator;
  /// With a communicator: which devices this process takes.
  RankDevices rank_devices = RankDevices::All;
  /// With a communicator: how GPUs of different processes exchange ghost rows.
  GpuTransport gpu_transport = GpuTransport::Auto;
};

/// How Runtime::plan chooses a split.
struct PlanOptions {
  /// How GPUs sweep; the plan's variant.
  VariantChoice variant;
  /// Where the profile has no curves for every device at the problem's
  /// precision and width (for GPUs, sweeping by the variant): measure them
  /// first and save them (true), or split evenly (false).
  bool calibrate = false;
  /// Seconds such a calibration may take.
  double budget_s = 10.0;
  /// Told, in words, what takes long (a calibration: why, then how long it
  /// took and what it skipped); nothing is said when empty.
  std::function<void(const std::string&)> notify;
};

/// The devices a Runtime of `options` makes of the machine `topology`
/// describes (its selection applied), GPUs included wherever the topology has
/// them, a described machine's too: what a machine offers, not what runs.
HETSTENCIL_API std::vector<DeviceInfo> devices_of(const Topology& topology, const RuntimeOptions& options);

/// Called from a thread of the runtime's own while a solve iterates. It may not
/// start a solve on the same Runtime (that throws InvalidArgument: the solve
/// would wait for the one reporting to it forever).
using ProgressCallback = std::function<void(const Progress&)>;

/// Holds the devices of one machine: probes it, starts the CPU devices'
/// workers and reads its profile once, then plans and solves any number of
/// problems.
///
/// ```cpp
/// hetstencil::Runtime rt;                      // probes the machine
/// hetstencil::Problem p;
/// p.nx = p.ny = 2048;
/// p.stop.max_iterations = 500;
/// hetstencil::Result r = rt.solve(p);          // runs on every device
/// const auto& u = r.grid<double>();            // (ny+2) x (nx+2), boundary included
///
/// hetstencil::PlanOptions o;
/// o.calibrate = true;                          // measure the devices first where the profile lacks them
/// const hetstencil::Plan plan = rt.plan(p, o); // the split that finishes first, predicted
/// r = rt.solve(p, plan);
/// std::puts(hetstencil::format_report(r.report).c_str());  // predicted beside measured
/// ```
///
/// Thread safety: one solve at a time per Runtime. solve() may be called from
/// several threads at once; the calls take turns (each waits for the one
/// running), so threads that want to solve at the same time use a Runtime each.
/// devices(), topology() and even_plan() are safe from any thread at any time;
/// plan(), predict() and learn() take turns with each other.
/// Moving, assigning or destroying a Runtime while another thread uses it is not.
///
/// Over several processes (RuntimeOptions::communicator): each process probes
/// its own machine and takes its devices; devices() lists every process's, in
/// rank order, named "rR.NAME" where there are several processes. The
/// constructor, plan() and solve() are collective (every process calls them,
/// with the same problem); rank 0's plan is the one every process runs.
/// plan() calibrates each process's own devices where asked, then plans over
/// every process's profile (messages between processes taken as free), or
/// splits evenly where a profile lacks a device or the model would leave a
/// process out; predict() uses the profiles the last plan() gathered, and
/// learn() learns nothing. The report of a solve covers
/// every device on every process; rank 0's solution holds the whole grid (the
/// others' their own rows). What one process refuses before a solve begins
/// (its devices, its calibration, its part of the plan, its memory) every
/// process throws, naming that rank; a process that fails during a solve ends
/// every process of it (MPI_Abort) after an error naming its rank: the others
/// cannot be told otherwise.
class HETSTENCIL_API Runtime {
 public:
  /// Probes (or reads) the machine, makes its devices and starts their
  /// threads. Throws InvalidArgument for bad options or a device selection
  /// that leaves nothing, SystemError when threads or memory cannot be had.
  explicit Runtime(RuntimeOptions options = {});
  /// Stops the devices' threads.
  ~Runtime();
  /// Takes over the devices (not while another thread uses `other`).
  Runtime(Runtime&& other) noexcept;
  /// Takes over the devices (not while another thread uses either).
  Runtime& operator=(Runtime&& other) noexcept;

  /// The devices plans index (Assignment::device), in order: every process's.
  const std::vector<DeviceInfo>& devices() const;
  /// This process's rank among the processes of its solves (0 alone).
  int rank() const;
  /// How many processes its solves span (1 alone).
  int processes() const;
  /// The machine the devices were made of.
  const Topology& topology() const;

  /// Every device gets an equal share of rows (shares differ by at most one row).
  Plan even_plan(const Problem& problem) const;

  /// The split that finishes first, from this machine's profile when it has
  /// curves for every device at the problem's precision and width (calibrated
  /// first when it has not and options.calibrate says so): parts, the
  /// prediction, and the devices left out with the reason. Otherwise
  /// even_plan(), predicted where the profile can. A described machine has no
  /// profile: evenly. The plan's origin says which. A calibration waits for
  /// a solve in progress, and throws InvalidArgument from a progress callback
  /// of one on this Runtime.
  Plan plan(const Problem& problem, const PlanOptions& options = {});
  /// The model's prediction for a plan (its variant too), when this machine's
  /// profile has curves for its devices.
  std::optional<Prediction> predict(const Problem& problem, const Plan& plan);
  /// Folds what a solve measured into this machine's profile (read again and
  /// written under its lock, so that runs at once lose nothing). Returns how
  /// many devices' figures moved (nothing is written when none did; nothing
  /// is learnt without a profile). Throws Error when it cannot be written.
  int learn(const Report& report, const VariantChoice& variant = {});
  /// The profile's file ("" for a described machine).
  const std::string& profile_path() const;
  /// Why the last calibration could not be saved ("" when it was, or none ran):
  /// it is used all the same, but lost after this Runtime.
  std::string profile_not_saved() const;

  /// Solves on every device with plan(problem) (no calibration): the model's
  /// split where this machine's profile covers the problem, else even. Waits
  /// while another thread solves on this Runtime.
  Result solve(const Problem& problem);
  /// Solves with the given plan; throws InvalidArgument if it does not cover
  /// rows 1..ny. With the plan's prediction, the report puts it beside what
  /// was measured (Report::predicted), per device and per phase.
  Result solve(const Problem& problem, const Plan& plan);
  /// The same, calling `progress` every `every_s` seconds while it iterates (never
  /// after solve() returns). The devices' threads do not wait for it.
  Result solve(const Problem& problem, const Plan& plan, const ProgressCallback& progress, double every_s = 0.5);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hetstencil
