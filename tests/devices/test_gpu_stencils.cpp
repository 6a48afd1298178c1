// Any stencil on GPU devices, alone, beside CPU devices and beside another GPU,
// gives the bits of the sequential reference over uneven splits of rows (2-D)
// or planes (3-D), sync and blocked, with a fixed count of iterations and with
// a tolerance stop; the asynchronous variants refuse it naming the stencil.
// Skipped where there is no GPU (or not enough of them).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <utility>

#include "devices/backend.hpp"
#include "devices/cuda/cuda_device.hpp"
#include "devices/cuda/cuda_info.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/reference.hpp"
#include "hetstencil/runtime.hpp"
#include "runtime/executor.hpp"
#include "tests/devices/gpu_support.hpp"
#include "tests/test_support.hpp"

namespace hetstencil {
namespace {

using testing_support::device_sets;
using testing_support::expect_reference;
using testing_support::on;
using testing_support::expect_same_bits;
using testing_support::uneven_plan;

// nx past one 128-cell segment, its last one partial.
Problem problem_of(const Stencil& s, Precision precision, bool tolerance, int variety) {
  return testing_support::stencil_problem(s, precision, 133, s.dimension == 3 ? 7 : 21, 19, tolerance, variety, 13);
}

std::vector<Stencil> stencils() {
  std::vector<Stencil> out;
  for (const std::string& name : builtin_stencil_names()) out.push_back(Stencil::builtin(name));
  out.push_back(testing_support::random_stencil(2, 21, 11));
  out.push_back(testing_support::random_stencil(3, 22, 13));
  out.push_back(testing_support::random_stencil(3, 23, 40));
  return out;
}

TEST(GpuStencils, EveryStencilOverUnevenSplitsGivesTheReferenceBits) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  for (const std::string& set : device_sets()) {
    Runtime runtime(on(set));
    int variety = 0;
    for (const Stencil& s : stencils()) {
      for (Precision precision : {Precision::Float, Precision::Double}) {
        for (bool tolerance : {false, true}) {
          const Problem p = problem_of(s, precision, tolerance, variety++);
          SCOPED_TRACE(s.name + " on " + set + ", " + to_string(precision) + (tolerance ? ", tolerance" : ", fixed"));
          expect_reference(runtime, p, uneven_plan(p, runtime.devices().size(), 1));
        }
      }
    }
  }
}

// Values near the bottom of the range: the quotient by the diagonal takes
// the division there (core/quotient.hpp), zeros of both signs and subnormals.
TEST(GpuStencils, ValuesThroughTheSubnormalsGiveTheReferenceBits) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  for (const std::string& set : device_sets()) {
    Runtime runtime(on(set));
    for (const char* name : {"box9", "star4"}) {
      for (Precision precision : {Precision::Float, Precision::Double}) {
        const Problem p = testing_support::through_subnormals(problem_of(Stencil::builtin(name), precision, false, 0));
        SCOPED_TRACE(std::string(name) + " on " + set + ", " + to_string(precision));
        expect_reference(runtime, p, uneven_plan(p, runtime.devices().size(), 1));
      }
    }
  }
}

TEST(GpuStencils, BlockedSweepsGiveTheReferenceBits) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  for (const std::string& set : device_sets()) {
    Runtime runtime(on(set));
    int variety = 0;
    for (const Stencil& s : {Stencil::builtin("box9"), Stencil::builtin("star4"), testing_support::random_stencil(3, 24, 9)}) {
      for (int depth : {2, 3}) {
        for (bool tolerance : {false, true}) {
          Problem p = problem_of(s, variety % 3 ? Precision::Double : Precision::Float, tolerance, variety);
          ++variety;
          (p.dimension() == 3 ? p.nz : p.ny) = 4 * depth * p.stencil.radius() + 3;
          SCOPED_TRACE(s.name + " on " + set + ", depth " + std::to_string(depth) + (tolerance ? ", tolerance" : ", fixed"));
          expect_reference(runtime, p, uneven_plan(p, runtime.devices().size(), depth));
        }
      }
    }
  }
}

// Every value of every parameter a GPU tunes gives the defaults' bits: the
// GPU alone (its steps as graphs) and beside a CPU device (exchanging).
TEST(GpuStencils, EveryTuningValueGivesTheDefaultsBits) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  MachineDevices made = make_devices(load_topology(), DeviceMapOptions{1, 2, "cpu0,gpu0", true, {}});
  ASSERT_EQ(made.devices.size(), 2u);
  Device* cpu = made.devices[0].get();
  Device* gpu = made.devices[1].get();
  if (cpu->info().kind == DeviceKind::Gpu) std::swap(cpu, gpu);
  int variety = 0;
  for (const Stencil& s : {Stencil::builtin("box9"), Stencil::builtin("star4")}) {
    for (Precision precision : {Precision::Float, Precision::Double}) {
      const Problem p = problem_of(s, precision, false, variety++);
      const std::int64_t first = 2 * s.radius() + 1;
      const Plan alone{{{0, 1, p.units()}}};
      const Plan beside{{{0, 1, first}, {1, first + 1, p.units() - first}}};
      const Result reference = solve_reference(p);
      StencilJob job;
      job.stencil = s;
      job.precision = precision;
      job.poisson5 = false;
      const std::vector<Tunable> tunables = gpu->tunables(job);
      ASSERT_FALSE(tunables.empty());
      for (const Tunable& t : tunables) {
        for (int value : t.values) {
          SCOPED_TRACE(s.name + " " + to_string(precision) + " " + t.name + "=" + std::to_string(value));
          const auto tuning = [&](const Device& d) { return &d == gpu ? Tuning{{t.name, value}} : Tuning{}; };
          expect_same_bits(execute(p, alone, {gpu}, made.spins, {}, nullptr, tuning), reference);
          expect_same_bits(execute(p, beside, {cpu, gpu}, made.spins, {}, nullptr, tuning), reference);
        }
      }
    }
  }
}

TEST(GpuStencils, TheAsynchronousVariantsRefuseAnyStencilButPoisson5) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  Runtime runtime(on("gpu0"));
  const Problem p = problem_of(Stencil::builtin("box9"), Precision::Double, false, 0);
  Plan plan = runtime.even_plan(p);
  plan.variant = VariantChoice{Variant::Async2, 2};
  try {
    runtime.solve(p, plan);
    FAIL() << "async2 ran box9";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("the async2 variant runs poisson5 only; the stencil 'box9' runs sync or blocked"),
              std::string::npos)
        << e.what();
  }
}

TEST(GpuStencils, MeasurementsSweepTheJobsStencilAndShape) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  DeviceInfo info;
  info.name = "gpu0";
  info.kind = DeviceKind::Gpu;
  auto device = make_cuda_device(info, 0, {}, false);
  StencilJob job;
  job.precision = Precision::Float;
  job.stencil = Stencil::builtin("box27");
  job.poisson5 = false;
  job.nx = 256;
  job.ny = 64;
  job.nz = 48;
  const std::vector<RateSamples> samples = device->measure_sweeps(job, {4, 32}, 3, true);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].rows, 4);
  EXPECT_GT(samples[0].sweep_s.front(), 0.0);
  EXPECT_GT(samples[1].sweep_s.front(), 0.0);
  const SweepVsCopy t = device->sweep_vs_copy(job, 3);
  ASSERT_FALSE(t.skipped);
  EXPECT_GT(t.sweep_s, 0.0);
  EXPECT_GT(t.checked_sweep_s, 0.0);
  EXPECT_GT(t.copy_s, 0.0);
}

}  // namespace
}  // namespace hetstencil
