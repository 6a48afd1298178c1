// Runs a plan on its devices: set-up (attach), the iterations with one host
// thread per device, tear-down (detach), and the report.
#pragma once

#include <vector>

#include "devices/device.hpp"
#include "hetstencil/plan.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/report.hpp"
#include "hetstencil/runtime.hpp"

namespace hetstencil {

/// Throws InvalidArgument unless the plan's parts are in row order, cover rows
/// 1..ny exactly once, and name distinct devices among `device_count`.
void validate_plan(const Plan& plan, const Problem& problem, std::size_t device_count);

/// A device and the rows it is to hold.
struct Slab {
  const Device* device = nullptr;
  RowRange rows;
};
/// Before anything is allocated: throws InvalidArgument where `host_bytes` of
/// host grids and the slabs of `job` cannot fit in the memory they come from,
/// naming the bytes needed and the bytes there are; warns where they may not
/// (see check_memory). `job` needs its sizes, variant, stop rule and source
/// kind, not its grids.
void check_memory_for(const StencilJob& job, std::uint64_t host_bytes, const std::vector<Slab>& slabs);

/// Who watches a solve's progress, and how often (no one when `callback` is empty).
struct ProgressWatch {
  ProgressCallback callback;
  double every_s = 0.5;
};

/// `spins`: how long waiting threads spin before sleeping (see Counter).
Result execute(const Problem& problem, const Plan& plan, const std::vector<Device*>& devices, int spins,
               const ProgressWatch& watch = {});

}  // namespace hetstencil
