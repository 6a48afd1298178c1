#include "hetstencil/problem.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <utility>

#include "core/source_term.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {

std::string to_string(Precision precision) { return precision == Precision::Float ? "float" : "double"; }

Precision parse_precision(const std::string& text) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (t == "float" || t == "single" || t == "f32" || t == "fp32") return Precision::Float;
  if (t == "double" || t == "f64" || t == "fp64") return Precision::Double;
  HETSTENCIL_THROW(InvalidArgument, "unknown precision '" + text + "' (expected float or double)");
}

std::size_t value_bytes(Precision precision) { return precision == Precision::Float ? sizeof(float) : sizeof(double); }

std::size_t row_bytes(std::int64_t nx, Precision precision) {
  return static_cast<std::size_t>(nx + 2) * value_bytes(precision);
}

std::uint64_t grid_bytes(const GridShape& shape, Precision precision) {
  const bool three_d = shape.nz > 0;
  for (const auto& [name, side] :
       {std::pair<const char*, std::int64_t>{"nx", shape.nx}, {"ny", shape.ny}, {"nz", three_d ? shape.nz : 1}}) {
    if (side < 1 || side > kMaxGridSide) {
      HETSTENCIL_THROW(InvalidArgument,
                       std::string(name) + " must be between 1 and 2^30, got " + std::to_string(side));
    }
  }
  // Each side is at most 2^30 + 8 values: a plane's count of bytes stays below
  // 2^64, and a grid's below 2^128.
  const unsigned __int128 exact = static_cast<unsigned __int128>(shape.rows()) *
                                  static_cast<unsigned __int128>(shape.cols()) *
                                  static_cast<unsigned __int128>(shape.planes()) * value_bytes(precision);
  const bool beyond_64_bits = exact > static_cast<unsigned __int128>(UINT64_MAX);
  const std::uint64_t bytes = beyond_64_bits ? UINT64_MAX : static_cast<std::uint64_t>(exact);
  if (bytes > kMaxGridBytes) {
    std::string sizes = std::to_string(shape.nx) + " x " + std::to_string(shape.ny);
    if (three_d) sizes += " x " + std::to_string(shape.nz);
    HETSTENCIL_THROW(InvalidArgument, "a grid of " + sizes + " " + to_string(precision) + " values takes " +
                                          (beyond_64_bits ? std::string("more than 2^64 bytes") : bytes_text(bytes)) +
                                          "; a grid may take " + bytes_text(kMaxGridBytes) + " at most");
  }
  return bytes;
}

std::uint64_t grid_bytes(std::int64_t nx, std::int64_t ny, Precision precision) {
  return grid_bytes(GridShape{0, ny, nx, 1}, precision);
}

std::string bytes_text(std::uint64_t bytes) {
  static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double scaled = static_cast<double>(bytes);
  int unit = 0;
  while (scaled >= 1024.0 && unit < 6) {
    scaled /= 1024.0;
    ++unit;
  }
  if (unit == 0) return std::to_string(bytes) + " bytes";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", scaled, units[unit]);
  return std::to_string(bytes) + " bytes (" + text + ")";
}

Source Source::spike() { return Source{}; }

Source Source::from_function(Field f) {
  Source s;
  s.kind = Kind::Function;
  s.function = std::move(f);
  return s;
}

Source Source::from_function_3d(Field3 f) {
  Source s;
  s.kind = Kind::Function;
  s.function3 = std::move(f);
  return s;
}

Source Source::from_grid(std::vector<double> interior_values) {
  Source s;
  s.kind = Kind::Grid;
  s.values = std::move(interior_values);
  return s;
}

Boundary Boundary::constant(double v) {
  Boundary b;
  b.value = v;
  return b;
}

Boundary Boundary::from_function(Field g) {
  Boundary b;
  b.function = std::move(g);
  return b;
}

Boundary Boundary::from_function_3d(Field3 g) {
  Boundary b;
  b.function3 = std::move(g);
  return b;
}

double Problem::h() const {
  return 1.0 / static_cast<double>(std::max({nx, ny, dimension() == 3 ? nz : 0}) + 1);
}

void Problem::validate() const {
  auto need = [](bool ok, const std::string& message) {
    if (!ok) HETSTENCIL_THROW(InvalidArgument, message);
  };
  stencil.validate();
  if (dimension() == 3) {
    need(nz >= 1, "the stencil '" + stencil.name + "' is 3-D but the problem has nz = " + std::to_string(nz) +
                      " planes; a 3-D stencil needs nz >= 1");
  } else {
    need(nz == 0 || nz == 1, "the stencil '" + stencil.name + "' is 2-D but the problem has nz = " +
                                 std::to_string(nz) + " planes; a 2-D stencil takes nz = 0 (or 1)");
  }
  grid_bytes(shape(), precision);
  need(stop.max_iterations >= 0, "the iteration count must be >= 0, got " + std::to_string(stop.max_iterations));
  need(std::isfinite(stop.tolerance) && stop.tolerance >= 0.0,
       "the tolerance must be a finite number > 0 (or 0 for none), got " + std::to_string(stop.tolerance));
  need(stop.check_every >= 1, "the residual check interval must be >= 1, got " + std::to_string(stop.check_every));
  const bool three_d = dimension() == 3;
  const char* kind = three_d ? "3-D" : "2-D";
  need(source.kind != Source::Kind::Function || static_cast<bool>(three_d ? bool(source.function3) : bool(source.function)),
       std::string("the right-hand side is a function but no function of the ") + kind +
           " coordinates was given (the stencil '" + stencil.name + "' is " + kind + ")");
  const std::string interior =
      (three_d ? std::to_string(nz) + " x " : std::string()) + std::to_string(ny) + " x " + std::to_string(nx);
  need(source.kind != Source::Kind::Grid || static_cast<std::int64_t>(source.values.size()) == cells(),
       "the right-hand side grid has " + std::to_string(source.values.size()) + " values; an " + interior +
           " interior needs " + std::to_string(cells()));
  need(std::isfinite(boundary.value), "the boundary value must be finite");
  check_coefficients(*this, false);
}

void check_coefficients(const Problem& p, bool required) {
  const Coefficients& c = p.coefficients;
  const std::string stencil = "the stencil '" + p.stencil.name + "'";
  if (!p.stencil.variable) {
    if (!c.points.empty() || c.diagonal.kind != Source::Kind::Spike) {
      HETSTENCIL_THROW(InvalidArgument, "the problem has coefficient grids but " + stencil +
                                            " is not variable (Stencil::variable)");
    }
    return;
  }
  if (!required && c.points.empty() && c.diagonal.kind == Source::Kind::Spike) return;
  if (c.points.size() != p.stencil.points.size()) {
    HETSTENCIL_THROW(InvalidArgument, stencil + " is variable with " + std::to_string(p.stencil.points.size()) +
                                          " points but the problem has " + std::to_string(c.points.size()) +
                                          " coefficient grids (coefficients.points): one per point");
  }
  const bool three_d = p.dimension() == 3;
  const std::string interior = (three_d ? std::to_string(p.nz) + " x " : std::string()) + std::to_string(p.ny) +
                               " x " + std::to_string(p.nx);
  const auto check = [&](const Source& field, const std::string& name) {
    const std::string what = stencil + ": coefficients." + name;
    switch (field.kind) {
      case Source::Kind::Spike:
        HETSTENCIL_THROW(InvalidArgument, what + " is not set (a function or a grid of the interior, not the spike)");
      case Source::Kind::Function:
        if (!(three_d ? bool(field.function3) : bool(field.function))) {
          HETSTENCIL_THROW(InvalidArgument, what + " is a function but no function of the " +
                                                (three_d ? "3-D" : "2-D") + " coordinates was given");
        }
        return;
      case Source::Kind::Grid:
        if (static_cast<std::int64_t>(field.values.size()) != p.cells()) {
          HETSTENCIL_THROW(InvalidArgument, what + " has " + std::to_string(field.values.size()) +
                                                " values; an " + interior + " interior needs " +
                                                std::to_string(p.cells()));
        }
        return;
    }
  };
  for (std::size_t k = 0; k < c.points.size(); ++k) check(c.points[k], "points[" + std::to_string(k) + "]");
  check(c.diagonal, "diagonal");
}


Coefficients diffusion_coefficients(const Problem& p, Field a) {
  const double h = p.h();
  Coefficients c;
  const std::vector<StencilPoint> faces = Stencil::diffusion(2).points;
  for (const StencilPoint& o : faces) {
    c.points.push_back(Source::from_function([a, o, h](double x, double y) {
      return a(x + 0.5 * h * o.dx, y + 0.5 * h * o.dy);
    }));
  }
  c.diagonal = Source::from_function([a, faces, h](double x, double y) {
    double sum = 0.0;
    for (const StencilPoint& o : faces) sum += a(x + 0.5 * h * o.dx, y + 0.5 * h * o.dy);
    return sum;
  });
  return c;
}

Coefficients diffusion_coefficients_3d(const Problem& p, Field3 a) {
  const double h = p.h();
  Coefficients c;
  const std::vector<StencilPoint> faces = Stencil::diffusion(3).points;
  for (const StencilPoint& o : faces) {
    c.points.push_back(Source::from_function_3d([a, o, h](double x, double y, double z) {
      return a(x + 0.5 * h * o.dx, y + 0.5 * h * o.dy, z + 0.5 * h * o.dz);
    }));
  }
  c.diagonal = Source::from_function_3d([a, faces, h](double x, double y, double z) {
    double sum = 0.0;
    for (const StencilPoint& o : faces) sum += a(x + 0.5 * h * o.dx, y + 0.5 * h * o.dy, z + 0.5 * h * o.dz);
    return sum;
  });
  return c;
}

}  // namespace hetstencil
