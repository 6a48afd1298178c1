#include "hetstencil/problem.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <utility>

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

std::uint64_t grid_bytes(std::int64_t nx, std::int64_t ny, Precision precision) {
  for (const auto& [name, side] : {std::pair<const char*, std::int64_t>{"nx", nx}, {"ny", ny}}) {
    if (side < 1 || side > kMaxGridSide) {
      HETSTENCIL_THROW(InvalidArgument,
                       std::string(name) + " must be between 1 and 2^30, got " + std::to_string(side));
    }
  }
  // Sides of at most 2^30 + 2 values of 8 bytes: the product stays below 2^64.
  const std::uint64_t bytes =
      static_cast<std::uint64_t>(nx + 2) * static_cast<std::uint64_t>(ny + 2) * value_bytes(precision);
  if (bytes > kMaxGridBytes) {
    HETSTENCIL_THROW(InvalidArgument, "a grid of " + std::to_string(nx) + " x " + std::to_string(ny) + " " +
                                          to_string(precision) + " values takes " + bytes_text(bytes) +
                                          "; a grid may take " + bytes_text(kMaxGridBytes) + " at most");
  }
  return bytes;
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
  auto need = [](bool ok, const std::string& message) {
    if (!ok) HETSTENCIL_THROW(InvalidArgument, message);
  };
  grid_bytes(nx, ny, precision);
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
