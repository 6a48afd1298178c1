#include "tools/hetstencil/problem_options.hpp"

#include <spdlog/fmt/fmt.h>

#include "tools/hetstencil/option_checks.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/npy.hpp"

namespace hetstencil::cli {
namespace {

// One coefficient field from `folder`/`file`: float64 values of p's interior, in its shape.
Source coefficient_file(const Problem& p, const std::string& folder, const std::string& file) {
  const std::string path = folder + "/" + file;
  const Grid<double> grid = read_npy<double>(path, 0);
  const bool three_d = p.dimension() == 3;
  const auto shape_text = [&](std::int64_t nz, std::int64_t ny, std::int64_t nx, bool planes) {
    return "(" + (planes ? std::to_string(nz) + ", " : std::string()) + std::to_string(ny) + ", " + std::to_string(nx) + ")";
  };
  const bool file_3d = grid.shape().nz > 0;
  if (file_3d != three_d || grid.shape().ny != p.ny || grid.shape().nx != p.nx || (three_d && grid.shape().nz != p.nz)) {
    HETSTENCIL_THROW(InvalidArgument, "the coefficient grid " + as_typed(path) + " has the shape " +
                                          shape_text(grid.shape().nz, grid.shape().ny, grid.shape().nx, file_3d) +
                                          "; the stencil '" + p.stencil.name + "' on this grid needs its interior, " +
                                          shape_text(p.nz, p.ny, p.nx, three_d));
  }
  return Source::from_grid(grid.values());
}

// A variable stencil's grids from --coefficients: point<k>.npy for each point, diagonal.npy.
void read_coefficients(Problem& p, const std::string& folder) {
  if (!p.stencil.variable) {
    if (folder.empty()) return;
    HETSTENCIL_THROW(InvalidArgument, "--coefficients gives a variable stencil's grids; the stencil '" +
                                          p.stencil.name + "' is not variable");
  }
  if (folder.empty()) {
    HETSTENCIL_THROW(InvalidArgument, "the stencil '" + p.stencil.name +
                                          "' is variable: give its coefficient grids with --coefficients DIR "
                                          "(point0.npy .. point" + std::to_string(p.stencil.points.size() - 1) +
                                          ".npy and diagonal.npy; docs/stencils.md)");
  }
  for (std::size_t k = 0; k < p.stencil.points.size(); ++k) {
    p.coefficients.points.push_back(coefficient_file(p, folder, "point" + std::to_string(k) + ".npy"));
  }
  p.coefficients.diagonal = coefficient_file(p, folder, "diagonal.npy");
}

}  // namespace

StopRule ProblemOptions::stop() const {
  StopRule s;
  s.max_iterations = iterations;
  s.tolerance = tolerance;
  s.check_every = check_every;
  return s;
}

VariantChoice ProblemOptions::variant_choice() const {
  const Variant v = parse_variant(variant);
  return {v, v == Variant::Blocked ? depth : alpha};
}

CLI::Validator grid_size() { return integer_in(1, kMaxGridSize); }

void add_problem_options(CLI::App* command, ProblemOptions& o) {
  command->add_option("--nx", o.nx,
                      fmt::format("interior points per row (default: {}, or {} with a 3-D stencil)", kDefaultSide,
                                  kDefaultSide3d))
      ->transform(grid_size());
  command->add_option("--ny", o.ny, "interior rows (default: nx)")->transform(grid_size());
  command->add_option("--nz", o.nz, "interior planes, with a 3-D stencil (default: nx)")->transform(grid_size());
  command->add_option("--stencil", o.stencil,
                      "a built-in stencil (hetstencil stencils lists them) or a JSON description (docs/stencils.md), "
                      "on every device")
      ->capture_default_str();
  command->add_option("--coefficients", o.coefficients,
                      "a variable stencil's coefficient grids: a folder of point0.npy, point1.npy, ... (one per "
                      "point, in the stencil's order) and diagonal.npy, float64 arrays of the interior");
  command->add_option("--precision", o.precision, "float or double")->check(one_of({"float", "double"}))
      ->capture_default_str();
  command->add_option("--iters", o.iterations, "iterations to run; with --tol, the most to run")
      ->transform(integer_in(0))->capture_default_str();
  command->add_option("--tol", o.tolerance, "stop once the residual's l2 norm is below TOL times its initial value, or is no longer finite (the iteration diverged)")
      ->transform(positive_number());
  command->add_option("--check-every", o.check_every, "iterations between residual checks with --tol")
      ->transform(integer_in(1))->capture_default_str();
  add_variant_options(command, o);
}

void add_variant_options(CLI::App* command, ProblemOptions& o) {
  command->add_option("--variant", o.variant,
                      "how GPUs sweep: sync, blocked (K sweeps a pass over K-deep ghost zones, the same bits; across "
                      "devices K rows are exchanged every K iterations), or on one GPU alone async2 or async3 "
                      "(loosely synchronized: they converge, their bits are not defined)")
      ->check(one_of({"sync", "async2", "async3", "blocked"}))->capture_default_str();
  command->add_option("--alpha", o.alpha, "async2/async3: sweeps of a tile between global synchronizations")
      ->transform(integer_in(1, kMaxVariantSweeps))->capture_default_str();
  command->add_option("--depth", o.depth, "blocked: sweeps per pass, the ghost zones' depth, iterations per exchange")
      ->transform(integer_in(1, kMaxBlockedDepth))->capture_default_str();
}

Problem problem_shape(const ProblemOptions& o) {
  Problem p;
  p.stencil = stencil_named(o.stencil);
  const int dimension = p.stencil.dimension;
  p.nx = o.width(dimension);
  p.ny = o.rows(dimension);
  p.nz = o.nz > 0 || dimension == 2 ? o.nz : p.nx;
  p.precision = parse_precision(o.precision);
  p.stop = o.stop();
  return p;
}

Problem make_problem(const ProblemOptions& o, double boundary) {
  Problem p = problem_shape(o);
  p.boundary = Boundary::constant(boundary);
  read_coefficients(p, o.coefficients);
  p.validate();
  return p;
}

}  // namespace hetstencil::cli
