/// \file
/// A dense row-major grid, boundary ring included: 2-D, (ny+2d) x (nx+2d), or
/// 3-D, (nz+2d) x (ny+2d) x (nx+2d), with a ring d = the stencil's radius deep.
#pragma once

#include <cstdint>
#include <vector>

namespace hetstencil {

/// The sizes of a grid: its interior points along each axis and the depth of
/// its boundary ring. nz = 0 is a 2-D grid (one plane, no ring across planes).
struct GridShape {
  std::int64_t nz = 0;  ///< interior planes; 0 for a 2-D grid
  std::int64_t ny = 0;  ///< interior rows of a plane
  std::int64_t nx = 0;  ///< interior points of a row
  int depth = 1;        ///< values of boundary ring on each side (the stencil's radius)

  /// 2 or 3.
  int dimension() const { return nz > 0 ? 3 : 2; }
  /// Planes, boundary included: 1 in 2-D, nz + 2 depth in 3-D.
  std::int64_t planes() const { return nz > 0 ? nz + 2 * depth : 1; }
  /// Rows of a plane, boundary included.
  std::int64_t rows() const { return ny + 2 * depth; }
  /// Values of a row, boundary included.
  std::int64_t cols() const { return nx + 2 * depth; }
  /// All values, boundary included.
  std::int64_t values() const { return planes() * rows() * cols(); }
};

/// A dense row-major grid, boundary ring included (GridShape). Thread
/// safety: a value, like std::vector: any number of threads may read one grid;
/// a thread that writes it needs it to itself.
template <class T>
class Grid {
 public:
  Grid() = default;
  /// A 2-D grid with ny x nx interior points and a ring one value deep, all values zero.
  Grid(std::int64_t ny, std::int64_t nx) : Grid(GridShape{0, ny, nx, 1}) {}
  /// A grid of `shape`, all values zero.
  explicit Grid(const GridShape& shape)
      : shape_(shape), values_(static_cast<std::size_t>(shape.values()), T(0)) {}

  /// The grid's sizes.
  const GridShape& shape() const { return shape_; }
  /// Interior planes: 0 for a 2-D grid.
  std::int64_t nz() const { return shape_.nz; }
  /// Interior rows.
  std::int64_t ny() const { return shape_.ny; }
  /// Interior points of a row.
  std::int64_t nx() const { return shape_.nx; }
  /// Depth of the boundary ring.
  int depth() const { return shape_.depth; }
  /// Planes, boundary included: 1 for a 2-D grid.
  std::int64_t planes() const { return shape_.planes(); }
  /// Rows of a plane, boundary included: ny() + 2 depth().
  std::int64_t rows() const { return shape_.rows(); }
  /// Values of a row, boundary included: nx() + 2 depth().
  std::int64_t cols() const { return shape_.cols(); }

  /// The value at row i, column j of the first plane (in a 2-D grid with a
  /// ring one deep, 0 and rows()-1, cols()-1 are the boundary).
  T& operator()(std::int64_t i, std::int64_t j) { return values_[static_cast<std::size_t>(i * cols() + j)]; }
  /// The value at row i, column j of the first plane.
  const T& operator()(std::int64_t i, std::int64_t j) const {
    return values_[static_cast<std::size_t>(i * cols() + j)];
  }
  /// The value at plane k, row i, column j.
  T& operator()(std::int64_t k, std::int64_t i, std::int64_t j) {
    return values_[static_cast<std::size_t>((k * rows() + i) * cols() + j)];
  }
  /// The value at plane k, row i, column j.
  const T& operator()(std::int64_t k, std::int64_t i, std::int64_t j) const {
    return values_[static_cast<std::size_t>((k * rows() + i) * cols() + j)];
  }
  /// Row i's cols() values (of the first plane).
  T* row(std::int64_t i) { return values_.data() + i * cols(); }
  /// Row i's cols() values (of the first plane).
  const T* row(std::int64_t i) const { return values_.data() + i * cols(); }
  /// All planes() x rows() x cols() values, row-major.
  T* data() { return values_.data(); }
  /// All planes() x rows() x cols() values, row-major.
  const T* data() const { return values_.data(); }
  /// All planes() x rows() x cols() values, row-major.
  const std::vector<T>& values() const { return values_; }

 private:
  GridShape shape_;
  std::vector<T> values_;
};

}  // namespace hetstencil
