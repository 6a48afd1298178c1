// The model's two kinds of curve: how long a device takes for r rows, and how
// long a link takes for b bytes.
#pragma once

#include <cstdint>
#include <vector>

namespace hetstencil {

/// Rows sweep this many times slower a row past a cache's edge than inside it
/// (2x from the 300 MiB L3 of the GPU hosts to their memory), well above the
/// curves' noise: a rise between two points this steep is a cache's edge.
constexpr double kCacheStep = 1.5;

/// Seconds for one iteration over r rows of one width and precision, from a
/// few measured points. Between points: linear, after making the samples
/// non-decreasing in r (a device never gets faster with more rows), but across
/// a cache's edge (the later point's time a row kCacheStep times the earlier's
/// or more; calibration measures either side of the last-level cache's) at the
/// later point's pace, and past the last point at it too when that segment is
/// such an edge: a cache that others share holds less than its size, and rows
/// between the two sweep at the memory's pace on the GPU hosts. Below the
/// first point: towards the intercept of the first two points, clamped to
/// [0, first time] — near zero for a CPU, a floor for a GPU whose small slabs
/// under-fill it. Above the last point: the last segment's time per row.
class RateCurve {
 public:
  struct Point {
    std::int64_t rows = 0;
    double seconds = 0.0;
  };

  RateCurve() = default;
  explicit RateCurve(std::vector<Point> points);

  double seconds(std::int64_t rows) const;
  const std::vector<Point>& points() const { return points_; }
  /// The slowest time a row among its points of `rows` rows or more (0: it
  /// has none so large): the pace more rows settle at where these rows fit a
  /// cache that those outgrow.
  double slowest_row_s(std::int64_t rows) const;
  bool empty() const { return points_.empty(); }
  /// A copy with every time multiplied by `factor` (another width, say).
  RateCurve scaled(double factor) const;
  /// Folds in a measured time for `rows` rows: the nearest point moves by
  /// `weight` towards it, or a new point is added when none is within 25%.
  void update(std::int64_t rows, double seconds, double weight);

 private:
  std::vector<Point> points_;  // sorted by rows, non-decreasing seconds
};

/// latency + bytes / bandwidth, fitted to measured (bytes, seconds) samples.
struct TransferCurve {
  double latency_s = 0.0;
  double bytes_per_s = 0.0;

  double seconds(double bytes) const { return bytes <= 0 ? 0.0 : latency_s + bytes / bytes_per_s; }
  bool empty() const { return bytes_per_s <= 0.0; }
  /// Least squares on the samples, latency kept >= 0.
  static TransferCurve fit(const std::vector<std::pair<double, double>>& bytes_and_seconds);
};

}  // namespace hetstencil
