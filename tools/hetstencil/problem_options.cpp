#include "tools/hetstencil/problem_options.hpp"

#include "tools/hetstencil/option_checks.hpp"

namespace hetstencil::cli {

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
  command->add_option("--nx", o.nx, "interior points per row")->transform(grid_size())->capture_default_str();
  command->add_option("--ny", o.ny, "interior rows (default: nx)")->transform(grid_size());
  command->add_option("--nz", o.nz, "interior planes, with a 3-D stencil (default: nx)")->transform(grid_size());
  command->add_option("--stencil", o.stencil,
                      "a built-in stencil (hetstencil stencils lists them) or a JSON description (docs/stencils.md), "
                      "on every device")
      ->capture_default_str();
  command->add_option("--precision", o.precision, "float or double")->check(one_of({"float", "double"}))
      ->capture_default_str();
  command->add_option("--iters", o.iterations, "iterations to run; with --tol, the most to run")
      ->transform(integer_in(0))->capture_default_str();
  command->add_option("--tol", o.tolerance, "stop once the residual's l2 norm is below TOL times its initial value")
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
  p.nx = o.nx;
  p.ny = o.rows();
  p.nz = o.nz > 0 || p.stencil.dimension == 2 ? o.nz : o.nx;
  p.precision = parse_precision(o.precision);
  p.stop = o.stop();
  return p;
}

Problem make_problem(const ProblemOptions& o, double boundary) {
  Problem p = problem_shape(o);
  p.boundary = Boundary::constant(boundary);
  p.validate();
  return p;
}

}  // namespace hetstencil::cli
