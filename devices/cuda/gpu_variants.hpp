// The GPU variants of the original study's chapter V on one GPU: the
// synchronous sweep, the loosely synchronized async2 and async3, and the
// deterministic temporally blocked sweep. Declared without CUDA types.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "devices/variant_grid.hpp"
#include "hetstencil/variant.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/report.hpp"

namespace hetstencil {

/// One problem's grid on one GPU, advanced by any variant. The iterate stays on
/// the GPU between calls, so that a benchmark can step a variant until it is as
/// accurate as another run.
class GpuVariantSolver final : public VariantGrid {
 public:
  /// Copies the problem's initial iterate to CUDA device `gpu`.
  GpuVariantSolver(int gpu, const Problem& problem);
  ~GpuVariantSolver() override;
  GpuVariantSolver(const GpuVariantSolver&) = delete;
  GpuVariantSolver& operator=(const GpuVariantSolver&) = delete;

  void reset() override;
  double advance(const VariantChoice& choice, std::int64_t iterations) override;
  double max_relative_error(const VariantGrid& other) const override;
  Solution download() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hetstencil
