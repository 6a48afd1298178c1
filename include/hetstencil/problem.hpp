/// \file
/// The problem hetstencil solves: A u = f with Dirichlet boundary values on a 2-D
/// (ny x nx) or 3-D (nz x ny x nx) grid with step h, A given by a stencil
/// (hetstencil/stencil.hpp), iterated with Jacobi. The default stencil, poisson5,
/// is -(u_xx + u_yy) = f on an (ny+2) x (nx+2) grid:
///
///   u'[i][j] = 0.25 * (u[i-1][j] + u[i+1][j] + u[i][j-1] + u[i][j+1] + h*h*f[i][j])
///
/// evaluated left to right in the problem's precision, without fused multiply-adds,
/// on every device, so that any split gives the bits of the sequential reference.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hetstencil/export.hpp"
#include "hetstencil/grid.hpp"
#include "hetstencil/stencil.hpp"

namespace hetstencil {

/// The type of the grid's values: float or double.
enum class Precision { Float, Double };

/// "float" or "double".
HETSTENCIL_API std::string to_string(Precision precision);
/// Parses "float"/"single"/"f32" or "double"/"f64"; throws InvalidArgument otherwise.
HETSTENCIL_API Precision parse_precision(const std::string& text);
/// Bytes of one grid value.
HETSTENCIL_API std::size_t value_bytes(Precision precision);
/// Bytes of one grid row of `nx` interior points, its two boundary values included.
HETSTENCIL_API std::size_t row_bytes(std::int64_t nx, Precision precision);

/// The most interior points a grid side may have, and the most bytes a grid
/// (boundary ring included) may take: beyond any machine, and small enough that
/// no count of values or bytes of a grid or its slabs overflows 64 bits.
constexpr std::int64_t kMaxGridSide = std::int64_t(1) << 30;
/// The most bytes of a grid, boundary ring included.
constexpr std::uint64_t kMaxGridBytes = std::uint64_t(1) << 46;
/// Bytes of an (ny+2) x (nx+2) grid. Throws InvalidArgument, naming the sizes
/// and the bounds, when a side is outside 1..kMaxGridSide or the grid exceeds
/// kMaxGridBytes.
HETSTENCIL_API std::uint64_t grid_bytes(std::int64_t nx, std::int64_t ny, Precision precision);
/// Bytes of a grid of `shape`, boundary ring included. Throws InvalidArgument,
/// naming the sizes and the bounds, as grid_bytes(nx, ny, precision) does.
HETSTENCIL_API std::uint64_t grid_bytes(const GridShape& shape, Precision precision);
/// "1234 bytes (1.2 KiB)": a byte count for a message.
HETSTENCIL_API std::string bytes_text(std::uint64_t bytes);

/// A function of the physical coordinates (x, y), x along a row, y down the rows.
using Field = std::function<double(double x, double y)>;
/// A function of the physical coordinates (x, y, z) of a 3-D grid, z across the planes.
using Field3 = std::function<double(double x, double y, double z)>;

/// The right-hand side f.
struct HETSTENCIL_API Source {
  /// Where the values come from.
  enum class Kind {
    Spike,     ///< the unit point load of spike()
    Function,  ///< `function` of (x, y), or `function3` of (x, y, z)
    Grid       ///< `values`
  };
  Kind kind = Kind::Spike;  ///< which of the members below holds f
  Field function;              ///< Kind::Function in 2-D: evaluated once per interior point.
  Field3 function3;            ///< Kind::Function in 3-D: evaluated once per interior point.
  std::vector<double> values;  ///< Kind::Grid: (nz x) ny x nx interior values, row-major.

  /// The default of the original study: a unit point load in the middle of the
  /// domain, s*f = 1 at interior cell ((ny+1)/2, (nx+1)/2) (plane (nz+1)/2 in 3-D,
  /// counting interior cells from 1) and 0 elsewhere. Devices evaluate it
  /// inline, so it costs no memory traffic.
  static Source spike();
  /// f(x, y) = `f` at every interior point of a 2-D grid.
  static Source from_function(Field f);
  /// f(x, y, z) = `f` at every interior point of a 3-D grid.
  static Source from_function_3d(Field3 f);
  /// f given at every interior point: (nz x) ny x nx values, row-major (validate() checks the count).
  static Source from_grid(std::vector<double> interior_values);
};

/// The coefficient grids of a variable stencil (Stencil::variable): c_k for
/// each of its points, in its order, and c_d for its diagonal, so that
/// a_k(p) = w_k c_k(p) and D(p) = d c_d(p) (hetstencil/stencil.hpp). Each is a
/// field over the interior cells, as a Source holds one: a function of the
/// coordinates (Source::from_function, from_function_3d) or (nz x) ny x nx
/// values (Source::from_grid); the spike is not a field. Empty (no points)
/// for a constant stencil.
///
/// ```cpp
/// p.stencil = hetstencil::Stencil::diffusion(3);   // -div(a grad u) = f
/// p.nx = p.ny = p.nz = 64;                         // before: h is the faces' spacing
/// p.coefficients = hetstencil::diffusion_coefficients_3d(p, [](double x, double y, double z) {
///   return 1.0 + x * y * z;
/// });
/// ```
struct HETSTENCIL_API Coefficients {
  std::vector<Source> points;  ///< c_k, one per point of the stencil, in its order
  Source diagonal;             ///< c_d
};

/// Dirichlet values on the grid's outer ring: a constant or a function.
struct HETSTENCIL_API Boundary {
  double value = 0.0;  ///< the value on the whole ring, unless a function is set
  Field function;      ///< when set, used instead of value on a 2-D grid
  Field3 function3;    ///< when set, used instead of value on a 3-D grid

  /// `v` on the whole ring.
  static Boundary constant(double v);
  /// g(x, y) at each point of a 2-D grid's ring.
  static Boundary from_function(Field g);
  /// g(x, y, z) at each point of a 3-D grid's ring.
  static Boundary from_function_3d(Field3 g);
  /// The value at the physical point (x, y) of a 2-D ring.
  double at(double x, double y) const { return function ? function(x, y) : value; }
  /// The value at the physical point (x, y, z) of a 3-D ring.
  double at(double x, double y, double z) const { return function3 ? function3(x, y, z) : value; }
};

/// When to stop. Iterations always stop at max_iterations. With a tolerance > 0
/// the residual is checked every check_every iterations, and the solve stops at
/// the first check where ||f - A u||_2 <= tolerance * ||f - A u_0||_2, or where
/// that norm is infinite or NaN while u_0's is finite (the iteration diverged:
/// no later iterate would meet the tolerance).
struct StopRule {
  std::int64_t max_iterations = 1000;  ///< the most iterations (all of them without a tolerance)
  double tolerance = 0.0;              ///< relative residual to stop at; 0: none
  std::int64_t check_every = 100;      ///< iterations between residual checks (with a tolerance)

  /// Whether a tolerance is set.
  bool uses_tolerance() const { return tolerance > 0.0; }
  /// Whether the residual of iterate t is computed: always at the last iteration;
  /// with a tolerance also at iterate 0 (the baseline) and every check_every.
  bool checks_at(std::int64_t t) const {
    return t == max_iterations || (uses_tolerance() && t % check_every == 0);
  }
  /// The first iterate after t whose residual is checked.
  std::int64_t next_check(std::int64_t t) const {
    if (!uses_tolerance()) return max_iterations;
    return std::min(max_iterations, (t / check_every + 1) * check_every);
  }
};

/// What to solve: the grid, its precision, f, the boundary values and when to
/// stop. Thread safety: a value, safe to copy across threads; its source and
/// boundary functions run on the thread that calls solve().
///
/// ```cpp
/// hetstencil::Problem p;
/// p.nx = 4096;                                   // interior points of a row
/// p.ny = 2048;                                   // interior rows
/// p.precision = hetstencil::Precision::Float;
/// p.source = hetstencil::Source::from_function([](double x, double y) { return x * y; });
/// p.boundary = hetstencil::Boundary::constant(1.0);
/// p.stop.max_iterations = 20000;
/// p.stop.tolerance = 1e-6;                       // stop once the residual fell a millionfold
/// p.validate();                                  // throws InvalidArgument naming what is wrong
/// ```
///
/// A 3-D problem names a 3-D stencil and its planes:
/// ```cpp
/// p.stencil = hetstencil::Stencil::builtin("poisson7");
/// p.nz = 256;                                    // interior planes (z)
/// ```
struct HETSTENCIL_API Problem {
  std::int64_t nx = 0;  ///< interior points along a row (x)
  std::int64_t ny = 0;  ///< interior rows (y)
  std::int64_t nz = 0;  ///< interior planes (z) with a 3-D stencil; 0 (or 1) with a 2-D one
  Precision precision = Precision::Double;  ///< of the grid's values and of every operation
  Stencil stencil = Stencil::builtin("poisson5");  ///< A, the update and the residual
  Source source = Source::spike();          ///< f
  Boundary boundary;                        ///< the Dirichlet values on the ring
  StopRule stop;                            ///< when to stop
  /// The coefficient grids of a variable stencil; empty for a constant one.
  /// validate() checks them where given (a plan or a prediction needs none); a
  /// solve needs them, and checks their values as it evaluates them (finite,
  /// D(p) != 0 in the problem's precision), naming the field and the cell.
  Coefficients coefficients;

  /// Grid step: h = 1 / (longest side + 1), nz counted in 3-D only. A cubic
  /// (square) grid covers the unit cube (square); otherwise the domain is
  /// [0, (nx+1)h] x [0, (ny+1)h] (x [0, (nz+1)h]).
  double h() const;
  /// 2 or 3: the stencil's dimension.
  int dimension() const { return stencil.dimension; }
  /// The grid's sizes: nz = 0 in 2-D, the ring as deep as the stencil's radius.
  GridShape shape() const { return GridShape{dimension() == 3 ? nz : 0, ny, nx, stencil.radius()}; }
  /// Interior units of the split axis: ny rows in 2-D, nz planes in 3-D.
  std::int64_t units() const { return dimension() == 3 ? nz : ny; }
  /// Interior cells, nx * ny (* nz in 3-D).
  std::int64_t cells() const { return nx * ny * (dimension() == 3 ? nz : 1); }
  /// Throws InvalidArgument naming the first thing wrong.
  void validate() const;
};

/// The coefficients of -div(a grad u) = f on p's 2-D grid with
/// Stencil::diffusion(2): the conductivity a at each face of a cell,
/// c_k(p) = a(midpoint of p and p + o_k), and c_d(p) the sum of the cell's four
/// (in the points' order, in double). p's sizes must be set first: they fix h,
/// the faces' spacing.
HETSTENCIL_API Coefficients diffusion_coefficients(const Problem& p, Field a);
/// The same for a 3-D grid with Stencil::diffusion(3): six faces a cell.
HETSTENCIL_API Coefficients diffusion_coefficients_3d(const Problem& p, Field3 a);

}  // namespace hetstencil
