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
#include "tests/devices/gpu_support.hpp"
#include "tests/test_support.hpp"

namespace hetstencil {
namespace {

using testing_support::device_sets;
using testing_support::expect_reference;
using testing_support::on;
using testing_support::uneven_plan;

// nx past one 128-cell segment, its last one partial.
Problem variable_problem(const Stencil& s, Precision precision, bool tolerance, int variety) {
  Problem p = testing_support::stencil_problem(s, precision, 133, s.dimension == 3 ? 7 : 21, 19, tolerance, variety, 13);
  testing_support::make_variable(p, 300u + static_cast<unsigned>(variety));
  return p;
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
