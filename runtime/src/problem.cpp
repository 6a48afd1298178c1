#include "hetstencil/problem.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

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

Source Source::spike() { return Source{}; }

Source Source::from_function(Field f) {
  Source s;
  s.kind = Kind::Function;
  s.function = std::move(f);
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

double Problem::h() const { return 1.0 / static_cast<double>(std::max(nx, ny) + 1); }

void Problem::validate() const {
  // Large enough for any machine, small enough that (nx+2)*(ny+2) cannot overflow.
  constexpr std::int64_t kMaxSide = std::int64_t(1) << 30;
  auto need = [](bool ok, const std::string& message) {
    if (!ok) HETSTENCIL_THROW(InvalidArgument, message);
  };
  need(nx >= 1 && nx <= kMaxSide, "nx must be between 1 and 2^30, got " + std::to_string(nx));
  need(ny >= 1 && ny <= kMaxSide, "ny must be between 1 and 2^30, got " + std::to_string(ny));
  need(stop.max_iterations >= 0, "the iteration count must be >= 0, got " + std::to_string(stop.max_iterations));
  need(std::isfinite(stop.tolerance) && stop.tolerance >= 0.0,
       "the tolerance must be a finite number > 0 (or 0 for none), got " + std::to_string(stop.tolerance));
  need(stop.check_every >= 1, "the residual check interval must be >= 1, got " + std::to_string(stop.check_every));
  need(source.kind != Source::Kind::Function || static_cast<bool>(source.function),
       "the right-hand side is a function but none was given");
  need(source.kind != Source::Kind::Grid || static_cast<std::int64_t>(source.values.size()) == nx * ny,
       "the right-hand side grid has " + std::to_string(source.values.size()) + " values; an " + std::to_string(ny) +
           " x " + std::to_string(nx) + " interior needs " + std::to_string(nx * ny));
  need(std::isfinite(boundary.value), "the boundary value must be finite");
}

}  // namespace hetstencil
