// The problem options that solve, sweep, predict and plan share.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "hetstencil/plan.hpp"
#include "hetstencil/problem.hpp"

namespace hetstencil::cli {

/// The grid's side where --nx is not given: a 2-D grid of doubles of 32 MiB,
/// a 3-D one of 128 MiB (2048 a side would be 64 GiB).
constexpr std::int64_t kDefaultSide = 2048;
constexpr std::int64_t kDefaultSide3d = 256;

struct ProblemOptions {
  std::int64_t nx = 0;  // 0: kDefaultSide, or kDefaultSide3d with a 3-D stencil
  std::int64_t ny = 0;  // 0: as wide as a row
  std::int64_t nz = 0;  // 0: as wide as a row with a 3-D stencil, none with a 2-D one
  std::string stencil = "poisson5";  // a built-in's name or a JSON file
  std::string coefficients;          // a variable stencil's grids: a folder of .npy files (docs/stencils.md)
  std::string precision = "double";
  std::int64_t iterations = 500;
  double tolerance = 0.0;
  std::int64_t check_every = 100;
  std::string variant = "sync";
  int alpha = 8;
  int depth = 4;

  /// Interior points per row of a grid of `dimension`: nx, or its default.
  std::int64_t width(int dimension) const { return nx > 0 ? nx : dimension == 3 ? kDefaultSide3d : kDefaultSide; }
  /// Interior rows of a grid of `dimension`: ny, or as many as a row's points.
  std::int64_t rows(int dimension) const { return ny > 0 ? ny : width(dimension); }
  StopRule stop() const;
  /// How GPUs sweep: the variant with its depth (blocked) or alpha (async).
  VariantChoice variant_choice() const;
};

/// The most interior points a grid may have along a side.
constexpr std::int64_t kMaxGridSize = std::int64_t(1) << 30;
/// Checks a grid side: a whole number from 1 to kMaxGridSize.
CLI::Validator grid_size();

/// Adds --nx, --ny, --nz, --stencil, --coefficients, --precision, --iters, --tol, --check-every, --variant,
/// --alpha and --depth, with the values already in `o` as defaults.
void add_problem_options(CLI::App* command, ProblemOptions& o);
/// Adds --variant, --alpha and --depth alone.
void add_variant_options(CLI::App* command, ProblemOptions& o);

/// The grid, stencil, precision and stop rule of the options (spike source),
/// not validated: the model's commands plan any size without allocating it.
Problem problem_shape(const ProblemOptions& o);
/// The problem of the options (spike source, the boundary value, a variable
/// stencil's coefficient grids read from --coefficients), validated.
Problem make_problem(const ProblemOptions& o, double boundary = 0.0);

}  // namespace hetstencil::cli
