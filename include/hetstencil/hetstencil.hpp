/// \file
/// Everything an application needs.
///
/// Thread safety of the public types:
/// - Runtime: one solve at a time per Runtime; concurrent solve() calls take
///   turns, so threads that solve at once use a Runtime each. devices(),
///   topology() and even_plan() are safe from any thread; plan(), predict() and
///   learn() take turns. A solve started from a progress callback on the same
///   Runtime throws InvalidArgument.
/// - RuntimeOptions, PlanOptions, Problem, Source, Boundary, StopRule, Plan,
///   Assignment, Prediction, DevicePrediction, LeftOut, SavedPlan,
///   TopologySource, Topology (and its parts), DeviceInfo, MachineProfile,
///   CalibrateOptions, Calibrated: values, safe to copy across threads. A
///   Problem's source and boundary functions run on the thread that calls
///   solve(): a Problem solved on several threads at once needs functions that
///   are safe to call at once.
/// - ProfileModel: its const methods are safe from any thread.
/// - Result, Report, Progress, Residual, Grid: values; once returned, read them
///   from any number of threads; a thread that changes one needs it to itself.
/// - The free functions (load_topology, solve_reference, write_npy, to_json,
///   format_report, read_saved_plan...) share no state: safe to call from
///   several threads (on different files). calibrate_machine measures the whole
///   machine: one at a time, and not beside a solve.
/// - set_log_level, log_level, set_log_sink: safe from any thread.
/// - Exceptions (Error and its kinds): immutable.
#pragma once

/// \namespace hetstencil
/// The whole API: Runtime solves a Problem by a Plan and returns a Result with
/// its Report; ProfileModel plans from a profile without running; see the
/// page "Embedding hetstencil".

#include "hetstencil/bench.hpp"
#include "hetstencil/device_info.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/grid.hpp"
#include "hetstencil/logging.hpp"
#include "hetstencil/npy.hpp"
#include "hetstencil/plan.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/processes.hpp"
#include "hetstencil/profile.hpp"
#include "hetstencil/progress.hpp"
#include "hetstencil/projection.hpp"
#include "hetstencil/reference.hpp"
#include "hetstencil/report.hpp"
#include "hetstencil/runtime.hpp"
#include "hetstencil/statistics.hpp"
#include "hetstencil/tune.hpp"
#include "hetstencil/stencil.hpp"
#include "hetstencil/variant.hpp"
#include "hetstencil/version.hpp"
