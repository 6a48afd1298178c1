#include "hetstencil/stencil.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <utility>

#include "core/stencil_check.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

std::string number_text(double x) {
  std::ostringstream text;
  text.precision(17);
  text << x;
  return text.str();
}

std::string offset_text(const StencilPoint& p, int dimension) {
  std::string text = "(" + std::to_string(p.dx) + ", " + std::to_string(p.dy);
  if (dimension == 3) text += ", " + std::to_string(p.dz);
  return text + ")";
}

// The nearest neighbours along each axis, slowest axis first, -1 before +1: for
// poisson5 north (i-1), south (i+1), west (j-1), east (j+1), the order in which
// the kernels add them (core/stencil_update.hpp Poisson5).
std::vector<StencilPoint> star(int dimension, int reach, const std::vector<double>& weight_at) {
  std::vector<StencilPoint> points;
  for (int axis = dimension == 3 ? 0 : 1; axis < 3; ++axis) {
    for (int step = -reach; step <= reach; ++step) {
      if (step == 0) continue;
      StencilPoint p;
      (axis == 0 ? p.dz : axis == 1 ? p.dy : p.dx) = step;
      p.weight = weight_at[static_cast<std::size_t>(std::abs(step))];
      points.push_back(p);
    }
  }
  return points;
}

// Every offset of the box of radius 1 but the centre, slowest axis outermost,
// weighted by how many axes it moves along (1: face, 2: edge, 3: corner).
std::vector<StencilPoint> box(int dimension, const std::vector<double>& weight_by_axes) {
  std::vector<StencilPoint> points;
  const int z_reach = dimension == 3 ? 1 : 0;
  for (int dz = -z_reach; dz <= z_reach; ++dz) {
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        const int axes = (dx != 0) + (dy != 0) + (dz != 0);
        if (axes == 0) continue;
        points.push_back({dx, dy, dz, weight_by_axes[static_cast<std::size_t>(axes)]});
      }
    }
  }
  return points;
}

Stencil make(std::string name, int dimension, std::vector<StencilPoint> points, double diagonal, double h2_factor) {
  Stencil s;
  s.name = std::move(name);
  s.dimension = dimension;
  s.points = std::move(points);
  s.diagonal = diagonal;
  s.source_scale = SourceScale{h2_factor, true};
  return s;
}

}  // namespace

int Stencil::radius() const {
  int r = 0;
  for (const StencilPoint& p : points) r = std::max({r, std::abs(p.dx), std::abs(p.dy), std::abs(p.dz)});
  return r;
}

std::string stencil_fault(const Stencil& s) {
  if (s.dimension != 2 && s.dimension != 3) return "dimension: must be 2 or 3, got " + std::to_string(s.dimension);
  if (s.points.empty()) return "points: none given; a stencil needs at least one neighbour";
  for (std::size_t k = 0; k < s.points.size(); ++k) {
    const StencilPoint& p = s.points[k];
    const std::string field = "points[" + std::to_string(k) + "]";
    for (const auto& [axis, offset] : {std::pair<const char*, int>{"dx", p.dx}, {"dy", p.dy}, {"dz", p.dz}}) {
      if (std::abs(offset) > kMaxStencilRadius) {
        return field + ".offset: " + axis + " = " + std::to_string(offset) + " is beyond radius " +
               std::to_string(kMaxStencilRadius);
      }
    }
    if (s.dimension == 2 && p.dz != 0) {
      return field + ".offset: dz = " + std::to_string(p.dz) + " in a 2-D stencil";
    }
    if (p.dx == 0 && p.dy == 0 && p.dz == 0) {
      return field + ".offset: " + offset_text(p, s.dimension) +
             " is the centre; its coefficient is the stencil's 'diagonal'";
    }
    if (!std::isfinite(p.weight)) return field + ".weight: must be finite, got " + number_text(p.weight);
    for (std::size_t earlier = 0; earlier < k; ++earlier) {
      const StencilPoint& q = s.points[earlier];
      if (q.dx == p.dx && q.dy == p.dy && q.dz == p.dz) {
        return field + ".offset: " + offset_text(p, s.dimension) + " repeats points[" + std::to_string(earlier) + "]";
      }
    }
  }
  if (!std::isfinite(s.diagonal) || s.diagonal == 0.0) {
    return "diagonal: must be finite and non-zero, got " + number_text(s.diagonal);
  }
  if (!std::isfinite(s.source_scale.factor) || s.source_scale.factor == 0.0) {
    return "source_scale.factor: must be finite and non-zero, got " + number_text(s.source_scale.factor);
  }
  return "";
}

void Stencil::validate() const {
  const std::string fault = stencil_fault(*this);
  if (!fault.empty()) HETSTENCIL_THROW(InvalidArgument, "stencil '" + name + "': " + fault);
}

bool Stencil::operator==(const Stencil& other) const {
  return name == other.name && dimension == other.dimension && points == other.points &&
         diagonal == other.diagonal && source_scale == other.source_scale && variable == other.variable;
}

std::vector<std::string> builtin_stencil_names() { return {"poisson5", "box9", "poisson7", "box27", "star4"}; }

Stencil Stencil::builtin(const std::string& name) {
  // Second-order Laplacians times h^2 (poisson5, poisson7), the compact 9- and
  // 27-point Laplacians times 6 h^2 and 30 h^2, and the 8th-order central
  // second difference (-9, 128, -1008, 8064, -14350, ...) / 5040 along each axis:
  // integer weights, so every built-in is exact in float and double.
  if (name == "poisson5") return make(name, 2, star(2, 1, {0, 1}), 4, 1);
  if (name == "box9") return make(name, 2, box(2, {0, 4, 1}), 20, 6);
  if (name == "poisson7") return make(name, 3, star(3, 1, {0, 1}), 6, 1);
  if (name == "box27") return make(name, 3, box(3, {0, 14, 3, 1}), 128, 30);
  if (name == "star4") return make(name, 3, star(3, 4, {0, 8064, -1008, 128, -9}), 3 * 14350, 5040);
  std::string names;
  for (const std::string& n : builtin_stencil_names()) names += (names.empty() ? "" : ", ") + n;
  HETSTENCIL_THROW(InvalidArgument, "no built-in stencil is called " + as_typed(name) + " (built-ins: " + names + ")");
}

Stencil Stencil::diffusion(int dimension) {
  if (dimension != 2 && dimension != 3) {
    HETSTENCIL_THROW(InvalidArgument, "a diffusion stencil is 2-D or 3-D, not " + std::to_string(dimension) + "-D");
  }
  // Unit weights and diagonal: the faces' conductivities are all in the coefficients.
  Stencil s = make(dimension == 3 ? "diffusion7" : "diffusion5", dimension, star(dimension, 1, {0, 1}), 1, 1);
  s.variable = true;
  return s;
}

double jacobi_growth(const Stencil& stencil) {
  if (stencil.variable) return std::nan("");
  const int steps = stencil.dimension == 3 ? 8 : 16;  // samples of a half axis
  const double pi = std::acos(-1.0);
  const int z_steps = stencil.dimension == 3 ? steps : 0;
  double most = 0.0;
  for (int kz = -z_steps; kz <= z_steps; ++kz) {
    for (int ky = -steps; ky <= steps; ++ky) {
      for (int kx = -steps; kx <= steps; ++kx) {
        double re = 0.0, im = 0.0;
        for (const StencilPoint& p : stencil.points) {
          const double phase = pi * (kx * p.dx + ky * p.dy + kz * p.dz) / steps;
          re += p.weight * std::cos(phase);
          im += p.weight * std::sin(phase);
        }
        most = std::max(most, std::hypot(re, im));
      }
    }
  }
  return most / std::fabs(stencil.diagonal);
}

bool is_poisson5(const Stencil& stencil) {
  Stencil poisson5 = Stencil::builtin("poisson5");
  poisson5.name = stencil.name;  // a description of poisson5 under another name is poisson5
  return stencil == poisson5;
}

}  // namespace hetstencil
