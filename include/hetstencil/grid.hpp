/// \file
/// A dense (ny+2) x (nx+2) row-major grid, boundary ring included.
#pragma once

#include <cstdint>
#include <vector>

namespace hetstencil {

/// A dense (ny+2) x (nx+2) row-major grid, boundary ring included. Thread
/// safety: a value, like std::vector: any number of threads may read one grid;
/// a thread that writes it needs it to itself.
template <class T>
class Grid {
 public:
  Grid() = default;
  /// A grid with ny x nx interior points, all values zero.
  Grid(std::int64_t ny, std::int64_t nx)
      : ny_(ny), nx_(nx), values_(static_cast<std::size_t>((ny + 2) * (nx + 2)), T(0)) {}

  /// Interior rows.
  std::int64_t ny() const { return ny_; }
  /// Interior points of a row.
  std::int64_t nx() const { return nx_; }
  /// Rows, boundary included: ny() + 2.
  std::int64_t rows() const { return ny_ + 2; }
  /// Values of a row, boundary included: nx() + 2.
  std::int64_t cols() const { return nx_ + 2; }

  /// The value at row i, column j (0 and rows()-1, cols()-1 are the boundary).
  T& operator()(std::int64_t i, std::int64_t j) { return values_[static_cast<std::size_t>(i * cols() + j)]; }
  /// The value at row i, column j (0 and rows()-1, cols()-1 are the boundary).
  const T& operator()(std::int64_t i, std::int64_t j) const {
    return values_[static_cast<std::size_t>(i * cols() + j)];
  }
  /// Row i's cols() values.
  T* row(std::int64_t i) { return values_.data() + i * cols(); }
  /// Row i's cols() values.
  const T* row(std::int64_t i) const { return values_.data() + i * cols(); }
  /// All rows() x cols() values, row-major.
  T* data() { return values_.data(); }
  /// All rows() x cols() values, row-major.
  const T* data() const { return values_.data(); }
  /// All rows() x cols() values, row-major.
  const std::vector<T>& values() const { return values_; }

 private:
  std::int64_t ny_ = 0;
  std::int64_t nx_ = 0;
  std::vector<T> values_;
};

}  // namespace hetstencil
