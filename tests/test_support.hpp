// Small helpers shared by the tests.
#pragma once

#include <gtest/gtest.h>

#include <cstring>

#include "hetstencil/runtime.hpp"

namespace hetstencil::testing_support {

/// This machine's cores cut into `devices` CPU devices of `threads` workers
/// each, and no GPU.
inline RuntimeOptions cpu_devices(int devices, int threads) {
  RuntimeOptions o;
  o.cpu_devices = devices;
  o.threads_per_device = threads;
  o.devices = "cpu";
  return o;
}

/// The problem the exactness suites run on every device combination: a boundary
/// of 0.5 and the spike, 40 iterations, or a tolerance checked every 7 (so
/// that some solves stop early and some run to the 400 cap).
inline Problem exactness_problem(std::int64_t nx, std::int64_t ny, Precision precision, bool tolerance) {
  Problem p;
  p.nx = nx;
  p.ny = ny;
  p.precision = precision;
  p.boundary = Boundary::constant(0.5);
  if (tolerance) {
    p.stop.tolerance = 0.3;
    p.stop.check_every = 7;
    p.stop.max_iterations = 400;
  } else {
    p.stop.max_iterations = 40;
  }
  return p;
}

/// Same values bit for bit (the first difference is named), same iterations,
/// same convergence, same residual bits.
template <class T>
void expect_same_bits(const Result& got, const Result& want) {
  const auto& a = got.grid<T>().values();
  const auto& b = want.grid<T>().values();
  ASSERT_EQ(a.size(), b.size());
  std::size_t first_diff = a.size();
  for (std::size_t k = 0; k < a.size() && first_diff == a.size(); ++k) {
    if (std::memcmp(&a[k], &b[k], sizeof(T)) != 0) first_diff = k;
  }
  EXPECT_EQ(first_diff, a.size()) << "first differing value at flat index " << first_diff << ": "
                                  << (first_diff < a.size() ? a[first_diff] : T(0)) << " vs "
                                  << (first_diff < a.size() ? b[first_diff] : T(0));
  EXPECT_EQ(got.report.iterations, want.report.iterations);
  EXPECT_EQ(got.report.converged, want.report.converged);
  EXPECT_EQ(std::memcmp(&got.report.residual, &want.report.residual, sizeof(Residual)), 0)
      << got.report.residual.l2 << " vs " << want.report.residual.l2;
}

inline void expect_same_bits(const Result& got, const Result& want) {
  if (std::holds_alternative<Grid<float>>(want.solution)) {
    expect_same_bits<float>(got, want);
  } else {
    expect_same_bits<double>(got, want);
  }
}

}  // namespace hetstencil::testing_support
