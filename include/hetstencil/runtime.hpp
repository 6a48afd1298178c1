// The entry point for applications.
//
//   hetstencil::Runtime rt;                      // probes the machine
//   hetstencil::Problem p;
//   p.nx = p.ny = 2048;
//   p.stop.max_iterations = 500;
//   hetstencil::Result r = rt.solve(p);          // runs on every device
//   const auto& u = r.grid<double>();             // (ny+2) x (nx+2), boundary included
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "hetstencil/device_info.hpp"
#include "hetstencil/plan.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/report.hpp"
#include "hetstencil/topology.hpp"

namespace hetstencil {

/// How to build a Runtime. Thread safety: a value, safe to copy across threads.
struct RuntimeOptions {
  /// 0: one CPU device per socket (per NUMA node where a socket has several).
  /// n > 0: the machine's cores cut into n groups of consecutive cores, one device
  /// each (sharing cores when n exceeds them) — several devices on a small machine.
  int cpu_devices = 0;
  /// Worker threads per CPU device; 0: one per core of the device.
  int threads_per_device = 0;
  /// Which devices to use: "" (all), names ("cpu0,gpu1"), or names to leave
  /// out, each with '-' ("-cpu0"); "cpu" and "gpu" name every device of a kind.
  std::string devices;
  /// The machine: this one by default, or an hwloc XML file / synthetic
  /// description (threads are then not bound: the cores are not this machine's).
  TopologySource topology;
};

/// Called from a thread of the runtime's own while a solve iterates. It may not
/// start a solve on the same Runtime (that throws InvalidArgument: the solve
/// would wait for the one reporting to it forever).
using ProgressCallback = std::function<void(const Progress&)>;

/// Holds the devices of one machine.
///
/// Thread safety: one solve at a time per Runtime. solve() may be called from
/// several threads at once; the calls take turns (each waits for the one
/// running), so threads that want to solve at the same time use a Runtime each.
/// devices(), topology() and even_plan() are safe from any thread at any time.
/// Moving, assigning or destroying a Runtime while another thread uses it is not.
class Runtime {
 public:
  explicit Runtime(RuntimeOptions options = {});
  ~Runtime();
  Runtime(Runtime&&) noexcept;
  Runtime& operator=(Runtime&&) noexcept;

  const std::vector<DeviceInfo>& devices() const;
  const Topology& topology() const;

  /// Every device gets an equal share of rows (shares differ by at most one row).
  Plan even_plan(const Problem& problem) const;

  /// Solves on every device with even_plan(). Waits while another thread solves
  /// on this Runtime.
  Result solve(const Problem& problem);
  /// Solves with the given plan; throws InvalidArgument if it does not cover rows 1..ny.
  Result solve(const Problem& problem, const Plan& plan);
  /// The same, calling `progress` every `every_s` seconds while it iterates (never
  /// after solve() returns). The devices' threads do not wait for it.
  Result solve(const Problem& problem, const Plan& plan, const ProgressCallback& progress, double every_s = 0.5);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hetstencil
