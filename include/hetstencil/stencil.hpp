/// \file
/// A stencil as a description: the points a cell's update reads, their weights,
/// the centre (diagonal) coefficient and the scale of the right-hand side. The
/// Jacobi update of cell p is
///
///   u'(p) = (sum_k w_k u(p + o_k) + s f(p)) / d
///
/// with the sum taken in the order the description lists its points, starting
/// from the first term, in the problem's precision (weights, d and s f rounded
/// to it) and without fused multiply-adds. The residual of a cell is
/// s f - (d u(p) - sum_k w_k u(p + o_k)), the same sum in the same order.
///
/// A variable stencil (`variable`, as in div(a grad u)) multiplies each weight
/// and the diagonal by a coefficient of the cell, c_k(p) and c_d(p), given by the
/// problem (Problem::coefficients). Its update is
///
///   u'(p) = (sum_k a_k(p) u(p + o_k) + s f(p)) / D(p),
///   a_k(p) = w_k c_k(p),  D(p) = d c_d(p)
///
/// with a_k and D computed once in double and rounded to the problem's
/// precision, then the same operations in the same order as a constant stencil.
///
/// ```cpp
/// hetstencil::Stencil box = hetstencil::Stencil::builtin("box9");
/// hetstencil::Stencil mine = hetstencil::read_stencil("examples/stencils/cross9.json");
/// mine.validate();   // throws InvalidArgument naming the field, e.g. "points[3].offset: ..."
/// ```
#pragma once

#include <string>
#include <vector>

#include "hetstencil/export.hpp"

namespace hetstencil {

/// The farthest a point may lie from the centre along any axis.
constexpr int kMaxStencilRadius = 4;

/// One point of a stencil: its offset from the updated cell and its weight.
struct HETSTENCIL_API StencilPoint {
  int dx = 0;           ///< along a row (x), -4..4
  int dy = 0;           ///< across rows (y), -4..4
  int dz = 0;           ///< across planes (z), -4..4; 0 in a 2-D stencil
  double weight = 1.0;  ///< w_k, finite

  /// Same offset and weight.
  bool operator==(const StencilPoint& other) const {
    return dx == other.dx && dy == other.dy && dz == other.dz && weight == other.weight;
  }
};

/// The scale s of the right-hand side: factor * h^2 (times_h2) or factor alone.
struct HETSTENCIL_API SourceScale {
  double factor = 1.0;  ///< finite, non-zero
  bool times_h2 = true;  ///< whether s = factor * h * h (else s = factor)

  /// s for grid step h: factor * (h * h), or factor.
  double at(double h) const { return times_h2 ? factor * (h * h) : factor; }
  /// Same factor and kind.
  bool operator==(const SourceScale& other) const {
    return factor == other.factor && times_h2 == other.times_h2;
  }
};

/// A Jacobi-like stencil (see the file's comment for its update). A value:
/// safe to copy across threads. Built-ins come from builtin(), descriptions in
/// JSON from read_stencil()/parse_stencil() (docs/stencils.md).
struct HETSTENCIL_API Stencil {
  std::string name;                  ///< what messages and reports call it
  int dimension = 2;                 ///< 2 or 3
  std::vector<StencilPoint> points;  ///< the neighbours, in the order the update adds them
  double diagonal = 0.0;             ///< d, the centre's coefficient: finite, non-zero
  SourceScale source_scale;          ///< s, h^2 unless set
  /// Whether each weight and the diagonal are multiplied by a coefficient grid
  /// of the problem (Problem::coefficients): div(a grad u) and the like.
  bool variable = false;

  /// The farthest any point lies from the centre along any axis (the depth of
  /// the boundary ring and of the halos).
  int radius() const;
  /// Throws InvalidArgument naming the stencil, the field and the point index
  /// of the first thing wrong (e.g. "points[3].offset: dx = 5 is beyond radius 4").
  void validate() const;
  /// Same name, dimension, points in the same order, diagonal, source scale and variability.
  bool operator==(const Stencil& other) const;
  /// Not operator==.
  bool operator!=(const Stencil& other) const { return !(*this == other); }

  /// The built-in stencil called `name` (builtin_stencil_names()); throws
  /// InvalidArgument naming the built-ins otherwise.
  static Stencil builtin(const std::string& name);
  /// The variable stencil of -div(a grad u) = f in `dimension` (2 or 3) dimensions:
  /// poisson5's (poisson7's) points with weights 1 and diagonal 1, variable,
  /// s = h^2, named "diffusion5" ("diffusion7"). Its coefficients come from
  /// diffusion_coefficients() (hetstencil/problem.hpp).
  static Stencil diffusion(int dimension);
};

/// Whether `stencil` is poisson5 by value (under any name; a variable stencil is not): the stencil every
/// backend has a kernel for and the model has curves of, for now.
HETSTENCIL_API bool is_poisson5(const Stencil& stencil);

/// The most one Jacobi sweep of a constant stencil multiplies an error mode
/// e^(i theta.p) by: max over theta in [-pi, pi]^dimension of
/// |sum_k w_k e^(i theta.o_k)| / |d|, sampled every pi/16 (every pi/8 in 3-D,
/// theta = 0 and pi included). At most 1, the sweeps do not grow the error on a
/// large grid (a Laplacian's smooth mode: 1); above 1 they diverge, the
/// iterate growing without bound. star4's is 1.2835 (its checkerboard mode);
/// a variable stencil's depends on its coefficients and is not computed (NaN).
HETSTENCIL_API double jacobi_growth(const Stencil& stencil);

/// Whether a growth from jacobi_growth() means the sweeps diverge: above 1, by
/// more than the rounding of a Laplacian's exact 1.
inline bool sweeps_diverge(double growth) { return growth > 1.0 + 1e-9; }

/// The names of the built-in stencils: poisson5, box9 (2-D); poisson7, box27, star4 (3-D).
HETSTENCIL_API std::vector<std::string> builtin_stencil_names();

/// The stencil of the JSON file at `path` (docs/stencils.md), validated. Throws
/// InvalidArgument naming the file and the field of the first thing wrong.
HETSTENCIL_API Stencil read_stencil(const std::string& path);
/// The stencil of the JSON text, validated; `origin` names it in messages.
HETSTENCIL_API Stencil parse_stencil(const std::string& json_text, const std::string& origin = "the stencil");
/// The stencil as JSON text, with its schema and version: parse_stencil() reads it back equal.
HETSTENCIL_API std::string stencil_json(const Stencil& stencil);
/// A built-in's name, or a path to a JSON file (a name that is not a built-in is read as a path).
HETSTENCIL_API Stencil stencil_named(const std::string& name_or_path);

}  // namespace hetstencil
