// hetstencil stencils: the built-in stencils, or one description (built-in or
// JSON file) with its radius, points and cost per cell.
#include <memory>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "hetstencil/hetstencil.hpp"
#include "tools/hetstencil/commands.hpp"

namespace hetstencil::cli {
namespace {

struct StencilsOptions {
  std::string stencil;  // "": list the built-ins
  bool json = false;
};

// A Jacobi sweep at best reads u and writes u' once per cell; each point costs a
// multiply and an add, s f one add and d one division.
std::string cost_text(const Stencil& s) {
  return fmt::format("{} flops, {} bytes float / {} bytes double per cell at best (u read, u' written)",
                     2 * s.points.size() + 1, 2 * value_bytes(Precision::Float), 2 * value_bytes(Precision::Double));
}

std::string scale_text(const SourceScale& s) {
  return s.times_h2 ? (s.factor == 1.0 ? std::string("h^2") : fmt::format("{:g} h^2", s.factor))
                    : fmt::format("{:g}", s.factor);
}

int run_stencils(const StencilsOptions& o) {
  if (o.stencil.empty()) {
    fmt::print("{:<10} {:>9} {:>6} {:>6}  {}\n", "stencil", "dimension", "radius", "points", "d, s");
    for (const std::string& name : builtin_stencil_names()) {
      const Stencil s = Stencil::builtin(name);
      fmt::print("{:<10} {:>8}D {:>6} {:>6}  {:g}, {}\n", name, s.dimension, s.radius(), s.points.size(), s.diagonal,
                 scale_text(s.source_scale));
    }
    fmt::print("A JSON file describes any other (docs/stencils.md); hetstencil stencils NAME|FILE shows one.\n");
    return 0;
  }
  const Stencil s = stencil_named(o.stencil);
  if (o.json) {
    fmt::print("{}", stencil_json(s));
    return 0;
  }
  fmt::print("{}: {}-D, radius {}, {} points, d = {:g}, s = {}\n", s.name, s.dimension, s.radius(), s.points.size(),
             s.diagonal, scale_text(s.source_scale));
  if (s.variable) {
    fmt::print("variable: u'(p) = (sum_k w_k c_k(p) u(p + o_k) + s f(p)) / (d c_d(p)), c_k and c_d the problem's "
               "coefficient grids, added in this order:\n");
  } else {
    fmt::print("u'(p) = (sum_k w_k u(p + o_k) + s f(p)) / d, added in this order:\n");
  }
  for (std::size_t k = 0; k < s.points.size(); ++k) {
    const StencilPoint& p = s.points[k];
    const std::string offset = s.dimension == 3 ? fmt::format("({}, {}, {})", p.dx, p.dy, p.dz)
                                                : fmt::format("({}, {})", p.dx, p.dy);
    fmt::print("  {:>3}  {:<12} {:g}\n", k, offset, p.weight);
  }
  fmt::print("{}\n", cost_text(s));
  if (!s.variable) {
    const double growth = jacobi_growth(s);
    fmt::print("Jacobi: a sweep multiplies an error mode by up to {:.4f}: {}\n", growth,
               sweeps_diverge(growth) ? "its sweeps diverge" : "its sweeps do not grow the error");
  }
  return 0;
}

}  // namespace

Command add_stencils_command(CLI::App& app) {
  auto o = std::make_shared<StencilsOptions>();
  CLI::App* sub = app.add_subcommand("stencils", "List the built-in stencils, or show one (built-in or JSON file)");
  sub->add_option("stencil", o->stencil, "a built-in's name or a JSON description to show");
  sub->add_flag("--json", o->json, "print the description as JSON (schema hetstencil-stencil)");
  sub->footer("Offsets are (dx, dy) or (dx, dy, dz): dx along a row, dy across rows, dz across planes.");
  return [o] { return run_stencils(*o); };
}

}  // namespace hetstencil::cli
