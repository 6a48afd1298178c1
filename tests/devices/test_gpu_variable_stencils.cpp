// Variable stencils (random coefficient grids) on GPU devices, alone, beside a
// CPU device and beside another GPU, give the bits of the sequential reference
// over uneven splits, sync and blocked, with a fixed count of iterations and
// with a tolerance stop (devices/cuda/coefficient_kernels.cu). Skipped where
// there is no GPU.
#include <gtest/gtest.h>

#include <string>

#include "devices/cuda/cuda_info.hpp"
#include "hetstencil/reference.hpp"
#include "hetstencil/runtime.hpp"
#include "tests/devices/variable_support.hpp"
#include "tests/test_support.hpp"

namespace hetstencil {
namespace {

RuntimeOptions on(const std::string& devices) {
  RuntimeOptions o;
  o.devices = devices;
  return o;
}

// nx past one 128-cell segment, its last one partial.
Problem variable_problem(const Stencil& s, Precision precision, bool tolerance, int variety) {
  Problem p = testing_support::stencil_problem(s, precision, 133, s.dimension == 3 ? 7 : 21, 19, tolerance, variety, 13);
  testing_support::make_variable(p, 300u + static_cast<unsigned>(variety));
  return p;
}

// Uneven: each device but the last takes radius x depth units plus its index, the last the rest.
Plan uneven_plan(const Problem& p, std::size_t devices, int depth) {
  const std::int64_t least = p.stencil.radius() * depth;
  Plan plan;
  std::int64_t first = 1;
  for (std::size_t k = 0; k < devices; ++k) {
    const std::int64_t count = k + 1 == devices ? p.units() - first + 1 : least + static_cast<std::int64_t>(k);
    plan.parts.push_back({k, first, count});
    first += count;
  }
  if (depth > 1) plan.variant = VariantChoice{Variant::Blocked, depth};
  return plan;
}

std::vector<std::string> device_sets() {
  std::vector<std::string> sets = {"gpu0", "cpu0,gpu0"};
  if (cuda_device_count() >= 2) sets.insert(sets.end(), {"gpu0,gpu1", "gpu0,cpu0,gpu1"});
  return sets;
}

void expect_reference(Runtime& runtime, const Problem& p, const Plan& plan) {
  const Result reference = solve_reference(p);
  const Result solved = runtime.solve(p, plan);
  testing_support::expect_same_bits(solved, reference);
  EXPECT_EQ(solved.report.iterations, reference.report.iterations);
  EXPECT_EQ(solved.report.residual.l2, reference.report.residual.l2);
  EXPECT_EQ(solved.report.residual.max, reference.report.residual.max);
}

TEST(GpuVariableStencils, UnevenSplitsGiveTheReferenceBits) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  for (const std::string& set : device_sets()) {
    Runtime runtime(on(set));
    int variety = 0;
    for (const Stencil& s : {Stencil::diffusion(2), Stencil::diffusion(3), Stencil::builtin("box9"),
                             Stencil::builtin("star4")}) {
      for (Precision precision : {Precision::Float, Precision::Double}) {
        for (bool tolerance : {false, true}) {
          const Problem p = variable_problem(s, precision, tolerance, variety++);
          SCOPED_TRACE(p.stencil.name + " on " + set + ", " + to_string(precision) +
                       (tolerance ? ", tolerance" : ", fixed"));
          expect_reference(runtime, p, uneven_plan(p, runtime.devices().size(), 1));
        }
      }
    }
  }
}

TEST(GpuVariableStencils, BlockedSweepsGiveTheReferenceBits) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  for (const std::string& set : device_sets()) {
    Runtime runtime(on(set));
    int variety = 0;
    for (const Stencil& s : {Stencil::diffusion(2), Stencil::builtin("box27")}) {
      for (int depth : {2, 3}) {
        Problem p = variable_problem(s, variety % 2 ? Precision::Double : Precision::Float, variety % 3 == 0, variety);
        ++variety;
        (p.dimension() == 3 ? p.nz : p.ny) = 4 * depth * p.stencil.radius() + 3;
        testing_support::make_variable(p, 400u + static_cast<unsigned>(variety));  // grids of the new size
        SCOPED_TRACE(p.stencil.name + " on " + set + ", depth " + std::to_string(depth));
        expect_reference(runtime, p, uneven_plan(p, runtime.devices().size(), depth));
      }
    }
  }
}

}  // namespace
}  // namespace hetstencil
