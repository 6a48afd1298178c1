// Runs a plan on its devices: set-up (attach), the iterations with one host
// thread per device, tear-down (detach), and the report.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "devices/device.hpp"
#include "devices/transport/processes.hpp"
#include "devices/slab_memory.hpp"
#include "hetstencil/plan.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/report.hpp"
#include "hetstencil/runtime.hpp"

namespace hetstencil {

/// Throws InvalidArgument unless the plan's parts are in order, cover the
/// units of the split axis (rows 1..ny, planes 1..nz in 3-D) exactly once,
/// and name distinct devices among `device_count`.
void validate_plan(const Plan& plan, const Problem& problem, std::size_t device_count);

/// Throws InvalidArgument, naming the bytes needed and the bytes there are,
/// where the problem's host grids (its iterate, and s*f where the source is a
/// grid) cannot be in this host's memory: a solve refuses it before any
/// device is measured or allocated.
void check_host_grids(const Problem& problem);

/// Who watches a solve's progress, and how often (no one when `callback` is empty).
struct ProgressWatch {
  ProgressCallback callback;
  double every_s = 0.5;
};

/// Where the devices a plan names live when a solve spans processes: `devices`
/// (execute's) holds this process's and null for the others'.
struct Spread {
  Processes* processes = nullptr;
  std::vector<int> owner;          ///< by device index: the rank holding it
  std::vector<std::string> names;  ///< by device index: its name in reports
  GpuTransport gpu_transport = GpuTransport::Auto;  ///< how GPUs at process boundaries reach each other
};

/// The kernel parameters a device of a solve sweeps with (StencilJob::tuning);
/// empty, or an empty map: its defaults.
using TuningOf = std::function<Tuning(const Device& device)>;

/// Seconds of the iterations of a solve on `device` alone (with `tuning`'s
/// kernel parameters): calibration's SolveTimer.
double solve_seconds(const Problem& problem, const Plan& plan, Device& device, int spins, const Tuning& tuning);

/// `spins`: how long waiting threads spin before sleeping (see Counter).
/// With `spread`, collective over its processes: each runs its devices' parts
/// of the same plan; rank 0's grid receives the whole solution (the others'
/// hold their own rows) and every process's report covers every device. What
/// one process refuses before anything is allocated (its slabs do not fit...)
/// every process throws (agree); a failure after that ends them all
/// (Processes::abort): the others could not be told. Each device sweeps with
/// the kernel parameters `tuning` gives it.
Result execute(const Problem& problem, const Plan& plan, const std::vector<Device*>& devices, int spins,
               const ProgressWatch& watch = {}, const Spread* spread = nullptr, const TuningOf& tuning = {});

}  // namespace hetstencil
