// hetstencil project: the model's iteration time over 1 to many nodes of a
// cluster profile, for strong and weak scaling, with the assumptions it rests on.
#include <memory>
#include <string>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "hetstencil/hetstencil.hpp"
#include "tools/hetstencil/commands.hpp"
#include "tools/hetstencil/problem_options.hpp"

namespace hetstencil::cli {
namespace {

struct ProjectOptions {
  std::string cluster;
  std::vector<int> nodes{1, 2, 4, 8, 16, 32, 64};
  ProblemOptions problem;
};

int run_project(const ProjectOptions& o) {
  const Problem problem = problem_shape(o.problem);
  const Projection p = project(o.cluster, problem, o.nodes, o.problem.variant_choice());
  fmt::print("{} x {} {}, {}: the model's iteration over the nodes of {}\n", problem.nx, problem.ny,
             to_string(problem.precision), o.problem.variant, o.cluster);
  fmt::print("{:>5} | {:>12} {:>8} {:>10} | {:>14} {:>10}\n", "", "strong", "", "", "weak (a grid", "a node)");
  fmt::print("{:>5} | {:>12} {:>8} {:>10} | {:>14} {:>10}\n", "nodes", "ms/iter", "speed-up", "efficiency", "ms/iter",
             "efficiency");
  for (const ProjectedNodes& r : p.rows) {
    fmt::print("{:>5} | {:>12.4f} {:>8.2f} {:>9.1f}% | {:>14.4f} {:>9.1f}%\n", r.nodes, r.iteration_s * 1e3, r.speedup,
               100.0 * r.efficiency, r.weak_iteration_s * 1e3, 100.0 * r.weak_efficiency);
  }
  fmt::print("assumed:\n");
  for (const std::string& a : p.assumptions) fmt::print("  {}\n", a);
  return 0;
}

}  // namespace

Command add_project_command(CLI::App& app) {
  auto o = std::make_shared<ProjectOptions>();
  o->problem.precision = "float";
  o->problem.nx = kDefaultSide;
  CLI::App* sub = app.add_subcommand(
      "project", "The model's iteration time over many nodes of a cluster profile: strong and weak scaling");
  sub->add_option("--cluster", o->cluster, "a cluster profile (JSON, schema hetstencil-cluster)")->required();
  sub->add_option("--nodes", o->nodes, "node counts, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  sub->add_option("--nx", o->problem.nx, "interior points a row")->check(grid_size())->capture_default_str();
  sub->add_option("--ny", o->problem.ny, "interior rows (default nx): over all nodes (strong), on each (weak)")
      ->check(grid_size());
  sub->add_option("--precision", o->problem.precision, "float or double")
      ->check(CLI::IsMember({"float", "double"}))
      ->capture_default_str();
  add_variant_options(sub, o->problem);
  return [o] { return run_project(*o); };
}

}  // namespace hetstencil::cli
