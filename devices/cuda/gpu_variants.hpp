// The GPU variants of the original study's chapter V on one GPU: the
// synchronous sweep, the loosely synchronized async2 and async3, and the
// deterministic temporally blocked sweep. Declared without CUDA types (the
// stub throws NotCompiled).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "hetstencil/plan.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/report.hpp"

namespace hetstencil {

/// One problem's grid on one GPU, advanced by any variant. The iterate stays on
/// the GPU between calls, so that a benchmark can step a variant until it is as
/// accurate as another run.
class GpuVariantSolver {
 public:
  /// Copies the problem's initial iterate to CUDA device `gpu`.
  GpuVariantSolver(int gpu, const Problem& problem);
  ~GpuVariantSolver();
  GpuVariantSolver(const GpuVariantSolver&) = delete;
  GpuVariantSolver& operator=(const GpuVariantSolver&) = delete;

  /// Back to the initial iterate.
  void reset();
  /// Advances by `iterations` sweeps of the variant; returns the GPU time they took.
  double advance(const VariantChoice& choice, std::int64_t iterations);
  /// max |u - other| / max |other| over the grid, both on this GPU.
  double max_relative_error(const GpuVariantSolver& other) const;
  /// The current iterate, boundary included.
  Solution download() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hetstencil
